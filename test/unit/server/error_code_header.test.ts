/**
 * Every HTTP error answer carries its stable code in X-Berth-Error-Code (the body stays Nomad's
 * plain text), and the API client hands it to callers as ApiError.code, so the CLI branches on the
 * code, never on the status or the text.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ApiClient, ApiError } from "../../../src/api/index.js";
import { ERROR_CODE_HEADER, sendError } from "../../../src/server/wire/http_io.js";
import { BerthError } from "../../../src/structs/errors.js";

test("an error answer carries its code in a header; the client exposes it", async () => {
  const server = http.createServer((_req, res) =>
    sendError(res, new BerthError("ERR_CSI_NOT_SUPPORTED", 'plugin "p" does not support ListSnapshots')),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const res = await fetch(`${address}/v1/volumes/snapshot?plugin_id=p`);
    assert.equal(res.status, 400);
    assert.equal(res.headers.get(ERROR_CODE_HEADER), "ERR_CSI_NOT_SUPPORTED");
    assert.equal(await res.text(), 'plugin "p" does not support ListSnapshots\n');
    await assert.rejects(
      new ApiClient({ address }).volumes.listSnapshots("p"),
      (e: unknown) => e instanceof ApiError && e.status === 400 && e.code === "ERR_CSI_NOT_SUPPORTED",
    );
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});
