/**
 * The agent config's `acl` block: Nomad's names in HCL and JSON, what berth honours compiled into
 * the server's options; what it does not honour refused by name with the reason.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { aclOptions } from "../../../src/agent/config_acl.js";
import { parseAgentConfig } from "../../../src/agent/config_file.js";

describe("agent config acl", () => {
  it("reads enabled and the token TTL bounds, in HCL and JSON", async () => {
    const hcl = await parseAgentConfig(
      "a.hcl",
      'acl {\n  enabled = true\n  token_min_expiration_ttl = "30s"\n  token_max_expiration_ttl = "2h"\n}\n',
    );
    assert.deepEqual(hcl.acl, {
      enabled: true,
      tokenMinExpirationTtlMs: 30_000,
      tokenMaxExpirationTtlMs: 7_200_000,
    });
    assert.deepEqual(aclOptions(hcl.acl), { enabled: true, tokenTtl: { minMs: 30_000, maxMs: 7_200_000 } });
    const json = await parseAgentConfig("a.json", JSON.stringify({ acl: { enabled: true } }));
    assert.deepEqual(aclOptions(json.acl!), { enabled: true, tokenTtl: {} });
    assert.equal((await parseAgentConfig("b.hcl", "client {}\n")).acl, undefined);
  });

  it("accepts Nomad's cache TTLs and replication token with a warning; refuses unknown keys", async () => {
    for (const [key, why] of [
      [
        "token_ttl",
        /c\.hcl:3:3: acl\.token_ttl is accepted but not used: berth resolves tokens from its state/,
      ],
      ["policy_ttl", /acl\.policy_ttl is accepted but not used/],
      ["role_ttl", /acl\.role_ttl is accepted but not used: berth has no ACL roles/],
      ["replication_token", /acl\.replication_token is accepted but not used: berth has a single region/],
    ] as const) {
      const cfg = await parseAgentConfig("c.hcl", `acl {\n  enabled = true\n  ${key} = "30s"\n}\n`);
      assert.equal(cfg.acl?.enabled, true);
      assert.match(cfg.warnings?.join("\n") ?? "", why);
    }
    await assert.rejects(
      parseAgentConfig("c.hcl", "acl {\n  enable = true\n}\n"),
      /c\.hcl:2:3: unknown key "acl\.enable"/,
    );
    await assert.rejects(
      parseAgentConfig(
        "c.hcl",
        'acl {\n  token_min_expiration_ttl = "2h"\n  token_max_expiration_ttl = "1h"\n}\n',
      ),
      /token_min_expiration_ttl must not be longer than token_max_expiration_ttl/,
    );
  });
});
