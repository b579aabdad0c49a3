/**
 * The open-file limit's connection cap (internal/fd_limit.ts, http/conn_limits.ts): the limit is
 * read from /proc's format, the server says its cap at start, and past the cap a connection is
 * answered 503 with the reason and closed while the ones it holds keep working. Real HTTP on
 * loopback.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { connectionAllowance, parseOpenFileLimit } from "../../../src/internal/fd_limit.js";
import { ConnLimiter, connectionCap, DEFAULT_CONN_LIMITS } from "../../../src/server/http/conn_limits.js";
import { nullLogger, type Logger } from "../../../src/internal/log.js";

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             63706                63706                processes
Max open files            1024                 4096                 files
Max locked memory         8388608              8388608              bytes
`;

test("open-file limit: read from /proc's format; the allowance keeps descriptors for files", () => {
  assert.deepEqual(parseOpenFileLimit(LIMITS), { soft: 1024, hard: 4096 });
  assert.equal(parseOpenFileLimit("Max open files  unlimited unlimited files"), undefined);
  assert.equal(connectionAllowance({ soft: 1024, hard: 1024 }), 768);
  assert.equal(connectionAllowance({ soft: 1_048_576, hard: 1_048_576 }), 917_504);
  assert.equal(connectionAllowance(undefined), 0);
  const said: string[] = [];
  const log = { ...nullLogger, warn: (m: string) => said.push(m), child: () => log } as unknown as Logger;
  assert.equal(connectionCap(log, { soft: 1024, hard: 1024 }), 768);
  assert.match(said[0] ?? "", /open-file limit 1024: this server takes at most 768 connections/);
});

test("past maxOpenConns a connection is answered 503 with the reason; held ones keep working", async (t) => {
  const limiter = new ConnLimiter({ ...DEFAULT_CONN_LIMITS, maxOpenConns: 2 }, nullLogger);
  const server = http.createServer(limiter.serverOptions(), (_req, res) => res.end("ok"));
  limiter.attach(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  t.after(() => {
    agent.destroy();
    limiter.close();
    server.close();
  });
  const get = () =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      http
        .get({ host: "127.0.0.1", port, agent }, (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        })
        .on("error", reject);
    });
  // Two kept-alive connections hold the cap.
  assert.deepEqual(await Promise.all([get(), get()]).then((r) => r.map((x) => x.status)), [200, 200]);
  const third = await new Promise<string>((resolve) => {
    const s = net.connect(port, "127.0.0.1", () => s.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    let text = "";
    s.on("data", (c: Buffer) => (text += c.toString()));
    s.on("close", () => resolve(text));
  });
  assert.match(third, /^HTTP\/1.1 503 /);
  assert.match(third, /open-file limit/);
  assert.equal((await get()).status, 200, "the held connections still answer");
});
