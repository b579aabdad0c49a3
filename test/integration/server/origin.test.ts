/**
 * The browser perimeter (server/http/origin.ts) on an in-process server over real loopback HTTP and
 * WebSockets: a page's cross-origin write (the issue's `text/plain` POST) and its WebSocket (agent
 * RPC, exec) are refused before anything runs, while clients that send no Origin (the CLI, Nomad's
 * Go api, node agents) work as before; an origin the agent config allows may write with JSON after
 * a preflight, never with a preflight-free simple content type.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { WebSocket } from "ws";
import { Server } from "../../../src/server/server.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { HttpApiSettings } from "../../../src/server/http/origin.js";
import { makeNode } from "../../builders/node.js";
import { connectAgent } from "./fake_agent.js";

const EVIL = "http://evil.example";
const UI = "https://ui.example:8443";

async function start(t: { after(fn: () => unknown): void }, httpApi?: HttpApiSettings): Promise<string> {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
    ...(httpApi ? { httpApi } : {}),
  });
  await server.start();
  t.after(() => server.stop());
  return server.httpAddress;
}

/** A raw request through node:http, so the test controls every header (fetch adds its own). */
function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = "",
): Promise<{ status: number; code: string | undefined; text: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, { method, headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          code: res.headers["x-berth-error-code"] as string | undefined,
          text,
          headers: res.headers,
        }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

const job = (id: string) =>
  JSON.stringify({ Job: { ID: id, TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] } });

async function jobIds(base: string): Promise<string[]> {
  const r = await raw(base, "GET", "/v1/jobs", {});
  return (JSON.parse(r.text) as { ID: string }[]).map((j) => j.ID);
}

/** Opens a WebSocket; answers "open" or the refusal's status and body. */
function ws(url: string, origin?: string): Promise<{ opened: boolean; status?: number; body?: string }> {
  return new Promise((resolve, reject) => {
    const sock = new WebSocket(url, origin === undefined ? {} : { origin });
    sock.once("open", () => {
      sock.close();
      resolve({ opened: true });
    });
    sock.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ opened: false, status: res.statusCode ?? 0, body }));
    });
    sock.once("error", reject);
  });
}

test("a page's cross-origin text/plain POST is refused before it runs; the same POST with no Origin works", async (t) => {
  const base = await start(t);
  const refused = await raw(
    base,
    "POST",
    "/v1/jobs",
    { Origin: EVIL, "Content-Type": "text/plain" },
    job("evil"),
  );
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.code, "ERR_PERMISSION_DENIED");
  assert.match(
    refused.text,
    /cross-origin request refused: Origin "http:\/\/evil.example" may not send POST/,
  );
  assert.match(refused.text, /http_api_response_headers/);
  for (const method of ["PUT", "DELETE"]) {
    const r = await raw(
      base,
      method,
      "/v1/job/evil",
      { Origin: EVIL, "Content-Type": "application/json" },
      job("evil"),
    );
    assert.equal(r.status, 403, `${method}: ${r.text}`);
  }
  // A form post or a preflight from the page is refused the same way.
  const form = await raw(base, "POST", "/v1/jobs", {
    Origin: "null",
    "Content-Type": "application/x-www-form-urlencoded",
  });
  assert.equal(form.status, 403);
  const preflight = await raw(base, "OPTIONS", "/v1/jobs", {
    Origin: EVIL,
    "Access-Control-Request-Method": "PUT",
  });
  assert.equal(preflight.status, 403);
  assert.deepEqual(await jobIds(base), [], "nothing was registered");

  // Reads with an Origin are answered (without CORS headers the page cannot read them).
  const read = await raw(base, "GET", "/v1/jobs", { Origin: EVIL });
  assert.equal(read.status, 200);
  assert.equal(read.headers["access-control-allow-origin"], undefined);

  const ok = await raw(base, "POST", "/v1/jobs", { "Content-Type": "text/plain" }, job("cli"));
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(await jobIds(base), ["cli"]);
});

test("WebSockets from a browser origin are refused on the agent RPC and exec paths; agents (no Origin) connect", async (t) => {
  const base = await start(t);
  const wsBase = base.replace("http://", "ws://");
  const rpc = await ws(`${wsBase}/v1/agent/rpc`, EVIL);
  assert.deepEqual([rpc.opened, rpc.status], [false, 403]);
  assert.match(rpc.body ?? "", /Origin "http:\/\/evil.example" may not open WebSockets/);
  const exec = await ws(`${wsBase}/v1/client/allocation/a1/exec?task=t&command=%5B%22id%22%5D`, EVIL);
  assert.deepEqual([exec.opened, exec.status], [false, 403]);

  const peer = await connectAgent(base);
  t.after(() => peer.close());
  assert.ok(await peer.call("Node.Register", { Node: makeNode("n1") }));
  assert.equal((await ws(`${wsBase}/v1/agent/rpc`)).opened, true);
});

test("an allowed origin: headers on every answer, preflight answered, JSON writes pass, simple types refused", async (t) => {
  const base = await start(t, {
    responseHeaders: { "Access-Control-Allow-Origin": UI },
    allowedOrigins: [UI],
  });
  const read = await raw(base, "GET", "/v1/jobs", {});
  assert.equal(read.headers["access-control-allow-origin"], UI, "Nomad's http_api_response_headers");

  const pre = await raw(base, "OPTIONS", "/v1/jobs", { Origin: UI, "Access-Control-Request-Method": "PUT" });
  assert.equal(pre.status, 204);
  assert.match(String(pre.headers["access-control-allow-methods"]), /PUT/);
  assert.match(String(pre.headers["access-control-allow-headers"]), /X-Nomad-Token/);

  const plain = await raw(
    base,
    "POST",
    "/v1/jobs",
    { Origin: UI, "Content-Type": "text/plain;charset=UTF-8" },
    job("a"),
  );
  assert.equal(plain.status, 403, plain.text);
  assert.match(
    plain.text,
    /Content-Type "text\/plain" refused: a browser sends that without a CORS preflight/,
  );
  const none = await raw(base, "POST", "/v1/jobs", { Origin: UI }, job("a"));
  assert.equal(none.status, 403, "a missing Content-Type is a preflight-free request too");
  assert.deepEqual(await jobIds(base), []);

  const json = await raw(
    base,
    "PUT",
    "/v1/jobs",
    { Origin: UI, "Content-Type": "application/json" },
    job("ui"),
  );
  assert.equal(json.status, 200, json.text);
  assert.deepEqual(await jobIds(base), ["ui"]);

  const other = await raw(
    base,
    "PUT",
    "/v1/jobs",
    { Origin: EVIL, "Content-Type": "application/json" },
    job("x"),
  );
  assert.equal(other.status, 403, "only the configured origin");
  const wsBase = base.replace("http://", "ws://");
  assert.equal((await ws(`${wsBase}/v1/agent/rpc`, EVIL)).status, 403);
  assert.equal((await ws(`${wsBase}/v1/agent/rpc`, UI)).opened, true);
});
