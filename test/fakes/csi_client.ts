/**
 * A hand-written in-memory CsiClient for unit tests: records every call (with start/end times),
 * answers from programmable capabilities, and can be told to fail the next N calls of a method or
 * to delay every call.
 */
import { BerthError, type ErrorCode } from "../../src/structs/errors.js";
import { sleep } from "../../src/internal/abort.js";
import type {
  CsiCallOptions,
  CsiClient,
  CsiControllerCapabilities,
  CsiNodeCapabilities,
  CsiNodeInfo,
  CsiPluginCapabilities,
  CsiVolumeInfo,
  CsiVolumeStats,
  ControllerExpandVolumeRequest,
  CreateSnapshotRequest,
  NodeExpandVolumeRequest,
  NodeGetVolumeStatsRequest,
  ValidateVolumeCapabilitiesRequest,
  ValidateVolumeCapabilitiesResult,
} from "../../src/csi/types.js";

export interface RecordedCall {
  method: string;
  req: unknown;
  start: number;
  end: number;
}

export const NODE_CAPS: CsiNodeCapabilities = {
  stageUnstageVolume: true,
  getVolumeStats: false,
  expandVolume: false,
  volumeCondition: false,
  singleNodeMultiWriter: false,
  volumeMountGroup: false,
};

export const CONTROLLER_CAPS: CsiControllerCapabilities = {
  createDeleteVolume: true,
  publishUnpublishVolume: true,
  listVolumes: false,
  getCapacity: false,
  createDeleteSnapshot: false,
  listSnapshots: false,
  cloneVolume: false,
  publishReadonly: true,
  expandVolume: false,
  listVolumesPublishedNodes: false,
  volumeCondition: false,
  getVolume: false,
  singleNodeMultiWriter: false,
  modifyVolume: false,
};

export class FakeCsiClient implements CsiClient {
  readonly calls: RecordedCall[] = [];
  /** Plugin-view paths a stage or publish "mounted" and nothing unmounted since. */
  readonly mounts = new Set<string>();
  /** Stage and publish answer success without mounting (a broken plugin). */
  mountsNothing = false;
  /** Told of every mount change, e.g. to mirror it into a test's host-view set. */
  onMountChange: ((pluginPath: string, mounted: boolean) => void) | null = null;
  closed = false;
  ready = true;
  delayMs = 0;
  pluginCaps: CsiPluginCapabilities = {
    controllerService: true,
    volumeAccessibilityConstraints: false,
    groupControllerService: false,
    onlineExpansion: false,
    offlineExpansion: false,
  };
  nodeCaps: CsiNodeCapabilities = { ...NODE_CAPS };
  controllerCaps: CsiControllerCapabilities = { ...CONTROLLER_CAPS };
  nodeInfo: CsiNodeInfo = { nodeId: "ext-node-1", maxVolumesPerNode: 10, accessibleTopology: null };
  createResult: CsiVolumeInfo = {
    volumeId: "ext-vol-1",
    capacityBytes: 1 << 30,
    volumeContext: { created: "yes" },
    contentSource: null,
    accessibleTopology: [{ segments: { zone: "a" } }],
  };
  private readonly failures = new Map<string, ErrorCode[]>();

  constructor(readonly endpoint = "unix:///fake.sock") {}

