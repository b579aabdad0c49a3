/**
 * The csi-hostpath gRPC server: Identity plus Controller and/or Node (by --mode) on one unix socket;
 * calls of a service the mode does not serve answer UNIMPLEMENTED. One call per volume at a time: a
 * second concurrent call for the same volume gets ABORTED (spec, "Concurrency"); NodeGetVolumeStats
 * and ControllerGetVolume, reads, are outside that rule.
 */
import fs from "node:fs/promises";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../internal/log.js";
import { loadCsi } from "../proto.js";
import type { WireCreateVolumeRequest, WireNodePublishRequest, WireNodeStageRequest } from "../wire.js";
import { AttachmentStore } from "./attachments.js";
import { callRecorder, capabilityRecord } from "./call_log.js";
import { faultSource, InjectedFault } from "./faults.js";
import { createVolume, deleteVolume, validateVolumeCapabilities } from "./controller.js";
import {
  controllerPublishVolume,
  controllerUnpublishVolume,
  type WireControllerPublishRequest,
} from "./controller_publish.js";
import { isRpcError, rpcError, type HostpathContext } from "./context.js";
import type { HostpathConfig } from "./flags.js";
import { nodePublishVolume, nodeStageVolume, nodeUnpublishVolume, nodeUnstageVolume } from "./node.js";
import { VolumeStore } from "./volumes.js";
import { singleNodeMultiWriterCapabilities } from "./access_modes.js";
import {
  STORAGE_CONTROLLER_HANDLERS,
  STORAGE_NODE_HANDLERS,
  storageControllerCapabilities,
  storageNodeCapabilities,
  storagePluginCapabilities,
} from "./storage_ops.js";

export const HOSTPATH_PLUGIN_NAME = "csi-hostpath.berth.io";
export const HOSTPATH_VERSION = "0.1.0";

type Req = Record<string, unknown>;
type Handler = (ctx: HostpathContext, req: Req) => Promise<object> | object;

const IDENTITY: Record<string, Handler> = {
  GetPluginInfo: () => ({ name: HOSTPATH_PLUGIN_NAME, vendor_version: HOSTPATH_VERSION }),
  GetPluginCapabilities: (ctx) => ({
    capabilities: [
      ...(ctx.config.mode === "node" ? [] : [{ service: { type: "CONTROLLER_SERVICE" } }]),
      { service: { type: "VOLUME_ACCESSIBILITY_CONSTRAINTS" } },
      ...storagePluginCapabilities(ctx.config),
    ],
  }),
  Probe: () => ({ ready: { value: true } }),
};

const CONTROLLER: Record<string, Handler> = {
  ControllerGetCapabilities: (ctx) => ({
    capabilities: [
      { rpc: { type: "CREATE_DELETE_VOLUME" } },
      ...(ctx.config.attachRequired ? [{ rpc: { type: "PUBLISH_UNPUBLISH_VOLUME" } }] : []),
      ...storageControllerCapabilities(ctx.config),
      ...singleNodeMultiWriterCapabilities(ctx.config),
    ],
  }),
  CreateVolume: (ctx, r) => createVolume(ctx, r as unknown as WireCreateVolumeRequest),
  DeleteVolume: (ctx, r) => deleteVolume(ctx, r as { volume_id: string }),
  ValidateVolumeCapabilities: (ctx, r) => validateVolumeCapabilities(ctx, r as never),
  ControllerPublishVolume: (ctx, r) => {
    if (!ctx.config.attachRequired) throw unimplemented("ControllerPublishVolume without --attach-required");
    return controllerPublishVolume(ctx, r as unknown as WireControllerPublishRequest);
  },
  ControllerUnpublishVolume: (ctx, r) => {
    if (!ctx.config.attachRequired)
      throw unimplemented("ControllerUnpublishVolume without --attach-required");
    return controllerUnpublishVolume(ctx, r as { volume_id: string; node_id: string });
  },
  ...STORAGE_CONTROLLER_HANDLERS,
};

function unimplemented(what: string) {
  return rpcError(grpc.status.UNIMPLEMENTED, `${what} is not implemented by csi-hostpath`);
}

const NODE: Record<string, Handler> = {
  NodeGetCapabilities: (ctx) => ({
    capabilities: [
      { rpc: { type: "STAGE_UNSTAGE_VOLUME" } },
      ...storageNodeCapabilities(ctx.config),
      ...singleNodeMultiWriterCapabilities(ctx.config),
    ],
  }),
  NodeGetInfo: (ctx) => ({
    node_id: ctx.config.nodeId,
    max_volumes_per_node: ctx.config.maxVolumes,
    accessible_topology: { segments: ctx.config.topology },
  }),
  NodeStageVolume: (ctx, r) => nodeStageVolume(ctx, r as unknown as WireNodeStageRequest),
  NodeUnstageVolume: (ctx, r) =>
    nodeUnstageVolume(ctx, r as { volume_id: string; staging_target_path: string }),
  NodePublishVolume: (ctx, r) => nodePublishVolume(ctx, r as unknown as WireNodePublishRequest),
  NodeUnpublishVolume: (ctx, r) => nodeUnpublishVolume(ctx, r as { volume_id: string; target_path: string }),
  ...STORAGE_NODE_HANDLERS,
};

/** Calls that only read a volume: outside the one-call-per-volume rule. */
const READS = new Set(["NodeGetVolumeStats", "ControllerGetVolume"]);

/** The handlers a mode serves; every other method answers UNIMPLEMENTED. */
function handlersFor(mode: HostpathConfig["mode"]): Record<string, Handler> {
  if (mode === "controller") return { ...IDENTITY, ...CONTROLLER };
  if (mode === "node") return { ...IDENTITY, ...NODE };
  return { ...IDENTITY, ...CONTROLLER, ...NODE };
}

