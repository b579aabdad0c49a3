import { test } from "node:test";
import assert from "node:assert/strict";
import { BerthError } from "../../../src/structs/errors.js";
import {
  checkJobDrivers,
  deleteRefusal,
  driverAllowed,
  requireJobNamespace,
  requireVolumeNamespace,
  validateNamespace,
  type NamespaceCapabilities,
} from "../../../src/structs/namespace.js";

function refusal(fn: () => unknown): { code: string; message: string; field: string | undefined } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof BerthError, String(err));
    return { code: err.code, message: err.message, field: err.field };
  }
  assert.fail("expected a refusal");
}

test("validateNamespace: Nomad's name rule and description limit, with Nomad's texts", () => {
  const ok = validateNamespace({ Name: "team-A-1", Description: "d", Meta: { k: "v" }, CreateIndex: 9 });
  assert.deepEqual(ok, {
    Name: "team-A-1",
    Description: "d",
    Quota: "",
    Capabilities: null,
    Meta: { k: "v" },
    CreateIndex: 0,
    ModifyIndex: 0,
  });
  assert.equal(validateNamespace({ Name: "x".repeat(128) }).Name.length, 128);

  for (const bad of ["a_b", "a.b", "a/b", "x".repeat(129), "ünï"]) {
    const r = refusal(() => validateNamespace({ Name: bad }));
    assert.equal(r.code, "ERR_VALIDATION");
    assert.equal(r.field, "Name");
    assert.equal(
      r.message,
      `Invalid namespace ${JSON.stringify(bad)}: invalid name ${JSON.stringify(bad)}. Must match regex ^[a-zA-Z0-9-]{1,128}$`,
    );
  }
  assert.match(refusal(() => validateNamespace({ Name: "-a" })).message, /Must not start with "-"/);
  assert.equal(refusal(() => validateNamespace({})).message, "Name: is required");
  assert.equal(refusal(() => validateNamespace({ Name: 5 })).message, "Name: is required");
  assert.equal(
    refusal(() => validateNamespace({ Name: "a", Description: "d".repeat(257) })).message,
    'Invalid namespace "a": description longer than 256',
  );
  assert.equal(validateNamespace({ Name: "a", Description: "d".repeat(256) }).Description.length, 256);
  assert.equal(refusal(() => validateNamespace({ Name: "a", Meta: { k: 1 } })).field, "Meta.k");
  assert.equal(
    refusal(() => validateNamespace({ Name: "a", Capabilities: { EnabledTaskDrivers: [1] } })).field,
    "Capabilities.EnabledTaskDrivers[0]",
  );
  assert.equal(refusal(() => validateNamespace("a")).field, "Namespace");
});

test("validateNamespace: Nomad's Enterprise blocks are accepted empty and refused when set", () => {
  const empty = { NodePoolConfiguration: null, VaultConfiguration: {}, RequiredExtraClaims: {} };
  assert.equal(validateNamespace({ Name: "a", ...empty }).Name, "a");
  const r = refusal(() => validateNamespace({ Name: "a", VaultConfiguration: { Default: "v" } }));
  assert.equal(r.field, "VaultConfiguration");
  assert.match(r.message, /not supported by berth/);
});

test("capabilities: an enabled list allows only its drivers, the disabled list refuses", () => {
  const caps = (c: Partial<NamespaceCapabilities>) => ({
    Name: "n",
    Capabilities: {
      EnabledTaskDrivers: [],
      DisabledTaskDrivers: [],
      EnabledNetworkModes: [],
      DisabledNetworkModes: [],
      ...c,
    },
  });
  assert.equal(driverAllowed({ Capabilities: null }, "raw_exec"), true);
  assert.equal(driverAllowed(caps({}), "raw_exec"), true);
  assert.equal(driverAllowed(caps({ EnabledTaskDrivers: ["exec"] }), "exec"), true);
  assert.equal(driverAllowed(caps({ EnabledTaskDrivers: ["exec"] }), "raw_exec"), false);
  assert.equal(
    driverAllowed(caps({ EnabledTaskDrivers: ["exec"], DisabledTaskDrivers: ["exec"] }), "exec"),
    false,
  );
  assert.equal(driverAllowed(caps({ DisabledTaskDrivers: ["raw_exec"] }), "exec"), true);

  const job = (...drivers: string[]) => ({ TaskGroups: [{ Tasks: drivers.map((Driver) => ({ Driver })) }] });
  const ns = caps({ DisabledTaskDrivers: ["raw_exec", "docker"] });
  checkJobDrivers(ns, job("exec"));
  assert.equal(
    refusal(() => checkJobDrivers(ns, job("exec", "raw_exec"))).message,
    'used task driver "raw_exec" is not allowed in namespace "n"',
  );
  assert.equal(
    refusal(() => checkJobDrivers(ns, job("raw_exec", "docker"))).message,
    'used task drivers ["raw_exec" "docker"] are not allowed in namespace "n"',
  );
});

test("writes into a namespace that does not exist are refused with Nomad's texts", () => {
  const job = refusal(() => requireJobNamespace(undefined, { ID: "web", Namespace: "ghost" }));
  assert.deepEqual(job, {
    code: "ERR_VALIDATION",
    message: 'job "web" is in nonexistent namespace "ghost"',
    field: "Job.Namespace",
  });
  const vol = refusal(() =>
    requireVolumeNamespace(undefined, { ID: "v1", Namespace: "ghost" }, "Volumes[1]"),
  );
  assert.deepEqual(vol, {
    code: "ERR_VALIDATION",
    message: "volume v1 is in nonexistent namespace ghost",
    field: "Volumes[1].Namespace",
  });
});

test("deleteRefusal: default never; live jobs, live allocs and volumes hold a namespace", () => {
  const none = { liveJobs: [], liveAllocs: [], volumes: [] };
  assert.equal(deleteRefusal("default", none), "can not delete default namespace");
  assert.equal(deleteRefusal("a", none), undefined);
  assert.equal(
    deleteRefusal("a", { ...none, liveJobs: ["web"] }),
    'namespace "a" has non-terminal jobs in regions: [global]',
  );
  assert.equal(
    deleteRefusal("a", { liveJobs: ["web"], liveAllocs: ["x"], volumes: ["v"] }),
    'namespace "a" has non-terminal jobs in regions: [global]; ' +
      'namespace "a" has non-terminal allocations in regions: [global]; ' +
      'namespace "a" has volumes associated with it in regions: [global]',
  );
});
