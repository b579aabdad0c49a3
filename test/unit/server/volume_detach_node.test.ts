/**
 * `volume detach`'s node argument (issue 28): a node ID, a unique ID prefix (as Nomad's CLI
 * resolves one) or a node's exact name; several matches are a 400 on `node` naming them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { resolveNode } from "../../../src/server/rpc/volume_detach.js";
import { statusOf } from "../../../src/server/wire/status_map.js";
import { BerthError } from "../../../src/structs/errors.js";
import { makeNode } from "../../builders/node.js";

test("volume detach resolves its node by ID, ID prefix or exact name; ambiguity is a 400 on `node`", async (t) => {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  await store.txn((tx) => {
    tx.putNode(makeNode("11111111-aaaa", { Name: "web-1" }));
    tx.putNode(makeNode("22222222-bbbb", { Name: "twin" }));
    tx.putNode(makeNode("33333333-cccc", { Name: "twin" }));
    // A node named like another's ID prefix.
    tx.putNode(makeNode("44444444-dddd", { Name: "1111" }));
  });
  assert.equal(resolveNode(store, "22222222-bbbb").ID, "22222222-bbbb");
  assert.equal(resolveNode(store, "2222").ID, "22222222-bbbb");
  assert.equal(resolveNode(store, "web-1").ID, "11111111-aaaa");
  const ambiguous = (ref: string, pattern: RegExp) =>
    assert.throws(
      () => resolveNode(store, ref),
      (err: unknown) => {
        assert.ok(err instanceof BerthError);
        assert.equal(err.code, "ERR_VALIDATION");
        assert.equal(err.field, "node");
        assert.equal(statusOf(err.code), 400);
        assert.match(err.message, pattern);
        return true;
      },
    );
  ambiguous(
    "twin",
    /^node: "twin" matches 2 nodes by ID prefix or name: 22222222-bbbb \(twin\), 33333333-cccc \(twin\); give a node ID$/,
  );
  ambiguous("1111", /matches 2 nodes/);
  for (const ref of ["nobody", ""]) {
    assert.throws(
      () => resolveNode(store, ref),
      (err: unknown) => err instanceof BerthError && err.code === "ERR_NOT_FOUND",
    );
  }
});
