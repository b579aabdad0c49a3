/**
 * Reads never starve writes (issue 10: with clients polling lists, 50 job submits took 20× as
 * long). An in-process Server on loopback gets, in one burst, 8 list reads and then one job
 * submit, each on its own connection. Which reads were answered before the submit was stored is
 * read off their answers: X-Nomad-Index is the jobs table's index when the read ran, so a read
 * below the submit's JobModifyIndex ran first. Before reads took turns, every read queued ahead of
 * the write ran first (8 of 8); now the write goes first and at most one read slips ahead. Order
 * is asserted, not time (bench/read_load.ts measures the time).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { rawConnect } from "./conn_client.js";

const READS = 8;

test("a write that arrives behind a burst of reads is stored before all but at most one of them", async () => {
  const s = new Server({ dataDir: null, httpAddr: "127.0.0.1:0", log: nullLogger });
  await s.start();
  try {
    const port = Number(new URL(s.httpAddress).port);
    const readers = await Promise.all(Array.from({ length: READS }, () => rawConnect(port, "127.0.0.2")));
    const writer = await rawConnect(port, "127.0.0.3");
    const body = JSON.stringify({
      Job: {
        ID: "w",
        TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", Config: { command: "/bin/true" } }] }],
      },
    });
    // A first job, so the index a read reports before the burst is a real one (not the floor of 1).
    const first = await fetch(`${s.httpAddress}/v1/jobs`, {
      method: "PUT",
      body: body.replace('"ID":"w"', '"ID":"first"'),
    });
    assert.equal(first.status, 200, await first.text());
    // One synchronous burst: the server sees every request in the same turn, reads first.
    for (const r of readers) r.socket.write("GET /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    writer.socket.write(
      `PUT /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const answer = await writer.closed;
    assert.match(answer, /^HTTP\/1\.1 200 /, answer);
    const stored = Number(/"JobModifyIndex":(\d+)/.exec(answer)?.[1]);
    const seen = await Promise.all(
      readers.map(async (r) => Number(/X-Nomad-Index: (\d+)/i.exec(await r.closed)?.[1] ?? NaN)),
    );
    assert.ok(seen.every(Number.isInteger), `every read answered with an index: ${seen.join(", ")}`);
    const ahead = seen.filter((i) => i < stored).length;
    assert.ok(
      ahead <= 1,
      `${ahead} of ${READS} reads ran before the write was stored (indexes ${seen.join(", ")}, write ${stored})`,
    );
  } finally {
    await s.stop();
  }
});
