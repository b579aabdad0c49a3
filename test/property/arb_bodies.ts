/**
 * Valid-ish request bodies per resource, typed by the HTTP API's own DTOs (src/api/types*.ts): a
 * change to those types that these generators do not follow fails to compile. IDs come from small
 * pools so successful writes overwrite each other and the state stays small; counts stay small so
 * a successful register schedules a handful of allocs, never thousands.
 */
import fc from "fast-check";
import type {
  CSISnapshot,
  CSIVolumeSpec,
  DrainSpec,
  Job,
  RestartPolicy,
  Task,
  TaskGroup,
  VolumeCapability,
  VolumeRequest,
} from "../../src/api/types.js";
import { NODES, PLUGIN } from "./harness.js";

/** The secret values the bodies carry: no answer may ever contain them. */
export const SECRET_VALUES = ["hunter2-fz", "s3cret-fz"] as const;

export const JOB_IDS = ["fz-j1", "fz-j2", "fz-j3"] as const;
export const VOLUME_IDS = ["fz-v1", "fz-v2", "fz-v3"] as const;

export const jobId = fc.constantFrom(...JOB_IDS);
export const volumeId = fc.constantFrom(...VOLUME_IDS);
export const nodeId = fc.constantFrom(...NODES);
const pluginId = fc.constantFrom(PLUGIN, PLUGIN, "fz-missing");
const namespace = fc.constantFrom("default", "default", "fz-ns");
const smallMap = fc.dictionary(fc.constantFrom("a", "b", "mode"), fc.constantFrom("x", "1", ""), {
  maxKeys: 2,
});
const NS = 1_000_000_000;

const accessMode = fc.constantFrom(
  "single-node-reader-only",
  "single-node-writer",
  "multi-node-reader-only",
  "multi-node-single-writer",
  "multi-node-multi-writer",
);
const attachmentMode = fc.constantFrom("file-system", "block-device");

const restartPolicy: fc.Arbitrary<RestartPolicy> = fc.record({
  Attempts: fc.integer({ min: 0, max: 3 }),
  Interval: fc.constantFrom(60 * NS, 300 * NS),
  Delay: fc.constantFrom(NS, 15 * NS),
  Mode: fc.constantFrom("fail", "delay"),
});

const volumeRequest: fc.Arbitrary<VolumeRequest> = fc.record({
  Name: fc.constant("data"),
  Type: fc.constantFrom("csi", "csi", "host"),
  Source: volumeId,
  ReadOnly: fc.boolean(),
  AccessMode: fc.oneof(fc.constant(""), accessMode),
  AttachmentMode: fc.oneof(fc.constant(""), attachmentMode),
  MountOptions: fc.option(fc.record({ FSType: fc.constantFrom("", "ext4"), MountFlags: fc.constant([]) })),
  PerAlloc: fc.boolean(),
});

function task(withVolume: boolean): fc.Arbitrary<Task> {
  return fc.record({
    Name: fc.constantFrom("t", "web"),
    Driver: fc.constantFrom("exec", "raw_exec"),
    Config: fc.record({ command: fc.constant("/bin/true"), args: fc.constant(["-x"]) }),
    Env: smallMap,
    VolumeMounts: withVolume
      ? fc.constant([{ Volume: "data", Destination: "/data", ReadOnly: false, PropagationMode: "private" }])
      : fc.constant([]),
    CSIPluginConfig: fc.option(
      fc.record({
        ID: fc.constant(PLUGIN),
        Type: fc.constantFrom("node", "controller", "monolith"),
        MountDir: fc.constant("/csi"),
        StagePublishBaseDir: fc.constant(""),
        HealthTimeout: fc.constant(30 * NS),
      }),
      { freq: 4 },
    ),
    KillTimeout: fc.constantFrom(0, 5 * NS),
    RestartPolicy: fc.option(restartPolicy),
    Constraints: fc.option(
      fc.array(
        fc.record({
          LTarget: fc.constant("${node.unique.name}"),
          RTarget: nodeId,
          Operand: fc.constantFrom("=", "!="),
        }),
        { maxLength: 1 },
      ),
    ),
  });
}

