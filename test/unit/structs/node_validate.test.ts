/**
 * validateReportedNode / validateFingerprint, pure: what a real node agent sends passes unchanged;
 * server-owned and unknown fields are not taken from the agent; keys that would touch a map's
 * prototype are refused; and the scheduler's own-key reads do not see Object.prototype members.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { reservedResources } from "../../../src/client/fingerprint/resources.js";
import { buildNode, fingerprintNode } from "../../../src/client/node_identity.js";
import { BerthError } from "../../../src/structs/errors.js";
import { ownEntry } from "../../../src/structs/node.js";
import { validateFingerprint, validateReportedNode } from "../../../src/structs/node_validate.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";

const drivers = {
  exec: { Detected: true, Healthy: true, HealthDescription: "Healthy", SupportsMounts: true },
  raw_exec: { Detected: false, Healthy: false, HealthDescription: "disabled", SupportsMounts: false },
};

test("node validation: the agent's own node record passes unchanged", () => {
  const fingerprint = fingerprintNode(drivers, process.cwd());
  assert.ok(fingerprint.resources, "this machine's CPU, memory and disk are fingerprinted");
  const node = buildNode({
    id: "0b6c1f0e-2f63-4a53-9f8e-1c1a3c0e9a11",
    name: "node-a",
    drivers,
    hostVolumes: { data: { Name: "data", Path: "/srv/data", ReadOnly: true } },
    attributes: fingerprint.attributes,
    meta: { rack: "r1" },
    resources: fingerprint.resources,
    reserved: reservedResources({ cpu: 500, memory: 256 }),
    controllers: { p1: controllerInfo("p1") },
    nodes: { p1: nodePluginInfo("p1", {}, { AccessibleTopology: { Segments: { zone: "z1" } } }) },
  });
  const v = validateReportedNode(JSON.parse(JSON.stringify(node)));
  const {
    Status: _s,
    StatusDescription: _d,
    StatusUpdatedAt: _u,
    CreateIndex: _c,
    ModifyIndex: _m,
    ...reported
  } = node;
  assert.deepEqual(v, reported);

  const fp = validateFingerprint({ NodeID: node.ID, Drivers: drivers, CSINodePlugins: node.CSINodePlugins });
  assert.deepEqual(fp, {
    NodeID: node.ID,
    Drivers: drivers,
    CSIControllerPlugins: {},
    CSINodePlugins: node.CSINodePlugins,
  });
  assert.equal(
    validateFingerprint({ NodeID: node.ID }).Drivers,
    undefined,
    "absent Drivers keeps the stored ones",
  );
});

test("node validation: server-owned and unknown fields are not taken from the agent", () => {
  const v = validateReportedNode({
    ID: "n1",
    Datacenter: "dc1",
    Drivers: {},
    Status: "down",
    StatusUpdatedAt: 1e300,
    DrainStrategy: { Deadline: -1 },
    CSIPluginsDetachedAt: 5,
    ModifyIndex: 99,
    Junk: "x".repeat(1000),
  });
  assert.deepEqual(Object.keys(v).sort(), [
    "Attributes",
    "CSIControllerPlugins",
    "CSINodePlugins",
    "Datacenter",
    "Drivers",
    "HostVolumes",
    "ID",
    "Meta",
    "Name",
    "NodeClass",
    "SchedulingEligibility",
  ]);
  assert.equal(v.Name, "n1", "a node without a name is shown by its ID");
});

test("node validation: map keys that would replace a prototype are refused", () => {
  const refuses = (input: unknown, field: string) =>
    assert.throws(
      () => validateReportedNode(input),
      (e: unknown) => e instanceof BerthError && e.code === "ERR_VALIDATION" && e.field === field,
    );
  const base = { ID: "n1", Datacenter: "dc1", Drivers: {} };
  refuses(
    JSON.parse(`{"ID":"n1","Datacenter":"dc1","Drivers":{"__proto__":{"Detected":true}}}`),
    "Node.Drivers.__proto__",
  );
  refuses({ ...base, CSINodePlugins: JSON.parse(`{"__proto__":{}}`) }, "Node.CSINodePlugins key");
  refuses({ ...base, HostVolumes: { "a\u001b[31m": { Path: "/x" } } }, "Node.HostVolumes.a\u001b[31m");
  refuses({ ...base, Drivers: { ["d".repeat(129)]: {} } }, `Node.Drivers.${"d".repeat(129)}`);
});

test("own-key reads: a name like an Object.prototype member finds nothing", () => {
  const drivers: Record<string, unknown> = { exec: {} };
  assert.equal(ownEntry(drivers, "constructor"), undefined);
  assert.equal(ownEntry(drivers, "toString"), undefined);
  assert.equal(ownEntry(undefined, "exec"), undefined);
  assert.deepEqual(ownEntry(drivers, "exec"), {});
});
