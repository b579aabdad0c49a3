/**
 * FakeCsiPlugin: a real in-process gRPC server on a unix socket implementing the Identity,
 * Controller and Node services, for tests. It mounts nothing; it records every call, answers from
 * small in-memory state (state.ts) and can be programmed per method (behaviour.ts).
 */
import fs from "node:fs/promises";
import * as grpc from "@grpc/grpc-js";
import { loadCsi, socketPathOf } from "../proto.js";
import { PluginCapabilitySet, METHOD_REQUIRES } from "../capabilities.js";
import {
  controllerCapabilitiesToWire,
  nodeCapabilitiesToWire,
  pluginCapabilitiesToWire,
} from "../convert.js";
import type {
  CsiControllerCapabilities,
  CsiNodeCapabilities,
  CsiNodeInfo,
  CsiPluginCapabilities,
} from "../types.js";
import type { WireCreateVolumeRequest, WireNodePublishRequest, WireNodeStageRequest } from "../wire.js";
import {
  FakeRpcError,
  isFakeStatus,
  type CsiMethodName,
  type FakeBehaviour,
  type FakeCall,
  type FakeStatus,
} from "./behaviour.js";
import { FakeState } from "./state.js";
import { FakeStorage } from "./storage.js";
import { withDefaults } from "../../internal/with_defaults.js";

export interface FakeCsiPluginOptions {
  /** Absolute socket path (or `unix:///path`). A stale file there is replaced. */
  socketPath: string;
  name?: string;
  vendorVersion?: string;
  pluginCapabilities?: Partial<CsiPluginCapabilities>;
  controllerCapabilities?: Partial<CsiControllerCapabilities>;
  nodeCapabilities?: Partial<CsiNodeCapabilities>;
  nodeInfo?: Partial<CsiNodeInfo>;
  /** INVALID_ARGUMENT for NodeStage/NodePublish without volume_context (some real plugins). */
  requireVolumeContext?: boolean;
  /** Answer INTERNAL instead of UNIMPLEMENTED for calls the capabilities do not advertise. */
  internalForUnadvertised?: boolean;
  /** Initial Probe readiness (default true; null omits the field). */
  ready?: boolean | null;
  /** Remove staging_target_path on NodeUnstage (target_path is always removed on NodeUnpublish). */
  removeStagingOnUnstage?: boolean;
}

export const DEFAULT_FAKE_PLUGIN_CAPABILITIES: CsiPluginCapabilities = {
  controllerService: true,
  volumeAccessibilityConstraints: false,
  groupControllerService: false,
  onlineExpansion: false,
  offlineExpansion: false,
};

export const NO_CONTROLLER_CAPABILITIES: CsiControllerCapabilities = {
  createDeleteVolume: false,
  publishUnpublishVolume: false,
  listVolumes: false,
  getCapacity: false,
  createDeleteSnapshot: false,
  listSnapshots: false,
  cloneVolume: false,
  publishReadonly: false,
  expandVolume: false,
  listVolumesPublishedNodes: false,
  volumeCondition: false,
  getVolume: false,
  singleNodeMultiWriter: false,
  modifyVolume: false,
};

export const NO_NODE_CAPABILITIES: CsiNodeCapabilities = {
  stageUnstageVolume: false,
  getVolumeStats: false,
  expandVolume: false,
  volumeCondition: false,
  singleNodeMultiWriter: false,
  volumeMountGroup: false,
};

interface Programmed {
  behaviour: FakeBehaviour;
  /** Remaining uses; Infinity for "until reset". */
  remaining: number;
}

type Respond = (err: FakeStatus | null, res?: object) => void;

export class FakeCsiPlugin {
  readonly socketPath: string;
  readonly endpoint: string;
  readonly calls: FakeCall[] = [];
  readonly state: FakeState;
  /** Snapshots and expansion (storage.ts); its volumes are `state`'s. */
  readonly storage: FakeStorage;
  pluginCapabilities: CsiPluginCapabilities;
  controllerCapabilities: CsiControllerCapabilities;
  nodeCapabilities: CsiNodeCapabilities;
  nodeInfo: CsiNodeInfo;
  /** What Probe reports; null omits the field (which the spec says means ready). */
  ready: boolean | null = true;
  private readonly programmed = new Map<CsiMethodName, Programmed[]>();
  private readonly hanging = new Set<() => void>();
  private server: grpc.Server | null = null;

