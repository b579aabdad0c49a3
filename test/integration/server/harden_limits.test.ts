/**
 * Request limits and bind-address honesty on an in-process server over real loopback HTTP: a body
 * over 8 MiB is a 413 naming the limit on any route, announced (Content-Length) or streamed
 * (chunked), and changes nothing; an over-long path segment is a 400 naming the URL, not a 404;
 * oversized headers are Node's 431. The start log names the address really bound (0.0.0.0 when the
 * wildcard is bound) and warns loudly when that is beyond loopback with ACLs off.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { Server } from "../../../src/server/server.js";
import { nullLogger, type Logger } from "../../../src/internal/log.js";
import { MAX_BODY_BYTES } from "../../../src/server/wire/body_limit.js";

async function start(
  t: { after(fn: () => unknown): void },
  opts: { addr?: string; log?: Logger; acl?: boolean } = {},
) {
  const server = new Server({
    dataDir: null,
    httpAddr: opts.addr ?? "127.0.0.1:0",
    log: opts.log ?? nullLogger,
    heartbeatTtlMs: 60_000,
    ...(opts.acl ? { acl: { enabled: true } } : {}),
  });
  await server.start();
  t.after(() => server.stop());
  return server;
}

function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  chunks: Buffer[] = [],
): Promise<{ status: number; code: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    // A fresh connection each: the DELETE below announces a body it never sends, which would
    // swallow the next request on a kept-alive connection.
    const req = request(base + path, { method, headers, agent: false }, (res) => {
      answered = true;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          code: res.headers["x-berth-error-code"] as string | undefined,
          text,
        }),
      );
    });
    // The server may answer before the whole body is sent: that is the point.
    req.on("error", (err) => (answered ? undefined : reject(err)));
    for (const c of chunks) req.write(c);
    req.end();
  });
}

/** A valid JSON volume registration padded past the limit with a long string field. */
function bigVolumeBody(): Buffer {
  const pad = "x".repeat(MAX_BODY_BYTES + 1024);
  return Buffer.from(
    JSON.stringify({
      Volumes: [{ ID: "big", Name: "big", PluginID: "p", ExternalID: "e", Description: pad }],
    }),
  );
}

test("a body over the limit is 413 naming the limit, announced or chunked, on any route; nothing changes", async (t) => {
  const server = await start(t);
  const base = server.httpAddress;
  const body = bigVolumeBody();
  const before = await (await fetch(`${base}/v1/volumes`)).text();

  const announced = await send(
    base,
    "PUT",
    "/v1/volumes",
    {
      "Content-Type": "application/json",
      "Content-Length": String(body.length),
    },
    [body],
  );
  assert.equal(announced.status, 413, announced.text);
  assert.equal(announced.code, "ERR_REQUEST_TOO_LARGE");
  assert.match(announced.text, /request body is larger than the limit of 8388608 bytes/);

  // Chunked: no Content-Length, so the route's reader stops it as it passes the limit.
  const chunks: Buffer[] = [];
  for (let i = 0; i < body.length; i += 1 << 20) chunks.push(body.subarray(i, i + (1 << 20)));
  const chunked = await send(base, "PUT", "/v1/volumes", { "Content-Type": "application/json" }, chunks);
  assert.equal(chunked.status, 413, chunked.text);
  assert.equal(chunked.code, "ERR_REQUEST_TOO_LARGE");

  // A route that reads no body still refuses an announced oversized one.
  const onGet = await send(base, "DELETE", "/v1/job/nope", { "Content-Length": String(MAX_BODY_BYTES + 1) });
  assert.equal(onGet.status, 413);

  assert.equal(await (await fetch(`${base}/v1/volumes`)).text(), before, "nothing registered");
  // Just under the limit is read (and judged on its content).
  const under = await send(base, "PUT", "/v1/volumes", { "Content-Type": "application/json" }, [
    Buffer.from(JSON.stringify({ Volumes: [{ ID: "v", Description: "y".repeat(MAX_BODY_BYTES - 200) }] })),
  ]);
  assert.equal(under.status, 400, under.text);
  assert.equal(under.code, "ERR_VALIDATION");
});

test("an over-long ID in the path is a 400 naming the URL; oversized headers are 431", async (t) => {
  const server = await start(t);
  const base = server.httpAddress;
  const long = await send(base, "GET", `/v1/volume/csi/${"a".repeat(600)}`, {});
  assert.equal(long.status, 400, long.text);
  assert.equal(long.code, "ERR_VALIDATION");
  assert.match(long.text, /url: a path segment is longer than 512 characters/);
  const id200 = await send(base, "GET", `/v1/volume/csi/${"a".repeat(200)}`, {});
  assert.equal(id200.status, 400);
  assert.match(id200.text, /at most 128 characters/);
  const headers = await send(base, "GET", "/v1/jobs", { "X-Big": "h".repeat(20_000) });
  assert.equal(headers.status, 431);
});

function recording(lines: string[]): Logger {
  const rec =
    (lvl: string) =>
    (m: string, f?: Record<string, unknown>): void => {
      lines.push(`${lvl} ${m} ${JSON.stringify(f ?? {})}`);
    };
  const log: Logger = {
    debug: rec("debug"),
    info: rec("info"),
    warn: rec("warn"),
    error: rec("error"),
    child: () => log,
  };
  return log;
}

test("the start log names the address really bound; beyond loopback without ACLs it warns loudly", async (t) => {
  const wild: string[] = [];
  const s1 = await start(t, { addr: "0.0.0.0:0", log: recording(wild) });
  const port = s1.boundAddress.split(":").pop();
  assert.equal(s1.boundAddress, `0.0.0.0:${port}`);
  const started = wild.find((l) => l.startsWith("info server started"));
  assert.match(started ?? "", new RegExp(`"http_bind":"0\\.0\\.0\\.0:${port}"`));
  assert.doesNotMatch(started ?? "", /127\.0\.0\.1/, "the log does not claim loopback");
  const warning = wild.find((l) => l.startsWith("warn WARNING"));
  assert.match(warning ?? "", /listen on 0\.0\.0\.0:\d+ \(every network interface\) with ACLs disabled/);
  // Its own client still dials it on loopback.
  assert.equal((await fetch(`${s1.httpAddress}/v1/jobs`)).status, 200);

  const loop: string[] = [];
  await start(t, { log: recording(loop) });
  assert.equal(loop.filter((l) => l.startsWith("warn")).length, 0, "no warning on loopback");
  const acl: string[] = [];
  await start(t, { addr: "0.0.0.0:0", log: recording(acl), acl: true });
  assert.equal(acl.filter((l) => l.includes("WARNING")).length, 0, "no warning with ACLs on");
});
