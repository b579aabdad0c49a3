/**
 * Issue 30: size bounds on a volume's free-form fields (volume_limits.ts) and on IDs. 1 MB of
 * secrets and a 100k-character external ID are refused with ERR_VALIDATION naming the field,
 * never echoing a secret; values at the bound are accepted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { validateVolumeSpec } from "../../../src/structs/volume_validate.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { BerthError } from "../../../src/structs/errors.js";
import { recordProblem } from "../../../src/server/state/quarantine/checks.js";
import {
  MAX_EXTERNAL_ID_BYTES,
  MAX_MAP_BYTES,
  MAX_MAP_VALUE_BYTES,
  MAX_VOLUME_NAME_BYTES,
} from "../../../src/structs/volume_limits.js";

const cap = { AccessMode: "single-node-writer", AttachmentMode: "file-system" };
const spec = (over: Record<string, unknown>) => ({
  ID: "v1",
  PluginID: "p1",
  RequestedCapabilities: [cap],
  ...over,
});

function refused(fn: () => unknown, field: string, message: RegExp, secret?: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof BerthError);
    assert.equal(err.code, "ERR_VALIDATION");
    assert.equal(err.field, field);
    assert.match(err.message, message);
    if (secret) assert.ok(!err.message.includes(secret), "the error shows the secret");
    return true;
  });
}

const register = (over: Record<string, unknown>) => () =>
  validateVolumeSpec(spec(over), "register", "Volumes[0]");

test("1 MB of secrets is refused, naming the field and never the value", () => {
  const big = "s3cr3t".repeat(175_000);
  refused(register({ Secrets: { key: big } }), "Volumes[0].Secrets.key", /at most 32768 bytes/, "s3cr3t");
  // Many values each under the per-value bound: the map's total refuses them.
  const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, "x".repeat(30_000)]));
  refused(register({ Secrets: many }), "Volumes[0].Secrets", /at most 65536 bytes in all/);
  refused(register({ Parameters: many }), "Volumes[0].Parameters", /in all/);
  refused(register({ Context: many }), "Volumes[0].Context", /in all/);
  refused(
    register({ Secrets: { ["k".repeat(300)]: "v" } }),
    "Volumes[0].Secrets",
    /a key must be at most 256/,
  );
  // At the bounds: accepted.
  const atValue = { a: "x".repeat(MAX_MAP_VALUE_BYTES) };
  assert.equal(
    validateVolumeSpec(spec({ Secrets: atValue }), "register").Secrets?.a?.length,
    MAX_MAP_VALUE_BYTES,
  );
  const atTotal = {
    a: "x".repeat(MAX_MAP_VALUE_BYTES - 1),
    b: "y".repeat(MAX_MAP_BYTES - MAX_MAP_VALUE_BYTES - 1),
  };
  assert.ok(validateVolumeSpec(spec({ Parameters: atTotal }), "register").Parameters.b);
});

test("a 100k-character external ID and an overlong name are refused; at the bound they pass", () => {
  refused(register({ ExternalID: "e".repeat(100_000) }), "Volumes[0].ExternalID", /at most 1024 bytes/);
  refused(register({ Name: "n".repeat(MAX_VOLUME_NAME_BYTES + 1) }), "Volumes[0].Name", /at most 256 bytes/);
  // Bytes, not characters: 600 two-byte characters pass 1024 bytes.
  refused(register({ ExternalID: "é".repeat(600) }), "Volumes[0].ExternalID", /it is 1200/);
  const v = validateVolumeSpec(spec({ ExternalID: "e".repeat(MAX_EXTERNAL_ID_BYTES) }), "create");
  assert.equal(v.ExternalID.length, MAX_EXTERNAL_ID_BYTES);
});

test("a name with a control character is refused before any plugin sees it; other characters pass", () => {
  refused(register({ Name: "a\u0000b" }), "Volumes[0].Name", /contains control characters/);
  refused(register({ Name: "tab\there" }), "Volumes[0].Name", /contains control characters/);
  refused(register({ Name: "del\u007f" }), "Volumes[0].Name", /contains control characters/);
  assert.equal(validateVolumeSpec(spec({ Name: "données été" }), "create").Name, "données été");
});

test("mount flags are bounded on volumes and on a job's volume requests", () => {
  refused(
    register({ MountOptions: { MountFlags: Array.from({ length: 65 }, () => "ro") } }),
    "Volumes[0].MountOptions.MountFlags",
    /at most 64 flags/,
  );
  const job = {
    ID: "j",
    TaskGroups: [
      {
        Name: "g",
        Volumes: {
          data: {
            Type: "csi",
            Source: "v1",
            AccessMode: "single-node-writer",
            AttachmentMode: "file-system",
            MountOptions: { MountFlags: ["x".repeat(300)] },
          },
        },
        Tasks: [{ Name: "t", Driver: "exec" }],
      },
    ],
  };
  refused(
    () => validateJob(job),
    "Job.TaskGroups[0].Volumes.data.MountOptions.MountFlags[0]",
    /at most 256 bytes/,
  );
});

test("IDs past 128 characters are refused (volume, job)", () => {
  refused(register({ ID: "v".repeat(100_000) }), "Volumes[0].ID", /at most 128 characters/);
  const job = {
    ID: "j".repeat(100_000),
    TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }],
  };
  refused(() => validateJob(job), "Job.ID", /at most 128 characters/);
});

test("a stored volume past the bounds still loads: bounds are for input, never a cause of quarantine", () => {
  const big = { ctx: "c".repeat(100_000) };
  const vol = validateVolumeSpec(spec({ ExternalID: "e".repeat(5000) }), "create", "Volume", {
    bounded: false,
  });
  const json = JSON.stringify({ ...vol, Context: big, CreateIndex: 7 });
  assert.equal(
    recordProblem("volumes", { namespace: "default", id: "v1", plugin_id: "p1", json }),
    undefined,
  );
  refused(() => validateVolumeSpec(JSON.parse(json), "create"), "Volume.ExternalID", /at most 1024 bytes/);
});
