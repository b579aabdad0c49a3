/**
 * The compiled ACL (structs/acl.ts): unions, deny precedence, Nomad's glob precedence, the `*`
 * namespace of lists, the level rules, and management.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Acl, globMatch } from "../../../src/structs/acl.js";
import { parsePolicy } from "../../../src/structs/acl_policy.js";

const compile = (...rules: string[]) => Acl.compile(rules.map((r) => parsePolicy(r, true)));

describe("namespace operations", () => {
  it("grants what a rule lists, nothing elsewhere", () => {
    const acl = compile('namespace "a" { capabilities = ["csi-read-volume"] }');
    assert.equal(acl.allowNamespaceOperation("a", "csi-read-volume"), true);
    assert.equal(acl.allowNamespaceOperation("a", "csi-list-volume"), false);
    assert.equal(acl.allowNamespaceOperation("b", "csi-read-volume"), false);
  });

  it("unites the rules of several policies for one namespace", () => {
    const acl = compile(
      'namespace "a" { capabilities = ["csi-read-volume"] }',
      'namespace "a" { capabilities = ["csi-mount-volume"] }',
    );
    assert.equal(acl.allowNamespaceAnyOf("a", "csi-mount-volume"), true);
    assert.equal(acl.allowNamespaceOperation("a", "csi-read-volume"), true);
  });

  it("lets deny in any policy win, whichever comes first", () => {
    for (const order of [
      ['namespace "a" { policy = "write" }', 'namespace "a" { policy = "deny" }'],
      ['namespace "a" { policy = "deny" }', 'namespace "a" { policy = "write" }'],
    ]) {
      const acl = compile(...order);
      assert.equal(acl.allowNamespaceOperation("a", "read-job"), false);
      assert.equal(acl.allowNamespace("a"), false);
    }
  });

  it("prefers the exact rule over any glob", () => {
    const acl = compile('namespace "prod-*" { policy = "write" }', 'namespace "prod-db" { policy = "read" }');
    assert.equal(acl.allowNamespaceOperation("prod-db", "submit-job"), false);
    assert.equal(acl.allowNamespaceOperation("prod-web", "submit-job"), true);
  });

  it("picks the closest glob (Nomad's difference), ties to the last in byte order", () => {
    const acl = compile(
      'namespace "*" { policy = "read" }',
      'namespace "prod-*" { capabilities = ["submit-job"] }',
      'namespace "prod-db-*" { capabilities = ["alloc-exec"] }',
    );
    // "prod-db-1" matches all three; prod-db-* is nearest, so its rule alone applies.
    assert.equal(acl.allowNamespaceOperation("prod-db-1", "alloc-exec"), true);
    assert.equal(acl.allowNamespaceOperation("prod-db-1", "submit-job"), false);
    assert.equal(acl.allowNamespaceOperation("prod-web", "submit-job"), true);
    assert.equal(acl.allowNamespaceOperation("prod-web", "read-job"), false);
    assert.equal(acl.allowNamespaceOperation("dev", "read-job"), true);
    const tie = compile(
      'namespace "a*" { capabilities = ["read-job"] }',
      'namespace "*b" { capabilities = ["list-jobs"] }',
    );
    // "ab": both globs are one character short of it; "a*" sorts after "*b" and wins.
    assert.equal(tie.allowNamespaceOperation("ab", "read-job"), true);
    assert.equal(tie.allowNamespaceOperation("ab", "list-jobs"), false);
  });

  it("answers for * (all namespaces) when any rule allows the operation", () => {
    const acl = compile('namespace "a" { capabilities = ["list-jobs"] }');
    assert.equal(acl.allowNamespaceOperation("*", "list-jobs"), true);
    assert.equal(acl.allowNamespaceOperation("*", "submit-job"), false);
    assert.equal(Acl.compile([]).allowNamespaceOperation("*", "list-jobs"), false);
  });
});

describe("levels", () => {
  it("takes the most privileged level, deny over all", () => {
    const acl = compile('node { policy = "read" }', 'node { policy = "write" }');
    assert.equal(acl.allowNodeWrite(), true);
    const denied = compile('node { policy = "write" }', 'node { policy = "deny" }');
    assert.equal(denied.allowNodeRead(), false);
  });

  it("plugin: list allows lists only; read allows both; write, as in Nomad, neither", () => {
    assert.deepEqual(
      ["list", "read", "write"].map((l) => {
        const acl = compile(`plugin { policy = "${l}" }`);
        return [acl.allowPluginList(), acl.allowPluginRead()];
      }),
      [
        [true, false],
        [true, true],
        [false, false],
      ],
    );
  });

  it("agent and operator read/write", () => {
    const acl = compile('agent { policy = "read" }', 'operator { policy = "write" }');
    assert.equal(acl.allowAgentRead(), true);
    assert.equal(acl.allowAgentWrite(), false);
    assert.equal(acl.allowOperatorWrite(), true);
    assert.equal(acl.allowOperatorOperation("snapshot-save"), true);
  });

  it("a token with no policies may do nothing; a management token everything", () => {
    const none = Acl.compile([]);
    assert.equal(none.allowNodeRead() || none.allowPluginList() || none.allowNamespace("default"), false);
    const m = Acl.management();
    assert.equal(m.allowNamespaceOperation("any", "alloc-node-exec") && m.allowOperatorWrite(), true);
  });

  it("host volumes by name, with globs", () => {
    const acl = compile('host_volume "shared-*" { policy = "read" }');
    assert.equal(acl.allowHostVolumeOperation("shared-logs", "mount-readonly"), true);
    assert.equal(acl.allowHostVolumeOperation("shared-logs", "mount-readwrite"), false);
  });
});

describe("globMatch (go-glob)", () => {
  it("matches * as any run, nothing else special", () => {
    assert.equal(globMatch("*", ""), true);
    assert.equal(globMatch("a*c", "abbbc"), true);
    assert.equal(globMatch("a*c", "abbb"), false);
    assert.equal(globMatch("*-db-*", "prod-db-1"), true);
    assert.equal(globMatch("a?", "ab"), false);
  });
});
