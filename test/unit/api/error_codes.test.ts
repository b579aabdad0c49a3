/**
 * The API client's copy of the error codes equals the server's list, and `hasErrorCode` matches on
 * the code alone: not on the status, not on the text.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { API_ERROR_CODES, ApiError, hasErrorCode } from "../../../src/api/index.js";
import { ERROR_CODES } from "../../../src/structs/errors.js";

test("the API's error codes are the server's, in the same order", () => {
  assert.deepEqual([...API_ERROR_CODES], [...ERROR_CODES]);
});

test("hasErrorCode matches the code only", () => {
  assert.equal(hasErrorCode(new ApiError(404, "not found", "ERR_NOT_FOUND"), "ERR_NOT_FOUND"), true);
  assert.equal(
    hasErrorCode(new ApiError(503, "x", "ERR_NOT_FOUND"), "ERR_VALIDATION", "ERR_NOT_FOUND"),
    true,
  );
  assert.equal(hasErrorCode(new ApiError(404, "not found"), "ERR_NOT_FOUND"), false, "a 404 without a code");
  assert.equal(hasErrorCode(new ApiError(404, "ERR_NOT_FOUND", "ERR_INTERNAL"), "ERR_NOT_FOUND"), false);
  assert.equal(hasErrorCode(new Error("ERR_NOT_FOUND"), "ERR_NOT_FOUND"), false);
  assert.equal(hasErrorCode(new ApiError(400, "x", "ERR_FROM_A_NEWER_SERVER"), "ERR_VALIDATION"), false);
});
