/**
 * The controller condition decision (structs/volume_condition.ts): a record is written only when
 * the abnormal flag or the redacted message changed; a stored record that is absent or malformed
 * counts as none; secret values never reach the stored message; a long message is cut.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nextControllerCondition } from "../../../src/structs/volume_condition.js";
import { MAX_USAGE_MESSAGE_CHARS } from "../../../src/structs/volume_usage.js";

const healthy = { Abnormal: false, Message: "volume directory is present" };
const broken = { Abnormal: true, Message: "volume directory /s/v1 is missing" };

test("controller condition: the first observation is written, with its time", () => {
  for (const prev of [undefined, null]) {
    assert.deepEqual(nextControllerCondition(prev, healthy, null, 42), { ...healthy, UpdateTime: 42 });
  }
});

test("controller condition: the same condition writes nothing; a changed flag or message does", () => {
  const stored = { ...healthy, UpdateTime: 1 };
  assert.equal(nextControllerCondition(stored, healthy, null, 99), null);
  assert.deepEqual(nextControllerCondition(stored, broken, null, 99), { ...broken, UpdateTime: 99 });
  const sameFlag = { Abnormal: false, Message: "all fine now" };
  assert.deepEqual(nextControllerCondition(stored, sameFlag, null, 99), { ...sameFlag, UpdateTime: 99 });
  const storedBroken = { ...broken, UpdateTime: 5 };
  assert.equal(nextControllerCondition(storedBroken, broken, null, 99), null);
  assert.deepEqual(nextControllerCondition(storedBroken, healthy, null, 99), { ...healthy, UpdateTime: 99 });
});

test("controller condition: a malformed stored record counts as none", () => {
  for (const prev of ["abnormal", 3, { Abnormal: "yes", Message: healthy.Message }, {}]) {
    assert.deepEqual(nextControllerCondition(prev, healthy, null, 7), { ...healthy, UpdateTime: 7 });
  }
});

test("controller condition: secret values are redacted before comparing and storing", () => {
  const secrets = { token: "hunter2-secret" };
  const seen = { Abnormal: true, Message: "cannot log in with hunter2-secret" };
  const first = nextControllerCondition(null, seen, secrets, 1)!;
  assert.equal(first.Message, "cannot log in with [REDACTED]");
  // The stored (redacted) message equals what the same answer redacts to: no rewrite.
  assert.equal(nextControllerCondition(first, seen, secrets, 2), null);
});

test("controller condition: a long message is cut to the longest kept", () => {
  const long = { Abnormal: true, Message: "x".repeat(MAX_USAGE_MESSAGE_CHARS + 50) };
  const rec = nextControllerCondition(null, long, null, 1)!;
  assert.equal(rec.Message.length, MAX_USAGE_MESSAGE_CHARS);
  assert.equal(nextControllerCondition(rec, long, null, 2), null, "the same long message is no change");
});
