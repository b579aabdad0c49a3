/**
 * The web UI's files as the router serves them (ui_static.ts), from the bundle `npm run build`
 * made (dist/ui): Nomad's redirects, the SPA fallback, content types, caching, the CSP, and that
 * only the bundle's own names are served (a request path never becomes a file path).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { nullLogger } from "../../../src/internal/log.js";
import { createApiHandler } from "../../../src/server/http/api.js";
import type { Ctx, HttpEndpoints, Route } from "../../../src/server/request_ctx.js";
import { ERROR_CODE_HEADER, sendError } from "../../../src/server/wire/http_io.js";
import { DEFAULT_UI_DIR, UI_CSP, uiRoutes } from "../../../src/server/http/ui_static.js";

async function withServer(
  handler: http.RequestListener,
  fn: (address: string) => Promise<void>,
): Promise<void> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}

/** The router with no endpoints: the UI's routes need none. */
const router = () => createApiHandler({} as HttpEndpoints, nullLogger);

/** A bare route behind a tiny server (for a bundle dir of the test's own). */
function serveRoute(route: Route): http.RequestListener {
  return (req, res) => {
    const ctx: Ctx = {
      req,
      res,
      params: {},
      query: new URLSearchParams(),
      signal: new AbortController().signal,
    };
    route(ctx, {} as HttpEndpoints).catch((err: unknown) => sendError(res, err));
  };
}

test("the bundle is built: index.html names a hashed script and style sheet that exist", () => {
  const html = fs.readFileSync(path.join(DEFAULT_UI_DIR, "index.html"), "utf8");
  const names = [...html.matchAll(/\/ui\/assets\/([^"]+)"/g)].map((m) => m[1]!);
  assert.equal(names.length, 2, html);
  for (const n of names) {
    assert.match(n, /^main-[A-Z0-9]{8}\.(js|css)$/);
    assert.ok(fs.existsSync(path.join(DEFAULT_UI_DIR, "assets", n)), n);
  }
});

test("GET / redirects to /ui/ (307, the query kept) and /ui to /ui/, as Nomad's agent", async () => {
  await withServer(router(), async (address) => {
    const root = await fetch(`${address}/`, { redirect: "manual" });
    assert.equal(root.status, 307);
    assert.equal(root.headers.get("location"), "/ui/");
    const q = await fetch(`${address}/?namespace=prod&region=global`, { redirect: "manual" });
    assert.equal(q.headers.get("location"), "/ui/?namespace=prod&region=global");
    const ui = await fetch(`${address}/ui`, { redirect: "manual" });
    assert.equal(ui.status, 301);
    assert.equal(ui.headers.get("location"), "/ui/");
    // Other paths outside /v1 and /ui stay the router's 404.
    const other = await fetch(`${address}/favicon.ico`);
    assert.equal(other.status, 404);
    assert.equal(other.headers.get(ERROR_CODE_HEADER), "ERR_NOT_FOUND");
  });
});

test("every page path answers index.html with the CSP, revalidated by ETag", async () => {
  const index = fs.readFileSync(path.join(DEFAULT_UI_DIR, "index.html"), "utf8");
  await withServer(router(), async (address) => {
    for (const p of [
      "/ui/",
      "/ui/jobs",
      "/ui/storage/volumes/csi/demo@default",
      "/ui/allocations/x/writer?x=1",
    ]) {
      const res = await fetch(address + p);
      assert.equal(res.status, 200, p);
      assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
      assert.equal(res.headers.get("cache-control"), "no-cache");
      assert.equal(res.headers.get("content-security-policy"), UI_CSP);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      assert.equal(res.headers.get("x-frame-options"), "DENY");
      assert.equal(await res.text(), index, p);
    }
    const first = await fetch(`${address}/ui/`);
    const etag = first.headers.get("etag")!;
    assert.ok(etag);
    const again = await fetch(`${address}/ui/jobs`, { headers: { "If-None-Match": etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), "");
  });
  assert.match(UI_CSP, /default-src 'none'/);
  for (const d of ["script-src", "style-src", "connect-src", "img-src"]) {
    assert.match(UI_CSP, new RegExp(`${d} 'self'(;|$)`), `${d} allows only self`);
  }
  assert.match(UI_CSP, /frame-ancestors 'none'/);
});

test("assets answer with their type and a year's immutable cache; unknown names are 404, never files", async () => {
  const assets = fs.readdirSync(path.join(DEFAULT_UI_DIR, "assets"));
  await withServer(router(), async (address) => {
    for (const name of assets) {
      const res = await fetch(`${address}/ui/assets/${name}`);
      assert.equal(res.status, 200, name);
      const type = name.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8";
      assert.equal(res.headers.get("content-type"), type, name);
      assert.equal(res.headers.get("cache-control"), "public, max-age=31536000, immutable");
      const body = Buffer.from(await res.arrayBuffer());
      assert.ok(body.equals(fs.readFileSync(path.join(DEFAULT_UI_DIR, "assets", name))), name);
    }
    for (const p of [
      "/ui/assets/nope.js",
      "/ui/assets/../index.html",
      "/ui/assets/..%2f..%2f..%2fpackage.json",
      "/ui/assets/%2e%2e/%2e%2e/package.json",
      "/ui/assets/",
    ]) {
      const res = await fetch(address + p);
      // `..` segments are resolved by the client or the router: what is left is a page or a 404.
      if (res.status === 200) assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8", p);
      else {
        assert.equal(res.status, 404, p);
        assert.equal(res.headers.get(ERROR_CODE_HEADER), "ERR_NOT_FOUND", p);
      }
      assert.doesNotMatch(await res.text(), /"name": "berth"/, `${p} never reads a file outside the bundle`);
    }
    const missing = await fetch(`${address}/ui/assets/nope.js`);
    assert.equal(missing.status, 404);
    assert.match(await missing.text(), /no UI asset at "\/ui\/assets\/nope\.js"/);
  });
});

test("without a built bundle the UI answers 404 saying how to build it", async () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), "berth-no-ui-"));
  try {
    await withServer(serveRoute(uiRoutes(empty).ui), async (address) => {
      const res = await fetch(`${address}/ui/jobs`);
      assert.equal(res.status, 404);
      assert.equal(res.headers.get(ERROR_CODE_HEADER), "ERR_NOT_FOUND");
      assert.match(await res.text(), /web UI is not in this build.*npm run build/);
    });
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
});
