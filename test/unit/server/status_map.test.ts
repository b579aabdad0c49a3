/**
 * The code → HTTP status map is total (every code, nothing else) and answers what Nomad would:
 * 400 for bad input, 404 for a missing object, 403 for a denied caller, 409 when the object's state
 * refuses, 501/503/504 for a plugin or link that cannot serve, and 500 only for internal failures.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ERROR_CODES, type ErrorCode } from "../../../src/structs/errors.js";
import { HTTP_STATUS, statusOf } from "../../../src/server/wire/status_map.js";

const EXPECTED: Record<number, ErrorCode[]> = {
  400: [
    "ERR_VALIDATION",
    "ERR_ACL_DISABLED",
    "ERR_CSI_INVALID_ARGUMENT",
    "ERR_CSI_OUT_OF_RANGE",
    "ERR_CSI_NOT_SUPPORTED",
  ],
  403: ["ERR_PERMISSION_DENIED"],
  404: ["ERR_NOT_FOUND", "ERR_CSI_NOT_FOUND"],
  405: ["ERR_METHOD_NOT_ALLOWED"],
  413: ["ERR_REQUEST_TOO_LARGE"],
  415: ["ERR_UNSUPPORTED_MEDIA_TYPE"],
  429: ["ERR_TOO_MANY_CONNECTIONS"],
  409: [
    "ERR_CONFLICT",
    "ERR_CSI_MAX_CLAIMS",
    "ERR_CSI_IN_USE",
    "ERR_CSI_VOLUME_UNSCHEDULABLE",
    "ERR_CSI_ALREADY_EXISTS",
    "ERR_CSI_NO_CAPACITY",
    "ERR_CSI_FAILED_PRECONDITION",
    "ERR_CSI_ABORTED",
  ],
  500: ["ERR_CSI_INTERNAL", "ERR_CSI_UNKNOWN", "ERR_CSI_NOT_MOUNTED", "ERR_DRIVER", "ERR_INTERNAL"],
  501: ["ERR_CSI_UNIMPLEMENTED"],
  // A node answered a controller call with something malformed: a bad gateway, as a proxy says.
  502: ["ERR_CSI_BAD_ANSWER"],
  503: [
    "ERR_CSI_PLUGIN_UNAVAILABLE",
    "ERR_CSI_UNAVAILABLE",
    "ERR_CSI_RESOURCE_EXHAUSTED",
    "ERR_RPC_UNAVAILABLE",
    "ERR_NODE_NOT_CONNECTED",
    "ERR_STATE_UNAVAILABLE",
    "ERR_NO_LEADER",
    "ERR_FENCED",
    "ERR_ABORTED",
  ],
  504: ["ERR_CSI_DEADLINE_EXCEEDED", "ERR_RPC_TIMEOUT"],
};

test("every error code has exactly one status, and the map holds no other key", () => {
  assert.deepEqual(Object.keys(HTTP_STATUS).sort(), [...ERROR_CODES].sort());
  assert.equal(new Set(ERROR_CODES).size, ERROR_CODES.length, "a code is listed twice");
  for (const code of ERROR_CODES) {
    const status = statusOf(code);
    assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code} → ${status}`);
  }
});

test("the statuses are Nomad's: 400 input, 403 denied, 404 missing, 409 state, 5xx only for the server side", () => {
  const listed = Object.values(EXPECTED).flat();
  assert.deepEqual([...listed].sort(), [...ERROR_CODES].sort(), "EXPECTED must name every code once");
  for (const [status, codes] of Object.entries(EXPECTED)) {
    for (const code of codes) assert.equal(statusOf(code), Number(status), code);
  }
});
