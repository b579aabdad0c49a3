/** Canned, Nomad-shaped API answers (job, alloc, node, volume, plugin) for the CLI tests. */

/** The tests' "now": 2026-01-01T12:00:00Z. */
export const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
/** Unix nanoseconds `minutes` before NOW. */
export const nsAgo = (minutes: number) => (NOW - minutes * 60_000) * 1e6;

export const JOB_ID = "writer";
export const ALLOC_ID = "a1b2c3d4-0000-4000-8000-000000000001";
export const NODE_ID = "f00dfeed-0000-4000-8000-000000000002";

export const job = {
  ID: JOB_ID,
  Name: JOB_ID,
  Namespace: "default",
  Type: "batch",
  Datacenters: ["dc1"],
  Priority: 50,
  Stop: false,
  Status: "running",
  TaskGroups: [
    {
      Name: "writer",
      Count: 1,
      Volumes: {
        data: {
          Name: "data",
          Type: "csi",
          Source: "demo",
          ReadOnly: false,
          AccessMode: "single-node-writer",
          AttachmentMode: "file-system",
          MountOptions: null,
          PerAlloc: false,
        },
      },
      Tasks: [
        {
          Name: "writer",
          Driver: "exec",
          Config: { command: "/bin/sh" },
          Env: {},
          VolumeMounts: [
            { Volume: "data", Destination: "/data", ReadOnly: false, PropagationMode: "private" },
          ],
          CSIPluginConfig: null,
          KillTimeout: 5e9,
          RestartPolicy: null,
        },
      ],
      RestartPolicy: null,
    },
  ],
  Version: 2,
  SubmitTime: Date.UTC(2026, 0, 1, 11, 0, 0) * 1e6,
  CreateIndex: 10,
  ModifyIndex: 12,
  JobModifyIndex: 12,
};

export const jobStub = {
  ID: JOB_ID,
  Name: JOB_ID,
  Namespace: "default",
  Type: "batch",
  Priority: 50,
  Status: "running",
  Stop: false,
  CreateIndex: 10,
  ModifyIndex: 12,
  JobModifyIndex: 12,
  SubmitTime: job.SubmitTime,
};

export const allocStub = {
  ID: ALLOC_ID,
  Namespace: "default",
  Name: "writer.writer[0]",
  NodeID: NODE_ID,
  NodeName: "node-1",
  JobID: JOB_ID,
  TaskGroup: "writer",
  DesiredStatus: "run",
  DesiredDescription: "",
  ClientStatus: "running",
  ClientDescription: "Tasks are running",
  TaskStates: {
    writer: {
      State: "running",
      Failed: false,
      Restarts: 0,
      StartedAt: "2026-01-01T11:56:00Z",
      FinishedAt: null,
      Events: [
        { Type: "Received", Time: nsAgo(5), DisplayMessage: "Task received by client", Details: {} },
        { Type: "Started", Time: nsAgo(4), DisplayMessage: "Task started by client", Details: {} },
      ],
    },
  },
  CreateIndex: 13,
  ModifyIndex: 15,
  CreateTime: nsAgo(5),
  ModifyTime: nsAgo(4),
};

export const alloc = { ...allocStub, Job: job };

const csiInfo = (healthy: boolean) => ({
  PluginID: "hostpath",
  AllocID: "pluginalloc",
  Healthy: healthy,
  HealthDescription: healthy ? "healthy" : "probe failed",
  UpdateTime: NOW,
  Provider: "hostpath.csi.berth",
  ProviderVersion: "0.1.0",
  RequiresControllerPlugin: true,
  RequiresTopologies: false,
  ControllerInfo: null,
  NodeInfo: null,
});

export const nodeStub = {
  ID: NODE_ID,
  Name: "node-1",
  Datacenter: "dc1",
  NodeClass: "",
  Status: "ready",
  StatusDescription: "",
  SchedulingEligibility: "eligible",
  Drain: false,
  Drivers: {},
  CreateIndex: 1,
  ModifyIndex: 2,
};

export const node = {
  ...nodeStub,
  Drivers: {
    exec: {
      Attributes: { "driver.exec.mounts": "true" },
      Detected: true,
      Healthy: true,
      HealthDescription: "Healthy",
    },
    docker: {
      Attributes: { "driver.docker.mounts": "true" },
      Detected: false,
      Healthy: false,
      HealthDescription: "not found",
    },
  },
  CSIControllerPlugins: { hostpath: csiInfo(true) },
  CSINodePlugins: { hostpath: csiInfo(true) },
};

/** The fields a volume's list stub shares with its full record. */
const volumeShared = {
  ID: "demo",
  Namespace: "default",
  Name: "demo",
  ExternalID: "vol-123",
  AccessMode: "single-node-writer",
  AttachmentMode: "file-system",
  Schedulable: true,
  PluginID: "hostpath",
  Provider: "hostpath.csi.berth",
  ControllerRequired: true,
  ControllersHealthy: 1,
  ControllersExpected: 1,
  NodesHealthy: 1,
  NodesExpected: 2,
  ResourceExhausted: null,
  CreateIndex: 20,
  ModifyIndex: 21,
};

export const volume = {
  ...volumeShared,
  ProviderVersion: "0.1.0",
  RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
  MountOptions: { FSType: "ext4", MountFlags: ["[REDACTED]"] },
  Secrets: null,
  Parameters: {},
  Context: {},
  Capacity: 10 * 2 ** 20,
  RequestedCapacityMin: 10 * 2 ** 20,
  RequestedCapacityMax: 2 ** 30,
  SnapshotID: "",
  CloneID: "",
  Topologies: [{ Segments: { rack: "r1" } }],
  RequestedTopologies: null,
  ReadClaims: {},
  WriteClaims: {},
  PastClaims: {},
  ReadAllocs: {},
  WriteAllocs: { [ALLOC_ID]: null },
  Allocations: [allocStub],
};

export const volumeStub = { ...volumeShared, Topologies: [], CurrentReaders: 0, CurrentWriters: 1 };

export const pluginStub = {
  ID: "hostpath",
  Provider: "hostpath.csi.berth",
  ControllerRequired: true,
  ControllersHealthy: 1,
  ControllersExpected: 1,
  NodesHealthy: 1,
  NodesExpected: 1,
  CreateIndex: 5,
  ModifyIndex: 6,
};

export const plugin = {
  ...pluginStub,
  Version: "0.1.0",
  Controllers: {
    [NODE_ID]: {
      ...csiInfo(true),
      ControllerInfo: {
        SupportsCreateDelete: true,
        SupportsAttachDetach: true,
        SupportsListVolumes: false,
        SupportsListSnapshots: true,
      },
    },
  },
  Nodes: {
    [NODE_ID]: {
      ...csiInfo(true),
      RequiresTopologies: true,
      NodeInfo: {
        ID: "node-1",
        MaxVolumes: 0,
        AccessibleTopology: { Segments: { zone: "z1", rack: "r1" } },
        RequiresNodeStageVolume: true,
      },
    },
  },
  Allocations: [allocStub],
};
