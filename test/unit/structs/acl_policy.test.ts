/**
 * Nomad's ACL policy language (structs/acl_policy.ts): every rule kind in HCL and in JSON, the
 * shorthand expansions exactly as Nomad's acl/policy.go expands them, and Nomad's error texts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parsePolicy, PolicyError } from "../../../src/structs/acl_policy.js";
import { expandNamespacePolicy } from "../../../src/structs/acl_capabilities.js";

const READ = [
  "list-jobs",
  "parse-job",
  "read-job",
  "csi-list-volume",
  "csi-read-volume",
  "read-job-scaling",
  "list-scaling-policies",
  "read-scaling-policy",
  "host-volume-read",
];

describe("namespace rules", () => {
  it("expands policy = read into Nomad's read capabilities", () => {
    const p = parsePolicy('namespace "default" { policy = "read" }', true);
    assert.equal(p.namespaces.length, 1);
    assert.equal(p.namespaces[0]!.name, "default");
    assert.deepEqual(p.namespaces[0]!.capabilities, READ);
  });

  it("expands write into read plus the write capabilities, in Nomad's order", () => {
    assert.deepEqual(expandNamespacePolicy("write"), [
      ...READ,
      "scale-job",
      "submit-job",
      "dispatch-job",
      "read-logs",
      "read-fs",
      "alloc-exec",
      "alloc-lifecycle",
      "csi-mount-volume",
      "csi-write-volume",
      "submit-recommendation",
      "host-volume-create",
    ]);
  });

  it("expands scale and deny", () => {
    assert.deepEqual(expandNamespacePolicy("scale"), [
      "list-scaling-policies",
      "read-scaling-policy",
      "read-job-scaling",
      "scale-job",
      "read-job",
      "submit-recommendation",
    ]);
    assert.deepEqual(parsePolicy('namespace "x" { policy = "deny" }', true).namespaces[0]!.capabilities, [
      "deny",
    ]);
  });

  it("adds the shorthand's capabilities after the explicit ones, and host-volume implications", () => {
    const p = parsePolicy(
      `namespace "prod-*" {
         capabilities = ["csi-mount-volume", "host-volume-register"]
         policy = "deny"
       }`,
      true,
    );
    assert.deepEqual(p.namespaces[0]!.capabilities, [
      "csi-mount-volume",
      "host-volume-register",
      "deny",
      "host-volume-create",
      "host-volume-read",
    ]);
  });

  it("reads variables paths and expands read to list", () => {
    const p = parsePolicy(
      `namespace "default" {
         variables {
           path "app/*" { capabilities = ["read"] }
           path "ops" { capabilities = ["write", "deny"] }
         }
       }`,
      true,
    );
    assert.deepEqual(p.namespaces[0]!.variables, {
      paths: [
        { pathSpec: "app/*", capabilities: ["read", "list"] },
        { pathSpec: "ops", capabilities: ["deny"] },
      ],
    });
  });

  it("reads the JSON form as HCL's", () => {
    const p = parsePolicy(
      JSON.stringify({
        namespace: { a: { policy: "read" }, b: { capabilities: ["csi-read-volume"] } },
        plugin: { policy: "list" },
      }),
      true,
    );
    assert.deepEqual(
      p.namespaces.map((n) => n.name),
      ["a", "b"],
    );
    assert.deepEqual(p.namespaces[1]!.capabilities, ["csi-read-volume"]);
    assert.equal(p.plugin?.policy, "list");
  });
});

describe("other rules", () => {
  it("reads node, agent, operator, quota, plugin, host_volume and node_pool", () => {
    const p = parsePolicy(
      `node { policy = "read" }
       agent { policy = "write" }
       operator { policy = "read" }
       quota { policy = "read" }
       plugin { policy = "read" }
       host_volume "data-*" { policy = "write" }
       node_pool "gpu" { policy = "read" }`,
      true,
    );
    assert.equal(p.node?.policy, "read");
    assert.equal(p.agent?.policy, "write");
    assert.deepEqual(p.operator, { policy: "read", capabilities: ["license-read", "keyring-read"] });
    assert.equal(p.quota?.policy, "read");
    assert.equal(p.plugin?.policy, "read");
    assert.deepEqual(p.hostVolumes, [
      { name: "data-*", policy: "write", capabilities: ["mount-readonly", "mount-readwrite"] },
    ]);
    assert.deepEqual(p.nodePools, [{ name: "gpu", policy: "read", capabilities: ["read"] }]);
  });

  it("accepts empty rules, as Nomad does", () => {
    assert.equal(parsePolicy("", true).namespaces.length, 0);
  });
});

describe("bad policies, with Nomad's texts", () => {
  const refuses = (rules: string, message: string | RegExp) =>
    assert.throws(
      () => parsePolicy(rules, true),
      (err: unknown) => {
        assert.ok(err instanceof PolicyError, String(err));
        if (typeof message === "string") assert.equal(err.message, message);
        else assert.match(err.message, message);
        return true;
      },
    );

  it("an unknown namespace policy", () =>
    refuses(
      'namespace "default" { policy = "admin" }',
      'Invalid namespace policy: &acl.NamespacePolicy{Name:"default", Policy:"admin", Capabilities:[]string(nil), Variables:(*acl.VariablesPolicy)(nil)}',
    ));

  it("an unknown capability", () =>
    refuses(
      'namespace "default" { capabilities = ["csi-write-volumes"] }',
      /^Invalid namespace capability 'csi-write-volumes': &acl\.NamespacePolicy\{Name:"default"/,
    ));

  it("a bad namespace name, and a block without its name", () => {
    refuses('namespace "a/b" { policy = "read" }', /^Invalid namespace name: /);
    refuses('namespace { policy = "read" }', /^Invalid namespace name: &acl.NamespacePolicy\{Name:""/);
  });

  it("levels of node, agent and plugin", () => {
    refuses('node { policy = "list" }', 'Invalid node policy: &acl.NodePolicy{Policy:"list"}');
    refuses("agent { }", 'Invalid agent policy: &acl.AgentPolicy{Policy:""}');
    refuses('plugin { policy = "scale" }', 'Invalid plugin policy: &acl.PluginPolicy{Policy:"scale"}');
  });

  it("an operator capability", () =>
    refuses('operator { capabilities = ["reboot"] }', "Invalid operator capability 'reboot'"));

  it("unknown top-level keys (strict only)", () => {
    refuses(
      'namespace "a" { policy = "read" }\nnamespaces "b" { policy = "read" }',
      "Invalid or duplicate policy keys: namespaces",
    );
    assert.equal(
      parsePolicy('namespace "a" { policy = "read" }\nnamespaces "b" { policy = "read" }', false).namespaces
        .length,
      1,
    );
  });

  it("a misspelt key inside a block (strict only)", () => {
    refuses('namespace "a" { polcy = "read" }', 'Invalid or duplicate policy keys: namespace "a": polcy');
    assert.deepEqual(parsePolicy('namespace "a" { polcy = "read" }', false).namespaces[0]!.capabilities, []);
  });

  it("text with no rule at all", () => refuses("# nothing here\n", "Invalid policy: # nothing here\n"));

  it("a syntax error names the place", () =>
    refuses('namespace "a" { policy = }', /^Failed to parse ACL Policy: At 1:26: /));

  it("a leading slash in a variables path", () =>
    refuses(
      'namespace "a" { variables { path "/x" { capabilities = ["read"] } } }',
      "Invalid variable path \"/x\" in namespace a: cannot start with a leading '/'`",
    ));
});