  private constructor(private readonly opts: FakeCsiPluginOptions) {
    this.socketPath = socketPathOf(opts.socketPath);
    this.endpoint = "unix://" + this.socketPath;
    this.pluginCapabilities = withDefaults(DEFAULT_FAKE_PLUGIN_CAPABILITIES, opts.pluginCapabilities);
    this.controllerCapabilities = {
      ...NO_CONTROLLER_CAPABILITIES,
      createDeleteVolume: true,
      publishUnpublishVolume: true,
      ...opts.controllerCapabilities,
    };
    this.nodeCapabilities = { ...NO_NODE_CAPABILITIES, stageUnstageVolume: true, ...opts.nodeCapabilities };
    this.ready = opts.ready === undefined ? true : opts.ready;
    this.nodeInfo = { nodeId: "fake-node", maxVolumesPerNode: 0, accessibleTopology: null, ...opts.nodeInfo };
    this.state = new FakeState({
      requireVolumeContext: opts.requireVolumeContext ?? false,
      removeStagingOnUnstage: opts.removeStagingOnUnstage ?? false,
    });
    this.storage = new FakeStorage(this.state);
  }

  static async start(opts: FakeCsiPluginOptions): Promise<FakeCsiPlugin> {
    const plugin = new FakeCsiPlugin(opts);
    await plugin.listen();
    return plugin;
  }

  /** Program `method` for the next `times` calls (default: until `reset`). Later `on`s queue behind. */
  on(method: CsiMethodName, behaviour: FakeBehaviour, opts: { times?: number } = {}): this {
    const list = this.programmed.get(method) ?? [];
    list.push({ behaviour, remaining: opts.times ?? Infinity });
    this.programmed.set(method, list);
    return this;
  }

  /** The next `n` calls of `method` fail with `error`, then it behaves as before. */
  failNext(method: CsiMethodName, n: number, error: FakeStatus): this {
    const list = this.programmed.get(method) ?? [];
    list.unshift({ behaviour: { error }, remaining: n });
    this.programmed.set(method, list);
    return this;
  }

  /** Forget programmed behaviours (of one method, or all). Call records stay. */
  reset(method?: CsiMethodName): void {
    if (method) this.programmed.delete(method);
    else this.programmed.clear();
  }

