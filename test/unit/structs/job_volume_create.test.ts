/**
 * Volumes from the jobspec (structs/job_volume_create.ts): the `create` block's HCL decode, its
 * validation (clear 400s naming the field), the create spec of a placement, and what a plan lists.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseJobSpec } from "../../../src/api/index.js";
import { BerthError } from "../../../src/structs/errors.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import {
  createSpecFor,
  firstConsumerTopology,
  plannedVolumeCreates,
} from "../../../src/structs/job_volume_create.js";
import type { VolumeCreateSpec, VolumeRequest } from "../../../src/structs/job.js";

function job(volume: Record<string, unknown>, count = 2): Record<string, unknown> {
  return {
    ID: "db",
    TaskGroups: [
      {
        Name: "g",
        Count: count,
        Volumes: {
          data: {
            Type: "csi",
            Source: "data",
            AccessMode: "single-node-writer",
            AttachmentMode: "file-system",
            PerAlloc: true,
            ...volume,
          },
        },
        Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
      },
    ],
  };
}

function refusal(input: Record<string, unknown>): BerthError {
  try {
    validateJob(input);
  } catch (err) {
    assert.ok(err instanceof BerthError);
    assert.equal(err.code, "ERR_VALIDATION");
    return err;
  }
  assert.fail("the job was accepted");
}

const CREATE_FIELD = "Job.TaskGroups[0].Volumes.data.Create";

test("a create block decodes from HCL and validates with its defaults", async () => {
  const parsed = await parseJobSpec(
    "db.hcl",
    `job "db" {
  group "g" {
    count = 2
    volume "data" {
      type            = "csi"
      source          = "data"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
      per_alloc       = true
      create {
        plugin_id    = "hostpath"
        capacity_min = "10MiB"
        capacity_max = "20MiB"
        parameters { tier = "fast" }
        topology_request {
          required {
            topology {
              segments {
                zone = "a"
              }
            }
          }
        }
        on_purge = "delete"
      }
    }
    task "t" {
      driver = "exec"
      config { command = "true" }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`,
  );
  const j = validateJob(parsed);
  const req = j.TaskGroups[0]!.Volumes.data!;
  assert.deepEqual(req.Create, {
    PluginID: "hostpath",
    RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
    RequestedCapacityMin: 10 * 1024 * 1024,
    RequestedCapacityMax: 20 * 1024 * 1024,
    Parameters: { tier: "fast" },
    RequestedTopologies: { Required: [{ Segments: { zone: "a" } }], Preferred: null },
    SnapshotID: "",
    CloneID: "",
    OnPurge: "delete",
  });
  const plain = validateJob(job({ Create: { PluginID: "p" } }));
  assert.equal(plain.TaskGroups[0]!.Volumes.data!.Create!.OnPurge, "retain", "retain is the default");
  assert.equal(validateJob(job({})).TaskGroups[0]!.Volumes.data!.Create, undefined, "absent: not set");
});

test("the create block's refusals name the field", () => {
  const secrets = refusal(job({ Create: { PluginID: "p", Secrets: { pw: "hunter2" } } }));
  assert.equal(secrets.field, `${CREATE_FIELD}.Secrets`);
  assert.ok(!secrets.message.includes("hunter2"), "the secret's value is never in the error");
  assert.equal(refusal(job({ Create: { PluginID: "p", OnPurge: "keep" } })).field, `${CREATE_FIELD}.OnPurge`);
  assert.match(refusal(job({ Create: { PluginID: "p", Sizes: 1 } })).message, /Sizes/);
  assert.equal(refusal(job({ Create: {} })).field, `${CREATE_FIELD}.PluginID`);
  assert.equal(
    refusal(job({ Create: { PluginID: "p", RequestedCapacityMin: 20, RequestedCapacityMax: 10 } })).field,
    `${CREATE_FIELD}.RequestedCapacityMin`,
  );
  assert.equal(
    refusal(job({ Create: { PluginID: "p", SnapshotID: "s", CloneID: "c" } })).field,
    `${CREATE_FIELD}.SnapshotID`,
  );
  assert.equal(
    refusal(
      job({
        Create: {
          PluginID: "p",
          RequestedCapabilities: [{ AccessMode: "multi-node-reader-only", AttachmentMode: "file-system" }],
        },
      }),
    ).field,
    `${CREATE_FIELD}.RequestedCapabilities`,
  );
  const host = refusal(
    job({
      Type: "host",
      Source: "h",
      AccessMode: "",
      AttachmentMode: "",
      PerAlloc: false,
      Create: { PluginID: "p" },
    }),
  );
  assert.equal(host.field, CREATE_FIELD);
});

test("a placement's create spec asks for the node's topology and is marked with its job", () => {
  const j = validateJob(job({ Create: { PluginID: "p", RequestedCapacityMin: 5, OnPurge: "delete" } }));
  const req = j.TaskGroups[0]!.Volumes.data! as VolumeRequest & { Create: VolumeCreateSpec };
  const spec = createSpecFor(j, "g", req, 1, { Segments: { host: "n1" } });
  assert.equal(spec.ID, "data[1]");
  assert.equal(spec.Name, "data[1]");
  assert.equal(spec.RequestedCapacityMin, 5);
  assert.deepEqual(spec.RequestedTopologies, {
    Required: [{ Segments: { host: "n1" } }],
    Preferred: [{ Segments: { host: "n1" } }],
  });
  assert.deepEqual(spec.CreatedBy, { JobID: "db", TaskGroup: "g", Volume: "data", OnPurge: "delete" });
  const written = { Required: null, Preferred: [{ Segments: { zone: "a" } }] };
  assert.equal(firstConsumerTopology(written, null), written, "no node topology: as written");
});

test("a plan lists the volumes that do not exist yet, one per alloc index", () => {
  const j = validateJob(job({ Create: { PluginID: "p" } }, 3));
  const planned = plannedVolumeCreates(j, (_ns, id) => id === "data[1]");
  assert.deepEqual(
    planned.map((p) => [p.ID, p.PluginID, p.TaskGroup, p.Volume, p.OnPurge]),
    [
      ["data[0]", "p", "g", "data", "retain"],
      ["data[2]", "p", "g", "data", "retain"],
    ],
  );
  assert.deepEqual(
    plannedVolumeCreates({ ...j, Stop: true }, () => false),
    [],
    "a stopped job creates none",
  );
  const shared = validateJob(job({ PerAlloc: false, Create: { PluginID: "p" } }, 3));
  assert.deepEqual(
    plannedVolumeCreates(shared, () => false).map((p) => p.ID),
    ["data"],
  );
});
