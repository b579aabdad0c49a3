/**
 * The server's ACL endpoint over a real (in-memory) state store, with an injected clock: token
 * expiry, the anonymous policy, who may read what, Nomad's validation texts, and that a secret is
 * kept only as its hash.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { AclEndpoint, type Identity } from "../../../src/server/acl/endpoint.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { hashSecret } from "../../../src/structs/acl_records.js";

function setup() {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const store = new SqliteStateStore(null);
  const acl = new AclEndpoint(store, { enabled: true }, () => now);
  return { store, acl, advance: (ms: number) => (now += ms) };
}

async function management(acl: AclEndpoint): Promise<Identity> {
  const { issued } = await acl.bootstrap("");
  return acl.resolve(issued.secret);
}

describe("ACL endpoint", () => {
  it("refuses a token once its TTL has passed, with Nomad's text", async () => {
    const { store, acl, advance } = setup();
    try {
      const root = await management(acl);
      await acl.upsertPolicy(root, { Name: "p", Rules: 'node { policy = "read" }' }, "p");
      const { issued } = await acl.upsertToken(
        root,
        { Name: "short", Type: "client", Policies: ["p"], ExpirationTTL: "10m" },
        "",
      );
      assert.equal(issued.token.ExpirationTime - issued.token.CreateTime, 600_000);
      assert.equal(acl.resolve(issued.secret).acl.allowNodeRead(), true);
      advance(600_001);
      assert.throws(() => acl.resolve(issued.secret), /^BerthError: ACL token expired$|ACL token expired/);
    } finally {
      store.close();
    }
  });

  it("bounds the TTL as Nomad does (1m to 24h by default)", async () => {
    const { store, acl } = setup();
    try {
      const root = await management(acl);
      await assert.rejects(
        acl.upsertToken(root, { Type: "management", ExpirationTTL: "30s" }, ""),
        (err: Error) =>
          err.message ===
          "token 0 invalid: 1 error occurred:\n\t* expiration time cannot be less than 1m0s in the future (was 30s)\n\n",
      );
      await assert.rejects(
        acl.upsertToken(root, { Type: "management", ExpirationTTL: "25h" }, ""),
        /expiration time cannot be more than 24h0m0s in the future \(was 25h0m0s\)/,
      );
    } finally {
      store.close();
    }
  });

  it("gives anonymous callers the `anonymous` policy, and nothing without it", async () => {
    const { store, acl } = setup();
    try {
      assert.equal(acl.resolve(undefined).acl.allowNodeRead(), false);
      const root = await management(acl);
      await acl.upsertPolicy(root, { Name: "anonymous", Rules: 'node { policy = "read" }' }, "anonymous");
      assert.equal(acl.resolve(undefined).acl.allowNodeRead(), true);
      assert.equal(acl.getPolicy(acl.resolve(undefined), "anonymous").Name, "anonymous");
    } finally {
      store.close();
    }
  });

  it("lets a token read itself and its policies, nothing else; management all", async () => {
    const { store, acl } = setup();
    try {
      const root = await management(acl);
      await acl.upsertPolicy(root, { Name: "mine", Rules: 'node { policy = "read" }' }, "mine");
      await acl.upsertPolicy(root, { Name: "other", Rules: 'agent { policy = "read" }' }, "other");
      const a = (await acl.upsertToken(root, { Type: "client", Policies: ["mine"] }, "")).issued;
      const b = (await acl.upsertToken(root, { Type: "client", Policies: ["other"] }, "")).issued;
      const me = acl.resolve(a.secret);
      assert.equal(acl.getToken(me, a.token.AccessorID).AccessorID, a.token.AccessorID);
      assert.throws(() => acl.getToken(me, b.token.AccessorID), /Permission denied/);
      assert.deepEqual(
        acl.listPolicies(me).map((p) => p.Name),
        ["mine"],
      );
      assert.throws(() => acl.getPolicy(me, "other"), /Permission denied/);
      assert.throws(() => acl.listTokens(me), /Permission denied/);
      assert.equal(acl.listTokens(root).length, 3);
    } finally {
      store.close();
    }
  });

  it("refuses bad policies and tokens with Nomad's texts, writing nothing", async () => {
    const { store, acl } = setup();
    try {
      const root = await management(acl);
      await assert.rejects(
        acl.upsertPolicy(root, { Name: "bad name", Rules: 'node { policy = "x" }' }, "bad name"),
        (err: Error) =>
          err.message ===
          "policy 0 invalid: 2 errors occurred:\n\t* invalid name 'bad name'\n\t* failed to parse rules: Invalid node policy: &acl.NodePolicy{Policy:\"x\"}\n\n",
      );
      await assert.rejects(
        acl.upsertPolicy(root, { Name: "a", Rules: "" }, "b"),
        /ACL policy name does not match request path/,
      );
      await assert.rejects(
        acl.upsertToken(root, { Type: "client" }, ""),
        /token 0 invalid: 1 error occurred:\n\t\* client token missing policies or roles/,
      );
      await assert.rejects(
        acl.upsertToken(root, { Type: "root" }, ""),
        /token type must be client or management/,
      );
      await assert.rejects(acl.deleteToken(root, "nope"), /Cannot delete nonexistent tokens: nope/);
      assert.equal(store.listAclPolicies().length, 0);
      assert.equal(store.listAclTokens().length, 1);
    } finally {
      store.close();
    }
  });

  it("stores only the secret's hash, and finds the token by it", async () => {
    const { store, acl } = setup();
    try {
      const { issued } = await acl.bootstrap("");
      const stored = store.getAclToken(issued.token.AccessorID)!;
      assert.equal(JSON.stringify(stored).includes(issued.secret!), false);
      assert.equal(stored.SecretHash, hashSecret(issued.secret!));
      await assert.rejects(acl.bootstrap(""), /^.*ACL bootstrap already done \(reset index: \d+\)$/);
      await assert.rejects(acl.bootstrap("not-a-uuid"), /invalid acl token/);
    } finally {
      store.close();
    }
  });
});

describe("stored ACL records", () => {
  it("quarantines a policy whose rules no longer parse and a token missing its fields, at open", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "berth-aclq-"));
    try {
      const first = new SqliteStateStore(dir);
      const acl = new AclEndpoint(first, { enabled: true });
      const root = await management(acl);
      await acl.upsertPolicy(root, { Name: "good", Rules: 'node { policy = "read" }' }, "good");
      first.close();
      const db = new Database(path.join(dir, "state.db"));
      try {
        db.prepare("INSERT INTO acl_policies (name, json) VALUES (?, ?)").run(
          "broken",
          JSON.stringify({ Name: "broken", Description: "", Rules: 'node { policy = "root" }' }),
        );
        db.prepare("INSERT INTO acl_tokens (accessor_id, secret_hash, json) VALUES (?, ?, ?)").run(
          "t1",
          "h1",
          JSON.stringify({ AccessorID: "t1", SecretHash: "h1", Type: "client" }),
        );
      } finally {
        db.close();
      }
      const store = new SqliteStateStore(dir);
      try {
        assert.deepEqual(
          store.quarantined().map((q) => `${q.table}/${q.key}: ${q.error}`),
          [
            'acl_policies/broken: Rules: Invalid node policy: &acl.NodePolicy{Policy:"root"}',
            "acl_tokens/t1: Policies: must be a list of strings",
          ],
        );
        assert.deepEqual(
          store.listAclPolicies().map((p) => p.Name),
          ["good"],
        );
        assert.equal(store.listAclTokens().length, 1);
      } finally {
        store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
