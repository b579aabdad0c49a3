/**
 * The client agent's reverse proxy (agent/http_forward.ts) between two real loopback listeners: the
 * request arrives as sent (method, path and query, the token header, the body streamed) without
 * hop-by-hop headers, the answer comes back with its status and headers and its body as it is
 * written (a chunk is readable before the answer ends); no server → 503 ERR_RPC_UNAVAILABLE.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { endToEndHeaders, forwardRequest } from "../../../src/agent/http_forward.js";

async function listen(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const s = http.createServer(handler);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

test("endToEndHeaders drops hop-by-hop headers and those Connection names", () => {
  assert.deepEqual(
    endToEndHeaders({
      connection: "keep-alive, x-hop",
      "keep-alive": "timeout=5",
      "transfer-encoding": "chunked",
      upgrade: "websocket",
      "x-hop": "1",
      "x-nomad-token": "secret",
      "content-type": "application/json",
    }),
    { "x-nomad-token": "secret", "content-type": "application/json" },
  );
});

test("a request and its answer pass through, streamed both ways", async (t) => {
  let seen: { method?: string; url?: string; token?: string; hop?: string; body?: string } = {};
  let release: () => void = () => undefined;
  const upstream = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen = {
        method: req.method,
        url: req.url,
        token: req.headers["x-nomad-token"] as string,
        hop: req.headers["x-hop"] as string | undefined,
        body: Buffer.concat(chunks).toString(),
      };
      res.writeHead(201, { "X-Nomad-Index": "42", "Content-Type": "text/plain" });
      res.write("first;");
      // The rest only once the caller has read the first chunk: the answer must stream.
      release = () => res.end("rest");
    });
  });
  t.after(() => upstream.close());
  const proxy = await listen((req, res) => void forwardRequest(req, res, upstream.url, undefined));
  t.after(() => proxy.close());
  // node:http, not fetch: fetch refuses to send a Connection header.
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.request(`${proxy.url}/v1/jobs?namespace=a&prefix=x`, {
      method: "PUT",
      headers: { "X-Nomad-Token": "tok", Connection: "x-hop", "X-Hop": "1" },
    });
    req.on("response", resolve);
    req.on("error", reject);
    req.end('{"Job":{}}');
  });
  assert.equal(res.statusCode, 201);
  assert.equal(res.headers["x-nomad-index"], "42");
  const chunks = res[Symbol.asyncIterator]();
  const first = await chunks.next();
  assert.equal(String(first.value), "first;");
  release();
  let rest = "";
  for (let r = await chunks.next(); r.done !== true; r = await chunks.next()) rest += String(r.value);
  assert.equal(rest, "rest");
  assert.deepEqual(seen, {
    method: "PUT",
    url: "/v1/jobs?namespace=a&prefix=x",
    token: "tok",
    hop: undefined,
    body: '{"Job":{}}',
  });
});

test("no server answering is 503 ERR_RPC_UNAVAILABLE", async (t) => {
  const gone = await listen(() => undefined);
  await gone.close();
  const proxy = await listen((req, res) => void forwardRequest(req, res, gone.url, undefined));
  t.after(() => proxy.close());
  const res = await fetch(`${proxy.url}/v1/jobs`);
  assert.equal(res.status, 503);
  assert.equal(res.headers.get("x-berth-error-code"), "ERR_RPC_UNAVAILABLE");
  assert.match(await res.text(), /no server answered/);
});
