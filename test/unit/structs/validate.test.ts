import { test } from "node:test";
import assert from "node:assert/strict";
import { validateVolumeSpec } from "../../../src/structs/volume_validate.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { redactVolume } from "../../../src/structs/redact.js";
import { BerthError } from "../../../src/structs/errors.js";
import { NS_PER_S } from "../../../src/structs/job.js";

const cap = { AccessMode: "single-node-writer", AttachmentMode: "file-system" };
const spec = (over: Record<string, unknown> = {}) => ({
  ID: "v1",
  PluginID: "p1",
  ExternalID: "e1",
  RequestedCapabilities: [cap],
  ...over,
});

function refused(fn: () => unknown, field: string, message?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof BerthError);
    assert.equal(err.code, "ERR_VALIDATION");
    assert.equal(err.field, field);
    if (message) assert.match(err.message, message);
    return true;
  });
}

test("volume spec: a valid register spec normalises with defaults", () => {
  const v = validateVolumeSpec(spec(), "register", "Volumes[0]");
  assert.equal(v.Namespace, "default");
  assert.equal(v.Name, "v1");
  assert.deepEqual(v.ReadClaims, {});
});

test("volume spec: missing ID, PluginID, capability; a register needs no ExternalID", () => {
  refused(
    () => validateVolumeSpec(spec({ ID: undefined }), "register", "Volumes[0]"),
    "Volumes[0].ID",
    /required/,
  );
  refused(() => validateVolumeSpec(spec({ PluginID: "" }), "register", "Volumes[0]"), "Volumes[0].PluginID");
  refused(
    () => validateVolumeSpec(spec({ RequestedCapabilities: [] }), "register", "Volumes[0]"),
    "Volumes[0].RequestedCapabilities",
  );
  // Nomad's server does not require an external ID to register (the endpoint resolves it).
  assert.equal(validateVolumeSpec(spec({ ExternalID: "" }), "register", "Volumes[0]").ExternalID, "");
  assert.equal(validateVolumeSpec(spec({ ExternalID: undefined }), "register").ExternalID, "");
  assert.equal(validateVolumeSpec(spec({ ExternalID: "" }), "create").ExternalID, "");
});

test("volume spec: unknown access mode names the field and the allowed values", () => {
  refused(
    () =>
      validateVolumeSpec(
        spec({ RequestedCapabilities: [{ AccessMode: "foo", AttachmentMode: "file-system" }] }),
        "register",
        "Volumes[0]",
      ),
    "Volumes[0].RequestedCapabilities[0].AccessMode",
    /unknown access mode "foo" \(want one of "single-node-reader-only"/,
  );
  refused(
    () =>
      validateVolumeSpec(
        spec({ RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "disk" }] }),
        "create",
      ),
    "Volume.RequestedCapabilities[0].AttachmentMode",
  );
});

test("volume spec: a path-escaping ID is refused", () => {
  refused(
    () => validateVolumeSpec(spec({ ID: "../../etc" }), "register", "Volumes[0]"),
    "Volumes[0].ID",
    /not a valid ID/,
  );
  refused(() => validateVolumeSpec(spec({ PluginID: "a/b" }), "register"), "Volume.PluginID");
});

test("volume spec: capacity min must not exceed max; wrong types are refused", () => {
  refused(
    () => validateVolumeSpec(spec({ RequestedCapacityMin: 10, RequestedCapacityMax: 5 }), "create"),
    "Volume.RequestedCapacityMin",
  );
  refused(
    () => validateVolumeSpec(spec({ RequestedCapacityMin: "10" }), "create"),
    "Volume.RequestedCapacityMin",
    /number/,
  );
  refused(() => validateVolumeSpec(spec({ Secrets: { k: 1 } }), "create"), "Volume.Secrets.k");
});

test("redaction: secrets null and non-empty mount flags replaced", () => {
  const v = validateVolumeSpec(
    spec({ Secrets: { password: "hunter2" }, MountOptions: { FSType: "ext4", MountFlags: ["pw=hunter2"] } }),
    "register",
  );
  const r = redactVolume(v);
  assert.equal(r.Secrets, null);
  assert.deepEqual(r.MountOptions, { FSType: "ext4", MountFlags: ["[REDACTED]"] });
  assert.ok(!JSON.stringify(r).includes("hunter2"));
  assert.deepEqual(
    redactVolume({ ...v, MountOptions: { FSType: "", MountFlags: [] } }).MountOptions?.MountFlags,
    [],
  );
});

const job = (over: Record<string, unknown> = {}, group: Record<string, unknown> = {}) => ({
  ID: "web",
  TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }], ...group }],
  ...over,
});

test("job: Nomad defaults", () => {
  const j = validateJob(job());
  assert.equal(j.Namespace, "default");
  assert.equal(j.Type, "service");
  assert.deepEqual(j.Datacenters, ["*"], "Nomad's default since 1.5: every datacenter");
  assert.equal(j.Priority, 50);
  assert.equal(j.TaskGroups[0]!.Count, 1);
  assert.equal(j.TaskGroups[0]!.Tasks[0]!.KillTimeout, 5 * NS_PER_S);
});