  callsTo(method: CsiMethodName): FakeCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Stops the server (cancelling in-flight and hanging calls) and removes the socket. Idempotent. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const release of this.hanging) release();
    this.hanging.clear();
    if (server) server.forceShutdown();
    await fs.rm(this.socketPath, { force: true });
  }

  private async listen(): Promise<void> {
    await fs.rm(this.socketPath, { force: true });
    const csi = loadCsi();
    const server = new grpc.Server();
    for (const svc of ["Identity", "Controller", "Node"] as const) {
      const impl: grpc.UntypedServiceImplementation = {};
      for (const name of Object.keys(csi[svc].service)) {
        impl[name] = (
          call: grpc.ServerUnaryCall<Record<string, unknown>, object>,
          cb: grpc.sendUnaryData<object>,
        ) => {
          const respond: Respond = (err, res) => {
            if (err) cb({ code: err.code, details: err.message, metadata: new grpc.Metadata() });
            else cb(null, res);
          };
          this.dispatch(name as CsiMethodName, call, respond);
        };
      }
      server.addService(csi[svc].service, impl);
    }
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(this.endpoint, grpc.ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    this.server = server;
  }

  private dispatch(
    method: CsiMethodName,
    call: grpc.ServerUnaryCall<Record<string, unknown>, object>,
    respond: Respond,
  ): void {
    const request = call.request;
    this.calls.push({ method, at: Date.now(), request });
    const behaviour = this.takeBehaviour(method);
    this.run(method, request, behaviour, call, respond).catch((err: unknown) => {
      respond(isFakeStatus(err) ? err : { code: grpc.status.INTERNAL, message: String(err) });
    });
  }

  private takeBehaviour(method: CsiMethodName): FakeBehaviour | undefined {
    const list = this.programmed.get(method);
    const first = list?.[0];
    if (!list || !first) return undefined;
    first.remaining -= 1;
    if (first.remaining <= 0) list.shift();
    return first.behaviour;
  }

  private async run(
    method: CsiMethodName,
    request: Record<string, unknown>,
    behaviour: FakeBehaviour | undefined,
    call: grpc.ServerUnaryCall<Record<string, unknown>, object>,
    respond: Respond,
  ): Promise<void> {
    if (behaviour === undefined) {
      respond(null, await this.defaultAnswer(method, request));
    } else if (typeof behaviour === "function") {
      const res = await behaviour(request);
      respond(null, res === undefined ? await this.defaultAnswer(method, request) : (res as object));
    } else if ("error" in behaviour) {
      respond(behaviour.error);
    } else if ("respond" in behaviour) {
      respond(null, behaviour.respond);
    } else if ("hang" in behaviour) {
      await this.park(call, undefined);
    } else {
      const finished = await this.park(call, behaviour.delayMs);
      if (finished) await this.run(method, request, behaviour.then, call, respond);
    }
  }

  /** Waits `ms` (forever when undefined); false if the call was cancelled or the plugin stopped. */
  private park(call: grpc.ServerUnaryCall<unknown, unknown>, ms: number | undefined): Promise<boolean> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (ok: boolean) => {
        if (timer) clearTimeout(timer);
        this.hanging.delete(release);
        resolve(ok);
      };
      const release = () => done(false);
      this.hanging.add(release);
      call.once("cancelled", release);
      if (ms !== undefined) timer = setTimeout(() => done(true), ms);
    });
  }

  private unadvertised(method: CsiMethodName): FakeRpcError | null {
    const caps = new PluginCapabilitySet({
      plugin: this.pluginCapabilities,
      controller: this.controllerCapabilities,
      node: this.nodeCapabilities,
    });
    if (METHOD_REQUIRES[method] === undefined || caps.supportsMethod(method)) return null;
    return this.opts.internalForUnadvertised
      ? new FakeRpcError(grpc.status.INTERNAL, `${method}: internal error`)
      : new FakeRpcError(grpc.status.UNIMPLEMENTED, `${method} is not implemented`);
  }

  private async defaultAnswer(method: CsiMethodName, req: Record<string, unknown>): Promise<object> {
    const refused = this.unadvertised(method);
    if (refused) throw refused;
    switch (method) {
      case "GetPluginInfo":
        return {
          name: this.opts.name ?? "fake.csi.berth.io",
          vendor_version: this.opts.vendorVersion ?? "0.0.1",
        };
      case "GetPluginCapabilities":
        return { capabilities: pluginCapabilitiesToWire(this.pluginCapabilities) };
      case "Probe":
        return this.ready === null ? {} : { ready: { value: this.ready } };
      case "ControllerGetCapabilities":
        return { capabilities: controllerCapabilitiesToWire(this.controllerCapabilities) };
      case "NodeGetCapabilities":
        return { capabilities: nodeCapabilitiesToWire(this.nodeCapabilities) };
      case "NodeGetInfo":
        return {
          node_id: this.nodeInfo.nodeId,
          max_volumes_per_node: this.nodeInfo.maxVolumesPerNode,
          accessible_topology: this.nodeInfo.accessibleTopology,
        };
      case "CreateVolume":
        return this.state.createVolume(req as unknown as WireCreateVolumeRequest);
      case "DeleteVolume":
        return this.state.deleteVolume(req as { volume_id: string });
      case "ControllerPublishVolume":
        return this.state.controllerPublish(
          req as { volume_id: string; node_id: string; volume_capability: unknown },
        );
      case "ControllerUnpublishVolume":
        return this.state.controllerUnpublish(req as { volume_id: string; node_id: string });
      case "ValidateVolumeCapabilities":
        return { confirmed: { volume_capabilities: req.volume_capabilities }, message: "" };
      case "NodeStageVolume":
        return this.state.nodeStage(req as unknown as WireNodeStageRequest);
      case "NodeUnstageVolume":
        return this.state.nodeUnstage(req as { volume_id: string; staging_target_path: string });
      case "NodePublishVolume":
        return this.state.nodePublish(req as unknown as WireNodePublishRequest);
      case "NodeUnpublishVolume":
        return this.state.nodeUnpublish(req as { volume_id: string; target_path: string });
      case "ControllerExpandVolume":
        return this.storage.controllerExpand(req as never);
      case "NodeExpandVolume":
        return this.storage.nodeExpand(req as never);
      case "CreateSnapshot":
        return this.storage.createSnapshot(req as never);
      case "DeleteSnapshot":
        return this.storage.deleteSnapshot(req as never);
      case "ListSnapshots":
        return this.storage.listSnapshots();
      case "ListVolumes":
        return this.storage.listVolumes();
      default:
        throw new FakeRpcError(grpc.status.UNIMPLEMENTED, `${method} is not implemented by the fake`);
    }
  }
}