  /** The next `codes.length` calls of `method` fail with these codes, in order. */
  failNext(method: string, ...codes: ErrorCode[]): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), ...codes]);
  }

  /** Drops the failures still queued for `method`. */
  stopFailing(method: string): void {
    this.failures.delete(method);
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  methods(): string[] {
    return this.calls.map((c) => c.method);
  }

  close(): void {
    this.closed = true;
  }

  private async record<T>(
    method: string,
    req: unknown,
    opts: CsiCallOptions | undefined,
    answer: () => T,
  ): Promise<T> {
    const call: RecordedCall = { method, req: structuredClone(req), start: Date.now(), end: 0 };
    this.calls.push(call);
    try {
      if (this.delayMs > 0) await sleep(this.delayMs, opts?.signal);
      const code = this.failures.get(method)?.shift();
      if (code) throw new BerthError(code, `${method}: fake ${code}`);
      return answer();
    } finally {
      call.end = Date.now();
    }
  }

  getPluginInfo(o?: CsiCallOptions) {
    return this.record("GetPluginInfo", null, o, () => ({
      name: "fake.csi",
      vendorVersion: "1.2.3",
      manifest: {},
    }));
  }
  getPluginCapabilities(o?: CsiCallOptions) {
    return this.record("GetPluginCapabilities", null, o, () => ({ ...this.pluginCaps }));
  }
  probe(o?: CsiCallOptions) {
    return this.record("Probe", null, o, () => ({ ready: this.ready }));
  }
  controllerGetCapabilities(o?: CsiCallOptions) {
    return this.record("ControllerGetCapabilities", null, o, () => ({ ...this.controllerCaps }));
  }
  createVolume(req: unknown, o?: CsiCallOptions) {
    return this.record("CreateVolume", req, o, () => structuredClone(this.createResult));
  }
  deleteVolume(req: unknown, o?: CsiCallOptions) {
    return this.record("DeleteVolume", req, o, () => undefined);
  }
  controllerPublishVolume(req: unknown, o?: CsiCallOptions) {
    return this.record("ControllerPublishVolume", req, o, () => ({
      publishContext: { device: "/dev/fake" },
    }));
  }
  controllerUnpublishVolume(req: unknown, o?: CsiCallOptions) {
    return this.record("ControllerUnpublishVolume", req, o, () => undefined);
  }
  validateVolumeCapabilities(
    req: ValidateVolumeCapabilitiesRequest,
    o?: CsiCallOptions,
  ): Promise<ValidateVolumeCapabilitiesResult> {
    return this.record("ValidateVolumeCapabilities", req, o, () => ({
      confirmed: { volumeCapabilities: req.volumeCapabilities },
      message: "",
    }));
  }
  nodeGetCapabilities(o?: CsiCallOptions) {
    return this.record("NodeGetCapabilities", null, o, () => ({ ...this.nodeCaps }));
  }
  nodeGetInfo(o?: CsiCallOptions) {
    return this.record("NodeGetInfo", null, o, () => structuredClone(this.nodeInfo));
  }
  nodeStageVolume(req: { volumeId?: string; stagingTargetPath: string }, o?: CsiCallOptions) {
    return this.record("NodeStageVolume", req, o, () => this.mount(req.stagingTargetPath, true));
  }
  nodeUnstageVolume(req: { stagingTargetPath: string }, o?: CsiCallOptions) {
    return this.record("NodeUnstageVolume", req, o, () => this.mount(req.stagingTargetPath, false));
  }
  nodePublishVolume(req: { volumeId?: string; targetPath: string }, o?: CsiCallOptions) {
    return this.record("NodePublishVolume", req, o, () => this.mount(req.targetPath, true));
  }
  nodeUnpublishVolume(req: { targetPath: string }, o?: CsiCallOptions) {
    return this.record("NodeUnpublishVolume", req, o, () => this.mount(req.targetPath, false));
  }

  /**
   * What a successful stage/publish (unstage/unpublish) does to the fake's mounts, in the plugin's
   * view; with `mountsNothing` a stage or publish answers success and mounts nothing.
   */
  private mount(pluginPath: string, on: boolean): undefined {
    if (on && this.mountsNothing) return undefined;
    if (on) this.mounts.add(pluginPath);
    else this.mounts.delete(pluginPath);
    this.onMountChange?.(pluginPath, on);
    return undefined;
  }
  nodeExpandVolume(req: NodeExpandVolumeRequest, o?: CsiCallOptions) {
    return this.record("NodeExpandVolume", req, o, () => ({
      capacityBytes: req.capacityRange?.requiredBytes ?? 0,
    }));
  }
  /** What NodeGetVolumeStats answers (a test sets it). */
  volumeStats: CsiVolumeStats = { bytes: null, inodes: null, condition: null };
  nodeGetVolumeStats(req: NodeGetVolumeStatsRequest, o?: CsiCallOptions) {
    return this.record("NodeGetVolumeStats", req, o, () => this.volumeStats);
  }
  createSnapshot(req: CreateSnapshotRequest, o?: CsiCallOptions) {
    return this.record("CreateSnapshot", req, o, () => ({
      snapshotId: `snap-${req.name}`,
      sourceVolumeId: req.sourceVolumeId,
      sizeBytes: 0,
      creationTime: 0,
      readyToUse: true,
    }));
  }
  deleteSnapshot(req: unknown, o?: CsiCallOptions) {
    return this.record("DeleteSnapshot", req, o, () => undefined);
  }
  listSnapshots(req: unknown, o?: CsiCallOptions) {
    return this.record("ListSnapshots", req, o, () => ({ entries: [], nextToken: "" }));
  }
  controllerExpandVolume(req: ControllerExpandVolumeRequest, o?: CsiCallOptions) {
    return this.record("ControllerExpandVolume", req, o, () => ({
      capacityBytes: req.capacityRange.requiredBytes,
      nodeExpansionRequired: true,
    }));
  }
  controllerModifyVolume(req: unknown, o?: CsiCallOptions) {
    return this.record("ControllerModifyVolume", req, o, () => undefined);
  }
  listVolumes(req: unknown, o?: CsiCallOptions) {
    return this.record("ListVolumes", req, o, () => ({ entries: [], nextToken: "" }));
  }
  /** What ControllerGetVolume answers as the volume's condition (a test sets it). */
  volumeCondition: { abnormal: boolean; message: string } | null = null;
  controllerGetVolume(req: { volumeId: string }, o?: CsiCallOptions) {
    return this.record("ControllerGetVolume", req, o, () => ({
      volume: { ...this.createResult, volumeId: req.volumeId },
      publishedNodeIds: [],
      condition: this.volumeCondition,
    }));
  }
  getCapacity(req: unknown, o?: CsiCallOptions) {
    return this.record("GetCapacity", req, o, () => ({
      availableCapacity: 0,
      maximumVolumeSize: null,
      minimumVolumeSize: null,
    }));
  }
}
