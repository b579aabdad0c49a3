/**
 * List answers for callers that accept gzip (as Nomad's Go API client always does): an in-process
 * server on loopback with a real SQLite file, raw HTTP (no client that decompresses on its own).
 * A big list comes gzipped and inflates to exactly the bytes a caller without Accept-Encoding
 * gets; `q=0` refuses gzip; a small answer goes as it is.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { gunzipSync } from "node:zlib";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { acceptsGzip } from "../../../src/server/http/list_cache.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent } from "../server/fake_agent.js";

function get(url: string, headers: Record<string, string>) {
  return new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on("error", reject);
  });
}

test("Accept-Encoding parsing: gzip, *, and q=0", () => {
  assert.equal(acceptsGzip("gzip"), true);
  assert.equal(acceptsGzip("deflate, gzip;q=0.5"), true);
  assert.equal(acceptsGzip("*"), true);
  assert.equal(acceptsGzip("gzip;q=0"), false);
  assert.equal(acceptsGzip("br, deflate"), false);
  assert.equal(acceptsGzip(undefined), false);
});

test("a big list is gzipped once asked, and inflates to the plain answer", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-gzip-"));
  const server = new Server({
    dataDir: dir,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
  });
  await server.start();
  const peer = await connectAgent(server.httpAddress);
  t.after(async () => {
    peer.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const base = server.httpAddress;
  await peer.call("Node.Register", {
    Node: makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }),
  });
  const Volumes = Array.from({ length: 40 }, (_, i) => ({
    ID: `vol-${i}`,
    PluginID: "p1",
    ExternalID: `ext-${i}`,
    RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
  }));
  const res = await fetch(`${base}/v1/volumes`, { method: "PUT", body: JSON.stringify({ Volumes }) });
  assert.equal(res.status, 200, await res.text());

  const route = `${base}/v1/volumes?type=csi`;
  const plain = await get(route, {});
  assert.equal(plain.headers["content-encoding"], undefined);
  assert.ok(plain.body.length > 1024);
  const zipped = await get(route, { "Accept-Encoding": "gzip" });
  assert.equal(zipped.headers["content-encoding"], "gzip");
  assert.equal(zipped.headers.vary, "Accept-Encoding");
  assert.equal(zipped.headers["x-nomad-index"], plain.headers["x-nomad-index"]);
  assert.ok(zipped.body.length < plain.body.length / 4, "a list compresses well");
  assert.deepEqual(gunzipSync(zipped.body), plain.body);

  const refused = await get(route, { "Accept-Encoding": "gzip;q=0" });
  assert.equal(refused.headers["content-encoding"], undefined);
  assert.deepEqual(refused.body, plain.body);

  const small = await get(`${route}&per_page=1`, { "Accept-Encoding": "gzip" });
  assert.equal(small.headers["content-encoding"], undefined, "a small answer goes as it is");
  assert.equal(JSON.parse(small.body.toString()).length, 1);
});
