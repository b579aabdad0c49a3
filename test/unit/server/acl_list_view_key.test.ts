/**
 * The part of a cached list's key that names the caller's ACL view (acl/guards.ts nsFilter): the
 * token's policy set and the policies' index — tokens with the same policies share an answer,
 * different policy sets, an edited policy, anonymous and management never do.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { nsFilter } from "../../../src/server/acl/guards.js";
import type { Ctx, HttpEndpoints } from "../../../src/server/request_ctx.js";
import type { Table } from "../../../src/server/state/store.js";
import { Acl } from "../../../src/structs/acl.js";
import type { ACLToken } from "../../../src/structs/acl_records.js";
import { parsePolicy } from "../../../src/structs/acl_policy.js";

let policiesIndex = 7;
const api = {
  store: { tableIndex: (t: Table) => (t === "acl_policies" ? policiesIndex : 1) },
} as unknown as HttpEndpoints;
const readA = Acl.compile([parsePolicy('namespace "a" { capabilities = ["list-jobs"] }', false)]);

function ctxOf(policies: string[] | undefined, acl: Acl = readA, accessor = "x"): Ctx {
  const token =
    policies && ({ AccessorID: accessor, Policies: policies, Type: "client" } as unknown as ACLToken);
  return { identity: { token, acl } } as unknown as Ctx;
}

test("tokens with the same policy set share a view key; other sets, policy edits, anonymous do not", () => {
  const key = (c: Ctx) => nsFilter(c, api, "list-jobs").key;
  const one = key(ctxOf(["read-a", "ops"], readA, "token-1"));
  assert.equal(key(ctxOf(["ops", "read-a"], readA, "token-2")), one, "same policies, another token");
  assert.notEqual(key(ctxOf(["read-a"])), one, "another policy set");
  assert.notEqual(key(ctxOf(undefined)), one, "anonymous");
  assert.notEqual(key(ctxOf(["read-a,ops"])), one, "names are not run together");
  policiesIndex++;
  assert.notEqual(key(ctxOf(["read-a", "ops"], readA, "token-1")), one, "a policy was edited");
  assert.equal(nsFilter(ctxOf(["x"], Acl.management()), api, "list-jobs").key, "", "management sees all");
  const view = nsFilter(ctxOf(["read-a"]), api, "list-jobs");
  assert.deepEqual([view.keep("a"), view.keep("b")], [true, false]);
});
