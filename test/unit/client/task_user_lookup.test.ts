/**
 * Task.User lookups (drivers/shared/user.ts) through the host's real getent and id: starts asking
 * for the same user at once share one lookup, yet each caller gets its own answer — its own copy of
 * the user, and an error naming its own task when the user does not exist.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { lookupUser } from "../../../src/client/drivers/shared/user.js";

test("concurrent lookups of one user each get their own copy", async () => {
  const [a, b] = await Promise.all([lookupUser("web", "root"), lookupUser("db", "root")]);
  assert.deepEqual(a, b);
  assert.equal(a.uid, 0);
  assert.ok(a.groups.includes(0));
  assert.notEqual(a, b);
  a.groups.push(4242);
  assert.ok(!b.groups.includes(4242));
  const later = await lookupUser("cache", "root");
  assert.ok(!later.groups.includes(4242), "a caller's change never reaches the next caller");
});

test("an unknown user fails every caller with its own task's name, and is not remembered", async () => {
  const name = `berth-no-such-user-${process.pid}`;
  const results = await Promise.allSettled([lookupUser("web", name), lookupUser("db", name)]);
  assert.deepEqual(
    results.map((r) => (r.status === "rejected" ? (r.reason as Error).message : "found")),
    [
      `task "web": user "${name}" does not exist on this node`,
      `task "db": user "${name}" does not exist on this node`,
    ],
  );
  await assert.rejects(lookupUser("again", name), {
    message: `task "again": user "${name}" does not exist on this node`,
  });
});
