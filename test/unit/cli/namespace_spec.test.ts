import { test } from "node:test";
import assert from "node:assert/strict";
import { parseNamespaceHcl } from "../../../src/cli/commands/namespace_spec.js";
import { namespaceApply } from "../../../src/cli/commands/namespace_apply.js";
import { namespaceList } from "../../../src/cli/commands/namespace_status.js";

test("namespace spec: Nomad's HCL keys, weakly typed plain keys, merged meta, capabilities lists", () => {
  const warnings: string[] = [];
  const spec = parseNamespaceHcl(
    "ns.hcl",
    [
      'Name        = "team-a"',
      "description = 42",
      'quota       = ""',
      'meta { owner = "ops" }',
      "meta { tier = 2 }",
      "capabilities {",
      '  enabled_task_drivers  = ["exec", "docker"]',
      '  disabled_task_drivers = ["raw_exec"]',
      "}",
      'colour = "blue"',
    ].join("\n"),
    (m) => warnings.push(m),
  );
  assert.deepEqual(spec, {
    Name: "team-a",
    Description: "42",
    Quota: "",
    Meta: { owner: "ops", tier: "2" },
    Capabilities: {
      EnabledTaskDrivers: ["exec", "docker"],
      DisabledTaskDrivers: ["raw_exec"],
      EnabledNetworkModes: null,
      DisabledNetworkModes: null,
    },
  });
  assert.deepEqual(warnings, ['ns.hcl:10:1: ignoring key "colour": not a namespace field berth knows']);
});

test("namespace spec: refusals name the file, the place and the problem", () => {
  assert.throws(() => parseNamespaceHcl("a.hcl", 'description = "x"'), /a\.hcl: name is missing/);
  assert.throws(
    () => parseNamespaceHcl("a.hcl", 'name = "a"\ncapabilities {\n  drivers = ["exec"]\n}'),
    /a\.hcl:3:3: capabilities: invalid key: drivers \(valid keys: enabled_task_drivers, /,
  );
  assert.throws(
    () => parseNamespaceHcl("a.hcl", 'name = "a"\ncapabilities {\n  enabled_task_drivers = "exec"\n}'),
    /a\.hcl:3:26: capabilities\.enabled_task_drivers must be a list of strings/,
  );
  assert.throws(() => parseNamespaceHcl("a.hcl", 'name = ["a"]'), /a\.hcl:1:1: name must be a string/);
  assert.throws(
    () => parseNamespaceHcl("a.hcl", 'name = "a"\nmeta = "x"'),
    /meta must be a block of strings/,
  );
});

test("namespace commands parse Nomad's flags and arguments", () => {
  assert.deepEqual(namespaceApply.parse(["-description", "d", "prod"]), {
    address: undefined,
    input: "prod",
    description: "d",
    quota: undefined,
    json: false,
  });
  assert.equal(namespaceApply.parse(["-json", "ns.json"]).json, true);
  assert.throws(() => namespaceApply.parse([]), /exactly one argument: <input>/);
  assert.throws(() => namespaceList.parse(["x"]), /takes no arguments/);
});
