/**
 * The router's own answers (no route, wrong method, malformed URL) go through the same error path
 * as the routes: the status from the one map and the code in X-Berth-Error-Code; the body stays
 * Nomad's plain text.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { nullLogger } from "../../../src/internal/log.js";
import { createApiHandler } from "../../../src/server/http/api.js";
import type { HttpEndpoints } from "../../../src/server/request_ctx.js";
import { ERROR_CODE_HEADER } from "../../../src/server/wire/http_io.js";

async function withRouter(fn: (address: string) => Promise<void>): Promise<void> {
  // No route below reaches an endpoint, so none is needed.
  const server = http.createServer(createApiHandler({} as HttpEndpoints, nullLogger));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}

test("an unknown path answers 404 ERR_NOT_FOUND with Nomad's text", async () => {
  await withRouter(async (address) => {
    const res = await fetch(`${address}/v1/nope`);
    assert.equal(res.status, 404);
    assert.equal(res.headers.get(ERROR_CODE_HEADER), "ERR_NOT_FOUND");
    assert.equal(await res.text(), "no route for GET /v1/nope\n");
  });
});

test("a known path with the wrong method answers 405 ERR_METHOD_NOT_ALLOWED", async () => {
  await withRouter(async (address) => {
    const res = await fetch(`${address}/v1/jobs`, { method: "DELETE" });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get(ERROR_CODE_HEADER), "ERR_METHOD_NOT_ALLOWED");
    assert.equal(await res.text(), "no route for DELETE /v1/jobs\n");
  });
});

test("a malformed URL answers 400 ERR_VALIDATION", async () => {
  await withRouter(async (address) => {
    const res = await fetch(`${address}/v1/job/%E0%A4%A`);
    assert.equal(res.status, 400);
    assert.equal(res.headers.get(ERROR_CODE_HEADER), "ERR_VALIDATION");
    assert.match(await res.text(), /^malformed URL /);
  });
});
