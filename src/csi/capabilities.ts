/**
 * A plugin's advertised capabilities and which CSI methods they allow. berth calls only what a
 * plugin advertises (some plugins answer INTERNAL, not UNIMPLEMENTED, for an RPC they do not
 * implement, so berth never probes by calling): the gates in use are the ClientCSI handlers'
 * controller check (client/rpc/client_csi.ts) and the volume manager's node capability checks;
 * the fake plugin uses this set to refuse what it does not advertise.
 */
import { BerthError } from "../structs/errors.js";
import { sleep, throwIfAborted } from "../internal/abort.js";
import type {
  CsiClient,
  CsiControllerCapabilities,
  CsiIdentityClient,
  CsiNodeCapabilities,
  CsiPluginCapabilities,
} from "./types.js";

export type CsiCapability =
  | "plugin.controllerService"
  | `controller.${keyof CsiControllerCapabilities}`
  | `node.${keyof CsiNodeCapabilities}`;

/** CSI methods the guard knows, with the capabilities each needs (all of them). */
export const METHOD_REQUIRES: Readonly<Record<string, readonly CsiCapability[]>> = {
  ControllerGetCapabilities: ["plugin.controllerService"],
  CreateVolume: ["plugin.controllerService", "controller.createDeleteVolume"],
  DeleteVolume: ["plugin.controllerService", "controller.createDeleteVolume"],
  ControllerPublishVolume: ["plugin.controllerService", "controller.publishUnpublishVolume"],
  ControllerUnpublishVolume: ["plugin.controllerService", "controller.publishUnpublishVolume"],
  ValidateVolumeCapabilities: ["plugin.controllerService"],
  ListVolumes: ["plugin.controllerService", "controller.listVolumes"],
  GetCapacity: ["plugin.controllerService", "controller.getCapacity"],
  CreateSnapshot: ["plugin.controllerService", "controller.createDeleteSnapshot"],
  DeleteSnapshot: ["plugin.controllerService", "controller.createDeleteSnapshot"],
  ListSnapshots: ["plugin.controllerService", "controller.listSnapshots"],
  ControllerExpandVolume: ["plugin.controllerService", "controller.expandVolume"],
  ControllerGetVolume: ["plugin.controllerService", "controller.getVolume"],
  ControllerModifyVolume: ["plugin.controllerService", "controller.modifyVolume"],
  NodeStageVolume: ["node.stageUnstageVolume"],
  NodeUnstageVolume: ["node.stageUnstageVolume"],
  NodeGetVolumeStats: ["node.getVolumeStats"],
  NodeExpandVolume: ["node.expandVolume"],
  NodePublishVolume: [],
  NodeUnpublishVolume: [],
  NodeGetCapabilities: [],
  NodeGetInfo: [],
};

export interface CapabilitySources {
  plugin: CsiPluginCapabilities;
  /** Null when the plugin is not a controller (or was not asked). */
  controller: CsiControllerCapabilities | null;
  /** Null when the plugin is not a node plugin (or was not asked). */
  node: CsiNodeCapabilities | null;
}

export class PluginCapabilitySet {
  constructor(readonly sources: CapabilitySources) {}

  has(cap: CsiCapability): boolean {
    const [scope, name] = cap.split(".") as [string, string];
    if (scope === "plugin") return this.sources.plugin.controllerService;
    if (scope === "controller") {
      const c = this.sources.controller as Record<string, boolean> | null;
      return this.sources.plugin.controllerService && c !== null && c[name] === true;
    }
    const n = this.sources.node as Record<string, boolean> | null;
    return n !== null && n[name] === true;
  }

  /** Throws ERR_CSI_NOT_SUPPORTED naming `method` unless the plugin advertises `cap`. */
  require(cap: CsiCapability, method: string): void {
    if (!this.has(cap)) {
      throw new BerthError("ERR_CSI_NOT_SUPPORTED", `CSI ${method}: plugin does not advertise ${cap}`);
    }
  }

  supportsMethod(method: string): boolean {
    const needs = METHOD_REQUIRES[method];
    return needs !== undefined && needs.every((c) => this.has(c));
  }

  /** Throws ERR_CSI_NOT_SUPPORTED unless every capability `method` needs is advertised. */
  requireMethod(method: string): void {
    const needs = METHOD_REQUIRES[method];
    if (needs === undefined) throw new BerthError("ERR_CSI_NOT_SUPPORTED", `CSI ${method}: unknown method`);
    for (const c of needs) this.require(c, method);
  }
}

/**
 * Fingerprints a plugin's capabilities. Controller capabilities are asked only when the plugin
 * advertises CONTROLLER_SERVICE; node capabilities only when `isNode`.
 */
export async function fetchCapabilities(
  client: CsiClient,
  opts: { isNode: boolean; signal?: AbortSignal; timeoutMs?: number },
): Promise<PluginCapabilitySet> {
  const callOpts = { signal: opts.signal, timeoutMs: opts.timeoutMs };
  const plugin = await client.getPluginCapabilities(callOpts);
  const controller = plugin.controllerService ? await client.controllerGetCapabilities(callOpts) : null;
  const node = opts.isNode ? await client.nodeGetCapabilities(callOpts) : null;
  return new PluginCapabilitySet({ plugin, controller, node });
}

export interface WaitForProbeOptions {
  signal?: AbortSignal;
  /** Total budget; the last failure is reported when it runs out. */
  timeoutMs: number;
  /** Pause between attempts. */
  intervalMs?: number;
}

/**
 * Resolves once a Probe succeeds with ready !== false. A socket file can exist before the plugin
 * listens (a stale file from a previous run), so only a real answer counts. Rejects with
 * ERR_CSI_PLUGIN_UNAVAILABLE (carrying the last failure) when `timeoutMs` passes, or with the abort
 * error when `signal` aborts.
 */
export async function waitForProbe(
  client: Pick<CsiIdentityClient, "probe">,
  opts: WaitForProbeOptions,
): Promise<void> {
  const interval = opts.intervalMs ?? 500;
  const deadline = Date.now() + opts.timeoutMs;
  let last = "no answer";
  for (;;) {
    throwIfAborted(opts.signal);
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new BerthError(
        "ERR_CSI_PLUGIN_UNAVAILABLE",
        `plugin not healthy after ${opts.timeoutMs}ms: ${last}`,
      );
    }
    try {
      const { ready } = await client.probe({ signal: opts.signal, timeoutMs: Math.min(remaining, 5_000) });
      if (ready) return;
      last = "plugin reports not ready";
    } catch (err) {
      throwIfAborted(opts.signal);
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(Math.max(0, Math.min(interval, deadline - Date.now())), opts.signal);
  }
}
