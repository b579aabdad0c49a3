/**
 * The simulated CSI plugin of one simulated node: node and controller services answered in-process
 * behind the csimanager's client interface (CsiClient), not over gRPC — thousands of gRPC servers
 * and channels in one process would measure gRPC, not the server under test. Everything above the
 * CsiClient (csimanager fingerprints, volume manager stage/publish sequence, ClientCSI handlers,
 * retries) is the real client code.
 *
 * Contracts:
 * - Stage and publish "mount" by recording the path; unstage and unpublish forget it. The node's
 *   mount check (client_seams.ts `isMountPoint`) reads the same record, so the volume manager's
 *   check that a success left a mount holds exactly as on a real host.
 * - Volume calls (create/delete, controller publish/unpublish, node stage/unstage/publish/unpublish)
 *   wait their configured latency, then fail with UNAVAILABLE (ERR_CSI_UNAVAILABLE, which callers
 *   retry) with probability `errorRate`. Identity and fingerprint calls never fail and never wait,
 *   so injected errors slow volume work down without flapping the plugin's health.
 * - Calls the capabilities below do not advertise answer UNIMPLEMENTED.
 */
import { abortError, sleep } from "../internal/abort.js";
import { BerthError } from "../structs/errors.js";
import type {
  CsiCallOptions,
  CsiClient,
  CsiControllerCapabilities,
  CsiNodeCapabilities,
  CsiPluginCapabilities,
  CsiVolumeInfo,
  ControllerPublishRequest,
  ControllerUnpublishRequest,
  CreateVolumeRequest,
  NodePublishRequest,
  NodeStageRequest,
  NodeUnpublishRequest,
  NodeUnstageRequest,
  ValidateVolumeCapabilitiesRequest,
  ValidateVolumeCapabilitiesResult,
} from "../csi/types.js";

export interface SimCsiBehaviour {
  /** Latency of each node volume call (stage, publish and their reverse), ms. */
  nodeLatencyMs: number;
  /** Latency of each controller volume call (create, delete, publish, unpublish), ms. */
  controllerLatencyMs: number;
  /** Probability in [0, 1] that a volume call fails with UNAVAILABLE after its latency. */
  errorRate: number;
  /** NodeGetInfo's max_volumes_per_node (0: no limit). */
  maxVolumesPerNode: number;
  /** Random source in [0, 1) for error injection (Math.random by default; tests fix it). */
  random?: () => number;
}

/** Counts shared by every simulated plugin of a simulator (what the operator sees). */
export class SimCsiStats {
  readonly calls = new Map<string, number>();
  injectedErrors = 0;

  count(method: string): void {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
  }

  /** Calls of `method` across all nodes so far. */
  callsOf(method: string): number {
    return this.calls.get(method) ?? 0;
  }
}

const PLUGIN_CAPS: CsiPluginCapabilities = {
  controllerService: true,
  volumeAccessibilityConstraints: false,
  groupControllerService: false,
  onlineExpansion: false,
  offlineExpansion: false,
};

