/** Builders for alloc runner / csi_hook tests: a job with CSI volumes, a fake RPC, fake tasks. */
import type { Allocation, TaskState } from "../../../src/structs/alloc.js";
import type { Job, Task, VolumeRequest } from "../../../src/structs/job.js";
import { BerthError, type ErrorCode } from "../../../src/structs/errors.js";
import type { ServerMethods, VolumeClaimRequest } from "../../../src/structs/rpc.js";
import type { AllocHookResources, CsiMount } from "../../../src/client/allocrunner/hook_resources.js";
import type { ServerRpc } from "../../../src/client/allocrunner/csi_hook.js";
import { claimedVolume } from "./fixtures.js";
import type { RecordedCall } from "../../fakes/csi_client.js";

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

/** Records RPC calls into `log` (shared with the fake CSI client, so order is observable). */
export class FakeRpc implements ServerRpc {
  claimFailures: ErrorCode[] = [];
  unpublishFailures: ErrorCode[] = [];
  /** When set, every Unpublish fails with this code (e.g. a server that is away). */
  unpublishAlways: ErrorCode | null = null;
  readonly claims: VolumeClaimRequest[] = [];
  /** Volume IDs whose plugin the hook looked up (CSIVolume.GetForNode). */
  readonly lookups: string[] = [];
  /** Every CSIVolume.ReleaseProgress report, in order. */
  readonly progress: ServerMethods["CSIVolume.ReleaseProgress"][0][] = [];

  constructor(readonly log: RecordedCall[]) {}

  async call<M extends keyof ServerMethods>(
    method: M,
    req: ServerMethods[M][0],
    opts?: { signal?: AbortSignal },
  ): Promise<ServerMethods[M][1]> {
    opts?.signal?.throwIfAborted();
    if (method === "CSIVolume.GetForNode") {
      // Not logged: the call-order assertions are about claims, releases and CSI calls.
      const r = req as ServerMethods["CSIVolume.GetForNode"][0];
      this.lookups.push(r.VolumeID);
      const res: ServerMethods["CSIVolume.GetForNode"][1] = {
        ID: r.VolumeID,
        Namespace: r.Namespace,
        PluginID: "fake",
      };
      return res;
    }
    if (method === "CSIVolume.ReleaseProgress") {
      // Not logged either: release reports are asserted on through `progress`.
      this.progress.push(structuredClone(req as ServerMethods["CSIVolume.ReleaseProgress"][0]));
      return { Recorded: true, Index: 3 } as ServerMethods[M][1];
    }
    this.log.push({ method: `rpc:${method}`, req: structuredClone(req), start: Date.now(), end: Date.now() });
    if (method === "CSIVolume.Claim") {
      const r = req as VolumeClaimRequest;
      this.claims.push(r);
      const code = this.claimFailures.shift();
      if (code) throw new BerthError(code, `claim refused: ${code}`);
      const res: ServerMethods["CSIVolume.Claim"][1] = {
        Volume: claimedVolume({ ID: r.VolumeID, ExternalID: `ext-${r.VolumeID}` }),
        PublishContext: { from: "controller" },
        Index: 1,
      };
      return res;
    }
    if (method === "CSIVolume.Unpublish") {
      const code = this.unpublishAlways ?? this.unpublishFailures.shift();
      if (code) throw new BerthError(code, `unpublish failed: ${code}`);
      return { Index: 2 } as ServerMethods[M][1];
    }
    throw new BerthError("ERR_NOT_FOUND", `unexpected rpc ${method}`);
  }
}

/** A task that runs until finished or killed, recording the CSI mounts it was given. */
export class FakeTask {
  private st: TaskState = {
    State: "pending",
    Failed: false,
    Restarts: 0,
    StartedAt: null,
    FinishedAt: null,
    Events: [],
  };
  killedWith: string | null = null;
  shutdowns = 0;
  mountsSeen: Map<string, CsiMount> | null = null;
  /**
   * Every refreshMounts call: the host path, and the "Volume Remounted" events the task had then
   * (the alloc must refresh the tasks before it announces the remount).
   */
  readonly refreshes: { hostPath: string; remountEventsBefore: number }[] = [];
  private finishWith!: (failed: boolean) => void;
  private readonly finished = new Promise<boolean>((resolve) => (this.finishWith = resolve));

  constructor(
    private readonly hookResources: AllocHookResources,
    private readonly onStateChange: (s: TaskState) => void,
    initialEvents: TaskState["Events"] = [],
  ) {
    this.st.Events = structuredClone(initialEvents);
  }

  async run(): Promise<void> {
    this.mountsSeen = this.hookResources.getCsiMounts();
    this.set({ State: "running", StartedAt: new Date().toISOString() });
    const failed = await this.finished;
    this.set({ State: "dead", Failed: failed, FinishedAt: new Date().toISOString() });
  }

  async kill(reason: string): Promise<void> {
    this.killedWith = reason;
    this.finishWith(false);
  }

  shutdown(): void {
    this.shutdowns++;
  }

  emitEvent(type: string, message: string, details: Record<string, string> = {}): void {
    const ev = { Type: type, Time: Date.now() * 1e6, DisplayMessage: message, Details: details };
    this.set({ Events: [...this.st.Events, ev] });
  }

  async refreshMounts(hostPath: string): Promise<boolean> {
    const remountEventsBefore = this.st.Events.filter((e) => e.Type === "Volume Remounted").length;
    this.refreshes.push({ hostPath, remountEventsBefore });
    if (this.refreshFails === null) return true;
    this.emitEvent("Volume Refresh Failed", this.refreshFails);
    return false;
  }

  /** Set: every refresh fails with this reason (reported as the task runner does). */
  refreshFails: string | null = null;

  finish(failed = false): void {
    this.finishWith(failed);
  }

  state(): TaskState {
    return structuredClone(this.st);
  }

  private set(patch: Partial<TaskState>): void {
    this.st = { ...this.st, ...patch };
    this.onStateChange(this.state());
  }
}
