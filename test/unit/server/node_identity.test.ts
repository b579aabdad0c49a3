/**
 * The pieces of node identity without I/O: the secret check (node_auth.ts), the per-address limit
 * on failed authentications (node_auth_limit.ts) and its agent config keys, and what an alloc may
 * claim (node_scope.ts).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { parseAgentConfig } from "../../../src/agent/config_file.js";
import { boundSecretHash, hashNodeSecret, presentedSecretHash } from "../../../src/server/rpc/node_auth.js";
import { NodeAuthLimiter } from "../../../src/server/rpc/node_auth_limit.js";
import { checkAllocClaim } from "../../../src/server/rpc/node_scope.js";
import { allocWith, volumeRequest } from "../../builders/csi_alloc.js";
import { isBerthError } from "../../../src/structs/errors.js";

function denied(fn: () => unknown, re: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(isBerthError(err) && err.code === "ERR_PERMISSION_DENIED", String(err));
    assert.match(err.message, re);
    return true;
  });
}

describe("node secret", () => {
  it("binds the first secret, accepts it again, refuses any other without echoing it", () => {
    const secret = randomUUID();
    const presented = presentedSecretHash({ ID: "n1", SecretID: secret });
    assert.equal(presented, hashNodeSecret(secret));
    assert.notEqual(presented, secret, "only a hash is kept");
    assert.equal(boundSecretHash(undefined, presented), presented, "first registration binds");
    assert.equal(boundSecretHash("", presented), presented, "a record from before secrets binds");
    assert.equal(
      boundSecretHash(presented, presentedSecretHash({ SecretID: secret.toUpperCase() })),
      presented,
    );
    const wrong = randomUUID();
    assert.throws(
      () => boundSecretHash(presented, hashNodeSecret(wrong)),
      (err: unknown) =>
        isBerthError(err) &&
        err.code === "ERR_PERMISSION_DENIED" &&
        err.message === "node secret ID does not match. Not registering node." &&
        !err.message.includes(wrong),
    );
  });

  it("refuses a missing or malformed secret as a permission failure naming the field", () => {
    denied(() => presentedSecretHash({ ID: "n1" }), /Node.SecretID is required/);
    denied(() => presentedSecretHash({ ID: "n1", SecretID: "" }), /Node.SecretID is required/);
    denied(() => presentedSecretHash({ ID: "n1", SecretID: 42 }), /Node.SecretID is required/);
    denied(() => presentedSecretHash(null), /Node.SecretID is required/);
    denied(() => presentedSecretHash({ SecretID: "letmein" }), /^Node.SecretID must be a UUID$/);
  });
});

describe("failed node authentications per address", () => {
  it("allows the burst, then one more per interval; other addresses are apart", () => {
    let now = 1_000_000;
    const l = new NodeAuthLimiter({ rpcAuthFailureBurst: 3, rpcAuthFailureIntervalMs: 10_000 }, () => now);
    for (let i = 0; i < 3; i++) {
      assert.equal(l.retryAfterMs("a"), 0, `attempt ${i + 1} may try`);
      l.failed("a");
    }
    assert.equal(l.retryAfterMs("a"), 10_000, "the burst is spent");
    assert.equal(l.retryAfterMs("b"), 0, "another address has its own bucket");
    now += 4_000;
    assert.equal(l.retryAfterMs("a"), 6_000);
    now += 6_000;
    assert.equal(l.retryAfterMs("a"), 0, "one attempt regained");
    l.failed("a");
    assert.equal(l.retryAfterMs("a"), 10_000, "and spent again");
    now += 60_000;
    assert.equal(l.retryAfterMs("a"), 0);
  });

  it("a burst of 0 turns the limit off", () => {
    const l = new NodeAuthLimiter({ rpcAuthFailureBurst: 0, rpcAuthFailureIntervalMs: 10_000 });
    for (let i = 0; i < 100; i++) l.failed("a");
    assert.equal(l.retryAfterMs("a"), 0);
  });

  it("is set in the agent config's limits block, bad values refused by name", async () => {
    const cfg = await parseAgentConfig(
      "a.hcl",
      'limits {\n  rpc_auth_failure_burst = 4\n  rpc_auth_failure_interval = "30s"\n}\n',
    );
    assert.deepEqual(cfg.limits, { rpcAuthFailureBurst: 4, rpcAuthFailureIntervalMs: 30_000 });
    await assert.rejects(
      parseAgentConfig("a.hcl", "limits {\n  rpc_auth_failure_burst = -1\n}\n"),
      /limits: rpc_auth_failure_burst must be between 0 \(no limit\) and 1000000, got -1/,
    );
    await assert.rejects(
      parseAgentConfig("a.hcl", 'limits {\n  rpc_auth_failure_interval = "0"\n}\n'),
      /limits: rpc_auth_failure_interval must be between 1ms and 1h/,
    );
  });
});

describe("what an alloc may claim", () => {
  it("only the volumes its group requests, in its namespace, writing only where a request writes", () => {
    const alloc = allocWith(
      { data: volumeRequest({ Source: "vol1" }), logs: volumeRequest({ Source: "ro", ReadOnly: true }) },
      { Name: "j.g[2]" },
    );
    checkAllocClaim(alloc, "default", "vol1", "write");
    checkAllocClaim(alloc, "default", "ro", "read");
    denied(() => checkAllocClaim(alloc, "default", "ro", "write"), /requests volume "ro" read-only/);
    denied(() => checkAllocClaim(alloc, "default", "other", "read"), /does not request volume "other"/);
    denied(() => checkAllocClaim(alloc, "prod", "vol1", "read"), /in namespace "prod"/);
    const perAlloc = allocWith({ data: volumeRequest({ Source: "db", PerAlloc: true }) }, { Name: "j.g[2]" });
    checkAllocClaim(perAlloc, "default", "db[2]", "write");
    denied(() => checkAllocClaim(perAlloc, "default", "db[0]", "write"), /does not request volume "db\[0\]"/);
  });
});
