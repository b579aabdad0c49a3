/** Node introduction tokens (server/rpc/node_intro.ts): lifetime, scope and signature, with a fake clock. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { NodeIntroTokens, parseIntroTokenRequest } from "../../../src/server/rpc/node_intro.js";
import { isBerthError } from "../../../src/structs/errors.js";

function tokens(enforcement: "none" | "warn" | "strict" = "strict") {
  const clock = { now: 1_700_000_000_000 };
  const key = randomBytes(32);
  const t = new NodeIntroTokens(
    () => key,
    { enforcement, defaultTtlMs: 5 * 60_000, maxTtlMs: 30 * 60_000 },
    () => clock.now,
  );
  return { t, clock };
}

test("a token lives for its TTL, cut to the maximum; the default applies when none is asked", () => {
  const { t, clock } = tokens();
  const start = clock.now;
  const long = t.create({ NodeName: "", NodePool: "default", TTL: 3 * 3600e9 });
  assert.equal(long.ExpiresAt - start, 30 * 60_000, "cut to max_identity_ttl");
  const dflt = t.create({ NodeName: "", NodePool: "default", TTL: 0 });
  assert.equal(dflt.ExpiresAt - start, 5 * 60_000, "default_identity_ttl");
  assert.deepEqual(t.check(dflt.JWT, "any"), { ok: true, id: dflt.ID });
  clock.now = start + 5 * 60_000;
  assert.deepEqual(t.check(dflt.JWT, "any"), { ok: false, reason: "the introduction token has expired" });
  assert.equal(t.check(long.JWT, "any").ok, true);
});

test("a token from another key, a malformed one or another name's is refused under strict, logged under warn", () => {
  const { t } = tokens("strict");
  const other = tokens().t.create({ NodeName: "", NodePool: "default", TTL: 0 }).JWT;
  assert.match(String((t.check(other, "n") as { reason: string }).reason), /signature/);
  for (const bad of ["", "a.b", "x".repeat(5000), 42, "a.b.c"]) assert.equal(t.check(bad, "n").ok, false);
  const scoped = t.create({ NodeName: "web-1", NodePool: "default", TTL: 0 }).JWT;
  assert.throws(
    () => t.admitNewNode(scoped, "web-2"),
    (e: unknown) => isBerthError(e) && e.code === "ERR_PERMISSION_DENIED" && /"web-1"/.test(e.message),
  );
  assert.equal(t.admitNewNode(scoped, "web-1"), undefined);
  const warn = tokens("warn").t;
  assert.equal(warn.admitNewNode(undefined, "n"), "no introduction token was presented");
  assert.equal(tokens("none").t.admitNewNode(undefined, "n"), undefined);
});

test("create requests are checked as Nomad's: TTL in ns, the default pool only", () => {
  assert.deepEqual(parseIntroTokenRequest({}), { NodeName: "", NodePool: "default", TTL: 0 });
  assert.throws(() => parseIntroTokenRequest({ TTL: "15m" }), /TTL/);
  assert.throws(() => parseIntroTokenRequest({ NodePool: "gpu" }), /NodePool/);
  assert.throws(() => parseIntroTokenRequest({ NodeName: "a\nb" }), /NodeName/);
});