const taskGroup: fc.Arbitrary<TaskGroup> = fc.boolean().chain((withVolume) =>
  fc.record({
    Name: fc.constantFrom("g", "h"),
    Count: fc.integer({ min: 0, max: 2 }),
    Volumes: withVolume ? volumeRequest.map((v) => ({ data: v })) : fc.constant({}),
    Tasks: fc.array(task(withVolume), { minLength: 1, maxLength: 2 }),
    RestartPolicy: fc.option(restartPolicy),
    ReschedulePolicy: fc.option(
      fc.record({
        Attempts: fc.integer({ min: 0, max: 3 }),
        Interval: fc.constant(3600 * NS),
        Delay: fc.constant(30 * NS),
        DelayFunction: fc.constantFrom("constant", "exponential", "fibonacci"),
        MaxDelay: fc.constant(3600 * NS),
        Unlimited: fc.boolean(),
      }),
    ),
  }),
);

export const job: fc.Arbitrary<Job> = fc.record({
  ID: jobId,
  Name: fc.constantFrom("", "web"),
  Namespace: namespace,
  Type: fc.constantFrom("service", "batch", "system"),
  Datacenters: fc.constantFrom(["dc1"], ["*"], []),
  Priority: fc.integer({ min: 1, max: 100 }),
  Stop: fc.boolean(),
  Status: fc.constant(""),
  TaskGroups: fc.array(taskGroup, { minLength: 1, maxLength: 2 }),
  Version: fc.constant(0),
  SubmitTime: fc.constant(0),
  CreateIndex: fc.constant(0),
  ModifyIndex: fc.constant(0),
  JobModifyIndex: fc.constant(0),
});

const capability: fc.Arbitrary<VolumeCapability> = fc.record({
  AccessMode: accessMode,
  AttachmentMode: attachmentMode,
});

export const volumeSpec: fc.Arbitrary<CSIVolumeSpec> = fc.record(
  {
    ID: volumeId,
    Name: fc.constantFrom("data", ""),
    Namespace: namespace,
    ExternalID: fc.constantFrom("ext-1", "ext-2"),
    PluginID: pluginId,
    RequestedCapabilities: fc.array(capability, { minLength: 1, maxLength: 2 }),
    MountOptions: fc.option(
      fc.record({ FSType: fc.constantFrom("", "ext4"), MountFlags: fc.constant(["noatime"]) }),
    ),
    Secrets: fc.option(fc.constant({ password: SECRET_VALUES[0] })),
    Parameters: smallMap,
    Context: smallMap,
    RequestedCapacityMin: fc.constantFrom(0, 1024, 1 << 30),
    RequestedCapacityMax: fc.constantFrom(0, 1 << 30),
    SnapshotID: fc.constant(""),
    CloneID: fc.constant(""),
    RequestedTopologies: fc.constant(null),
  },
  { requiredKeys: ["ID", "PluginID"] },
);

export const drainSpec: fc.Arbitrary<DrainSpec> = fc.record({
  Deadline: fc.constantFrom(0, -1, 60 * NS, 3600 * NS),
  IgnoreSystemJobs: fc.boolean(),
});

export const drainBody = fc.record({
  DrainSpec: fc.option(drainSpec),
  MarkEligible: fc.boolean(),
  Meta: fc.option(smallMap),
});

export const eligibilityBody = fc.record({ Eligibility: fc.constantFrom("eligible", "ineligible") });

type SnapshotRequest = Pick<CSISnapshot, "SourceVolumeID" | "Name" | "Secrets" | "Parameters">;
export const snapshotBody = fc.record({
  Snapshots: fc.array(
    fc.record<SnapshotRequest>({
      SourceVolumeID: volumeId,
      Name: fc.constantFrom("", "snap"),
      Secrets: fc.option(fc.constant({ token: SECRET_VALUES[1] })),
      Parameters: fc.option(smallMap),
    }),
    { minLength: 1, maxLength: 2 },
  ),
});