export interface HostpathServer {
  endpoint: string;
  /** Graceful (bounded) shutdown, then removes the socket. Idempotent. */
  stop(): Promise<void>;
}

type Dispatch = (method: string, req: Req) => Promise<object>;

/**
 * The calls' dispatcher: the mode's handler, at most one operation per volume at a time (ABORTED
 * otherwise; reads take no slot), and the --faults injected before, instead of, or after it.
 */
function dispatcher(ctx: HostpathContext, faults: ReturnType<typeof faultSource>): Dispatch {
  const { config, log } = ctx;
  const handlers = handlersFor(config.mode);
  const inFlight = new Set<string>();
  /** Runs `run` unless --faults says otherwise; a hang holds the volume's in-flight slot. */
  const faulted = async (method: string, run: () => Promise<object> | object): Promise<object> => {
    const fault = faults.take(method);
    if (fault && fault.hangMs > 0) await new Promise((r) => setTimeout(r, fault.hangMs));
    if (fault?.error) throw fault.error;
    let answer: object;
    if (fault?.noop) {
      log.warn("injected fault: answering success without doing anything", { method });
      answer = {};
    } else answer = await run();
    if (fault && fault.answerAfterMs > 0) await new Promise((r) => setTimeout(r, fault.answerAfterMs));
    return answer;
  };
  return async (method, req) => {
    const handler = handlers[method];
    if (!handler) throw unimplemented(`${method} (in --mode=${config.mode})`);
    const volumeId = typeof req.volume_id === "string" ? req.volume_id : "";
    // A stats or condition read changes nothing: it neither takes the volume's slot nor is refused
    // by it, so a CO's periodic poll never makes a mount, snapshot or delete fail with ABORTED.
    if (!volumeId || READS.has(method)) return faulted(method, () => handler(ctx, req));
    if (inFlight.has(volumeId))
      throw rpcError(grpc.status.ABORTED, `an operation on ${volumeId} is in progress`);
    inFlight.add(volumeId);
    try {
      return await faulted(method, () => handler(ctx, req));
    } finally {
      inFlight.delete(volumeId);
    }
  };
}

/** What the call log records of a call: its method, volume, node and target path. */
function callWhere(config: HostpathConfig, svc: string, method: string, req: Req) {
  const volumeId = typeof req.volume_id === "string" ? req.volume_id : "";
  // Node calls carry no node_id: record the node serving them, so logs from several node
  // processes sharing one file say which node unmounted what.
  const nodeId =
    typeof req.node_id === "string" && req.node_id !== "" ? req.node_id : svc === "Node" ? config.nodeId : "";
  const target = [req.target_path, req.staging_target_path].find(
    (p): p is string => typeof p === "string" && p !== "",
  );
  return {
    method,
    volume_id: volumeId,
    node_id: nodeId,
    target: target || undefined,
    ...capabilityRecord(req),
  };
}

/** Every method of the three services, answered through `dispatch`, each call recorded and failures logged. */
function addServices(server: grpc.Server, ctx: HostpathContext, dispatch: Dispatch): void {
  const { config, log } = ctx;
  const record = callRecorder(config.callLog);
  const csi = loadCsi();
  for (const svc of ["Identity", "Controller", "Node"] as const) {
    const impl: grpc.UntypedServiceImplementation = {};
    for (const method of Object.keys(csi[svc].service)) {
      impl[method] = (call: grpc.ServerUnaryCall<Req, object>, cb: grpc.sendUnaryData<object>) => {
        const where = callWhere(config, svc, method, call.request);
        void dispatch(method, call.request).then(
          (res) => {
            record({ ...where, code: "OK" });
            cb(null, res);
          },
          (err: unknown) => {
            const e = isRpcError(err) ? err : rpcError(grpc.status.INTERNAL, String(err));
            record({
              ...where,
              code: String(grpc.status[e.code]),
              fault: err instanceof InjectedFault ? true : undefined,
            });
            log.warn("call failed", { method, code: grpc.status[e.code], error: e.message });
            cb({ code: e.code, details: e.message, metadata: new grpc.Metadata() });
          },
        );
      };
    }
    server.addService(csi[svc].service, impl);
  }
}

/** Graceful shutdown bounded at 5 s, then the socket removed; the same promise every time. */
function stopper(server: grpc.Server, socketPath: string): () => Promise<void> {
  let stopped: Promise<void> | null = null;
  return () => {
    stopped ??= (async () => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 5_000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      await fs.rm(socketPath, { force: true });
    })();
    return stopped;
  };
}

export async function startHostpathServer(config: HostpathConfig, log: Logger): Promise<HostpathServer> {
  const volumes = new VolumeStore(config.stateDir);
  await volumes.init();
  const ctx: HostpathContext = { config, volumes, attachments: new AttachmentStore(config.stateDir), log };
  const server = new grpc.Server();
  addServices(server, ctx, dispatcher(ctx, faultSource(config.faults ?? null, log)));
  // A socket file left by a previous run would make bind fail; nobody listens on it any more.
  await fs.mkdir(path.dirname(config.socketPath), { recursive: true });
  await fs.rm(config.socketPath, { force: true });
  const endpoint = "unix://" + config.socketPath;
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(endpoint, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  log.info("listening", {
    endpoint,
    node_id: config.nodeId,
    state_dir: config.stateDir,
    mode: config.mode,
    attach_required: config.attachRequired,
  });
  return { endpoint, stop: stopper(server, config.socketPath) };
}