const CONTROLLER_CAPS: CsiControllerCapabilities = {
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

const NODE_CAPS: CsiNodeCapabilities = {
  stageUnstageVolume: true,
  getVolumeStats: false,
  expandVolume: false,
  volumeCondition: false,
  singleNodeMultiWriter: false,
  volumeMountGroup: false,
};

function unimplemented(method: string): Promise<never> {
  return Promise.reject(
    new BerthError("ERR_CSI_UNIMPLEMENTED", `${method}: not implemented by the simulated plugin`),
  );
}

/** The storage calls a simulated plugin does not advertise: each answers UNIMPLEMENTED. */
function unimplementedStorage() {
  return {
    createSnapshot: () => unimplemented("CreateSnapshot"),
    deleteSnapshot: () => unimplemented("DeleteSnapshot"),
    listSnapshots: () => unimplemented("ListSnapshots"),
    controllerExpandVolume: () => unimplemented("ControllerExpandVolume"),
    controllerModifyVolume: () => unimplemented("ControllerModifyVolume"),
    listVolumes: () => unimplemented("ListVolumes"),
    getCapacity: () => unimplemented("GetCapacity"),
    controllerGetVolume: () => unimplemented("ControllerGetVolume"),
    nodeExpandVolume: () => unimplemented("NodeExpandVolume"),
    nodeGetVolumeStats: () => unimplemented("NodeGetVolumeStats"),
  };
}

/** One node's plugin; `client()` hands out the CsiClient the csimanager connects through. */
export class SimCsiPlugin {
  /** Host paths a stage or publish mounted and nothing unmounted since. */
  readonly mounts = new Set<string>();
  private created = 0;

  constructor(
    readonly pluginId: string,
    /** The node's ID as the storage provider knows it (NodeGetInfo). */
    readonly externalNodeId: string,
    private readonly behaviour: SimCsiBehaviour,
    private readonly stats: SimCsiStats,
  ) {}

  isMounted(hostPath: string): boolean {
    return this.mounts.has(hostPath);
  }

  /** A volume call: counted, delayed, then maybe failed, then `answer`. */
  private async volumeCall<T>(
    method: string,
    latencyMs: number,
    opts: CsiCallOptions | undefined,
    answer: () => T,
  ): Promise<T> {
    this.stats.count(method);
    if (latencyMs > 0) await sleep(latencyMs, opts?.signal);
    if (opts?.signal?.aborted) throw abortError(opts.signal);
    if ((this.behaviour.random ?? Math.random)() < this.behaviour.errorRate) {
      this.stats.injectedErrors++;
      throw new BerthError("ERR_CSI_UNAVAILABLE", `${method}: simulated plugin unavailable (injected error)`);
    }
    return answer();
  }

  private quick<T>(method: string, answer: () => T): Promise<T> {
    this.stats.count(method);
    return Promise.resolve(answer());
  }

  client(endpoint: string): CsiClient {
    const b = this.behaviour;
    const node = <T>(m: string, o: CsiCallOptions | undefined, f: () => T) =>
      this.volumeCall(m, b.nodeLatencyMs, o, f);
    const ctl = <T>(m: string, o: CsiCallOptions | undefined, f: () => T) =>
      this.volumeCall(m, b.controllerLatencyMs, o, f);
    return {
      endpoint,
      close: () => undefined,
      getPluginInfo: () =>
        this.quick("GetPluginInfo", () => ({ name: this.pluginId, vendorVersion: "sim", manifest: {} })),
      getPluginCapabilities: () => this.quick("GetPluginCapabilities", () => ({ ...PLUGIN_CAPS })),
      probe: () => this.quick("Probe", () => ({ ready: true })),
      controllerGetCapabilities: () =>
        this.quick("ControllerGetCapabilities", () => ({ ...CONTROLLER_CAPS })),
      nodeGetCapabilities: () => this.quick("NodeGetCapabilities", () => ({ ...NODE_CAPS })),
      nodeGetInfo: () =>
        this.quick("NodeGetInfo", () => ({
          nodeId: this.externalNodeId,
          maxVolumesPerNode: b.maxVolumesPerNode,
          accessibleTopology: null,
        })),
      createVolume: (req: CreateVolumeRequest, o?: CsiCallOptions) =>
        ctl("CreateVolume", o, (): CsiVolumeInfo => {
          const capacity = req.capacityRange?.requiredBytes || 1 << 30;
          return {
            volumeId: `sim-${req.name}-${++this.created}`,
            capacityBytes: capacity,
            volumeContext: {},
            contentSource: null,
            accessibleTopology: [],
          };
        }),
      deleteVolume: (_req, o) => ctl("DeleteVolume", o, () => undefined),
      controllerPublishVolume: (req: ControllerPublishRequest, o?: CsiCallOptions) =>
        ctl("ControllerPublishVolume", o, () => ({ publishContext: { attachedTo: req.nodeId } })),
      controllerUnpublishVolume: (_req: ControllerUnpublishRequest, o?: CsiCallOptions) =>
        ctl("ControllerUnpublishVolume", o, () => undefined),
      validateVolumeCapabilities: (req: ValidateVolumeCapabilitiesRequest) =>
        this.quick("ValidateVolumeCapabilities", (): ValidateVolumeCapabilitiesResult => ({
          confirmed: { volumeCapabilities: req.volumeCapabilities },
          message: "",
        })),
      nodeStageVolume: (req: NodeStageRequest, o?: CsiCallOptions) =>
        node("NodeStageVolume", o, () => void this.mounts.add(req.stagingTargetPath)),
      nodeUnstageVolume: (req: NodeUnstageRequest, o?: CsiCallOptions) =>
        node("NodeUnstageVolume", o, () => void this.mounts.delete(req.stagingTargetPath)),
      nodePublishVolume: (req: NodePublishRequest, o?: CsiCallOptions) =>
        node("NodePublishVolume", o, () => void this.mounts.add(req.targetPath)),
      nodeUnpublishVolume: (req: NodeUnpublishRequest, o?: CsiCallOptions) =>
        node("NodeUnpublishVolume", o, () => void this.mounts.delete(req.targetPath)),
      ...unimplementedStorage(),
    };
  }
}