test("job: CSI volume requests need a valid source and modes", () => {
  const vol = (v: Record<string, unknown>) =>
    job(
      {},
      {
        Volumes: {
          data: {
            Type: "csi",
            Source: "v1",
            AccessMode: "single-node-writer",
            AttachmentMode: "file-system",
            ...v,
          },
        },
      },
    );
  assert.equal(validateJob(vol({})).TaskGroups[0]!.Volumes.data!.Source, "v1");
  refused(() => validateJob(vol({ Source: "../../etc" })), "Job.TaskGroups[0].Volumes.data.Source");
  refused(
    () => validateJob(vol({ AccessMode: "foo" })),
    "Job.TaskGroups[0].Volumes.data.AccessMode",
    /unknown access mode "foo"/,
  );
  refused(
    () => validateJob(vol({ AttachmentMode: undefined })),
    "Job.TaskGroups[0].Volumes.data.AttachmentMode",
    /required/,
  );
});

test("job: volume_mount must name a group volume and an absolute destination", () => {
  const mount = (m: Record<string, unknown>) =>
    job({}, { Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [m] }] });
  refused(
    () => validateJob(mount({ Volume: "nope", Destination: "/d" })),
    "Job.TaskGroups[0].Tasks[0].VolumeMounts[0].Volume",
    /no group volume/,
  );
  const withVol = (m: Record<string, unknown>) =>
    job(
      {},
      {
        Volumes: {
          data: {
            Type: "csi",
            Source: "v1",
            AccessMode: "single-node-writer",
            AttachmentMode: "file-system",
          },
        },
        Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [m] }],
      },
    );
  refused(
    () => validateJob(withVol({ Volume: "data", Destination: "rel" })),
    "Job.TaskGroups[0].Tasks[0].VolumeMounts[0].Destination",
    /absolute/,
  );
  assert.equal(
    validateJob(withVol({ Volume: "data", Destination: "/d" })).TaskGroups[0]!.Tasks[0]!.VolumeMounts[0]!
      .PropagationMode,
    "private",
  );
});

test("job: csi_plugin needs ID, a known type and an absolute mount dir", () => {
  const plugin = (p: Record<string, unknown>) =>
    job({}, { Tasks: [{ Name: "t", Driver: "exec", CSIPluginConfig: p }] });
  refused(
    () => validateJob(plugin({ ID: "p", Type: "both", MountDir: "/csi" })),
    "Job.TaskGroups[0].Tasks[0].CSIPluginConfig.Type",
    /unknown plugin type/,
  );
  refused(
    () => validateJob(plugin({ Type: "node", MountDir: "/csi" })),
    "Job.TaskGroups[0].Tasks[0].CSIPluginConfig.ID",
  );
  refused(
    () => validateJob(plugin({ ID: "p", Type: "node", MountDir: "csi" })),
    "Job.TaskGroups[0].Tasks[0].CSIPluginConfig.MountDir",
  );
  assert.equal(
    validateJob(plugin({ ID: "p", Type: "monolith", MountDir: "/csi" })).TaskGroups[0]!.Tasks[0]!
      .CSIPluginConfig!.Type,
    "monolith",
  );
});

test("job: missing ID, bad ID, no groups, wrong types", () => {
  refused(() => validateJob(job({ ID: undefined })), "Job.ID");
  refused(() => validateJob(job({ ID: "../x" })), "Job.ID");
  refused(() => validateJob(job({ TaskGroups: [] })), "Job.TaskGroups");
  refused(() => validateJob(job({}, { Count: "2" })), "Job.TaskGroups[0].Count");
  refused(() => validateJob(job({ Type: "daemon" })), "Job.Type", /unknown job type/);
});

test("job and volume numbers out of range are refused, not stored with lost precision", () => {
  refused(() => validateJob(job({}, { Count: 1e300 })), "Job.TaskGroups[0].Count", /at most 10000/);
  refused(() => validateJob(job({}, { Count: 10_001 })), "Job.TaskGroups[0].Count", /at most 10000/);
  assert.equal(validateJob(job({}, { Count: 10_000 })).TaskGroups[0]!.Count, 10_000);
  refused(() => validateJob(job({ Priority: 1e9 })), "Job.Priority", /at most 100/);
  refused(() => validateJob(job({ Priority: 0 })), "Job.Priority", /at least 1/);
  assert.equal(validateJob(job({ Priority: 100 })).Priority, 100);
  // 2^64 bytes: past 2^53 - 1 a JSON number is no longer exact.
  refused(
    () => validateVolumeSpec(spec({ RequestedCapacityMin: 2 ** 64 }), "register", "Volumes[0]"),
    "Volumes[0].RequestedCapacityMin",
    /at most 9007199254740991/,
  );
});
