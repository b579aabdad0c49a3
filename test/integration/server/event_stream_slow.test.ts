/**
 * A reader that stops reading, over real HTTP on loopback: the server keeps only its bounded event
 * buffer for it, and once the buffer drops an index the reader has not received, the server drops
 * the connection (Nomad: "event dropped from buffer") instead of queueing events for it. A reader
 * that keeps up on another connection gets every index meanwhile.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { http as call } from "./fake_agent.js";
import { endedWithin, eventFrames, hasEvent, openStream, type OpenStream } from "./event_client.js";

const JOBS = 60;
/** ~200 KB of job meta: 60 job events are ~12 MB, far more than the loopback socket buffers hold. */
const meta = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "x".repeat(4096)]));

test("a reader that stops reading is cut off when the buffer drops what it has not read; one that reads gets everything", async (t) => {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    events: { bufferSize: 16 },
  });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;

  // The slow reader: headers read, then the body left unread.
  let received = 0;
  const slow = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.get(`${base}/v1/event/stream?topic=Job`, (res) => {
      res.pause();
      resolve(res);
    });
    req.on("error", reject);
    t.after(() => req.destroy());
  });
  assert.equal(slow.statusCode, 200);
  const slowClosed = new Promise<void>((resolve) => slow.socket.once("close", () => resolve()));
  const fast: OpenStream = await openStream(base, "?topic=Job");
  t.after(() => fast.close());

  for (let i = 0; i < JOBS; i++) {
    const job = {
      ID: `j${i}`,
      Meta: meta,
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }],
    };
    const res = await call(base, "PUT", "/v1/jobs", { Job: job });
    assert.equal(res.status, 200, res.text);
  }
  await fast.waitFor(hasEvent("JobRegistered", `j${JOBS - 1}`));
  const jobsSeen = new Set(eventFrames(fast).flatMap((f) => f.Events.map((e) => e.Key)));
  assert.equal(jobsSeen.size, JOBS, "the reader that keeps up misses nothing");

  // Now read what the slow one was sent: the server has dropped it, so its stream ends short.
  slow.on("data", (chunk: Buffer) => (received += chunk.length));
  slow.on("error", () => undefined);
  slow.resume();
  await endedWithin({ ended: slowClosed } as OpenStream);
  const sent = fast.text.length;
  assert.ok(received < sent, `the slow reader got ${received} of ${sent} bytes before it was cut off`);
});
