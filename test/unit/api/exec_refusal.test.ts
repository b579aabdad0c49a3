/**
 * An exec WebSocket the server refuses before the upgrade (it answers HTTP, not 101) rejects with
 * an ApiError carrying the answer's status, text and error code, for both the batch exec
 * (execInAlloc) and the terminal session (openTtySession); and the socket goes to the route with
 * the task, command and tty flag in its query.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiClient, ApiError, execInAlloc } from "../../../src/api/index.js";
import { openTtySession } from "../../../src/api/exec_session.js";
import { startFakeApi, type FakeApi } from "../../fakes/api.js";

let api: FakeApi;
let client: ApiClient;

before(async () => {
  api = await startFakeApi({
    "GET /v1/client/allocation/a%201/exec": {
      status: 403,
      text: "Permission denied\n",
      headers: { "X-Berth-Error-Code": "ERR_PERMISSION_DENIED" },
    },
  });
  client = new ApiClient({ address: api.address, namespace: "ns1", token: "tok" });
});

after(() => api.close());

const refused = (err: unknown): boolean => {
  assert.ok(err instanceof ApiError, String(err));
  assert.deepEqual([err.status, err.message, err.code], [403, "Permission denied", "ERR_PERMISSION_DENIED"]);
  return true;
};

describe("exec refused before the upgrade", () => {
  it("execInAlloc rejects with the server's ApiError", async () => {
    await assert.rejects(execInAlloc(client, "a 1", "web", ["ls", "-l"], Buffer.alloc(0)), refused);
    const sent = api.requests.at(-1)!;
    const url = new URL(sent.url, "http://x");
    assert.equal(url.pathname, "/v1/client/allocation/a%201/exec");
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      task: "web",
      command: '["ls","-l"]',
      tty: "false",
      namespace: "ns1",
    });
    assert.equal(sent.headers["x-nomad-token"], "tok");
  });

  it("openTtySession's done rejects with the server's ApiError", async () => {
    const session = openTtySession(client, "a 1", "web", ["sh"], {
      onStdout: () => undefined,
      onStderr: () => undefined,
    });
    await assert.rejects(session.done, refused);
    assert.equal(new URL(api.requests.at(-1)!.url, "http://x").searchParams.get("tty"), "true");
  });
});
