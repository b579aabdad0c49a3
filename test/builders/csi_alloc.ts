/** An alloc whose job's group asks for CSI volumes, and the task and volume request it is made of. */
import type { Allocation } from "../../src/structs/alloc.js";
import type { Job, Task, VolumeRequest } from "../../src/structs/job.js";

export function volumeRequest(over: Partial<VolumeRequest> = {}): VolumeRequest {
  return {
    Name: "data",
    Type: "csi",
    Source: "vol1",
    ReadOnly: false,
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
    MountOptions: null,
    PerAlloc: false,
    ...over,
  };
}

export function task(name: string): Task {
  return {
    Name: name,
    Driver: "fake",
    Config: {},
    Env: {},
    VolumeMounts: [],
    CSIPluginConfig: null,
    KillTimeout: 0,
    RestartPolicy: null,
  };
}

export function allocWith(
  volumes: Record<string, VolumeRequest>,
  over: Partial<Allocation> = {},
): Allocation {
  const job: Job = {
    ID: "j",
    Name: "j",
    Namespace: "default",
    Type: "service",
    Datacenters: ["dc1"],
    Priority: 50,
    Stop: false,
    Status: "running",
    TaskGroups: [{ Name: "g", Count: 1, Volumes: volumes, Tasks: [task("web")], RestartPolicy: null }],
    Version: 0,
    SubmitTime: 0,
    CreateIndex: 1,
    ModifyIndex: 1,
    JobModifyIndex: 1,
  };
  return {
    ID: "alloc-1",
    Namespace: "default",
    Name: "j.g[0]",
    NodeID: "node-1",
    NodeName: "n1",
    JobID: "j",
    Job: job,
    TaskGroup: "g",
    DesiredStatus: "run",
    DesiredDescription: "",
    ClientStatus: "pending",
    ClientDescription: "",
    TaskStates: {},
    CreateIndex: 1,
    ModifyIndex: 1,
    AllocModifyIndex: 1,
    CreateTime: 0,
    ModifyTime: 0,
    ...over,
  };
}
