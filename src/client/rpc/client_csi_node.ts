/**
 * The node-side ClientCSI calls: NodeExpandVolume (after the server expanded a volume through its
 * controller), NodeDetachVolume (`volume detach`: the server asks this node to unmount a
 * terminal alloc's volume) and NodeVolumeState (read-only: what this node holds of one alloc's use
 * of a volume, asked by the volumewatcher before it releases a claim the node may never have
 * learned of). Each acts on one alloc's use of one volume, found through the stub the csi_hook
 * persisted when it mounted it; an alloc without a stub has nothing mounted here, which makes the
 * first two idempotent.
 *
 * Both go through the volume manager, so they are serialised with every other node call for that
 * volume. A detach is recorded under the volume's lock (the stub goes; a pending release of the
 * alloc is marked unmounted), so the alloc's own release, if it is still retrying, makes no second
 * NodeUnpublish/NodeUnstage after the server's ControllerUnpublish.
 */
import { BerthError } from "../../structs/errors.js";
import { isClientTerminal, type ClientStatus } from "../../structs/alloc.js";
import type { NodeVolumeRef } from "../../structs/rpc.js";
import type { NodeVolumeStateRequest, NodeVolumeStateResponse } from "../../structs/rpc_volume_state.js";
import type { Logger } from "../../internal/log.js";
import type {
  ExpandVolumeRequest,
  UnmountGuard,
  UnmountVolumeRequest,
} from "../csimanager/volume_requests.js";
import type { RegisteredPlugin } from "../dynamicplugins/types.js";
import type { CsiVolumeStub, PendingRelease } from "../state/types.js";
import type { ClientCsiPeer } from "./client_csi_peer.js";

/** What the node-side handlers read and call; the node agent builds it from its parts. */
export interface NodeVolumeAccess {
  /** Every persisted stub of `allocId` (alias → stub). */
  volumeStubs(allocId: string): Record<string, CsiVolumeStub>;
  registeredNodePlugin(pluginId: string): RegisteredPlugin | undefined;
  /** NodeExpandVolume under the volume's lock; 0 when the node plugin does not expand. */
  expandVolume(req: ExpandVolumeRequest, signal: AbortSignal): Promise<number>;
  /** Unmounts the alloc's use of the volume (unless already unmounted) and records that durably. */
  detachVolume(alias: string, req: UnmountVolumeRequest, signal: AbortSignal): Promise<void>;
  /** What the state DB holds of the alloc's use of the volume (NodeVolumeState). */
  volumeState(req: NodeVolumeStateRequest): NodeVolumeStateResponse;
}

export function registerNodeVolumeHandlers(peer: ClientCsiPeer, access: NodeVolumeAccess, log: Logger): void {
  const find = (
    ref: NodeVolumeRef,
  ): { alias: string; stub: CsiVolumeStub; plugin: RegisteredPlugin } | null => {
    const found = Object.entries(access.volumeStubs(ref.AllocID)).find(
      ([, s]) => s.volumeId === ref.VolumeID && s.namespace === ref.Namespace && s.pluginId === ref.PluginID,
    );
    if (!found) return null;
    const plugin = access.registeredNodePlugin(ref.PluginID);
    if (!plugin) {
      throw new BerthError(
        "ERR_CSI_PLUGIN_UNAVAILABLE",
        `CSI node plugin ${JSON.stringify(ref.PluginID)} is not running on this node`,
      );
    }
    return { alias: found[0], stub: found[1], plugin };
  };

  peer.handle("ClientCSI.NodeExpandVolume", async (req, signal) => {
    const found = find(req);
    if (!found) return { CapacityBytes: 0 };
    const capacity = await access.expandVolume(
      {
        plugin: found.plugin,
        allocId: req.AllocID,
        stub: found.stub,
        capacityMin: req.CapacityMin,
        capacityMax: req.CapacityMax,
        secrets: req.Secrets,
      },
      signal,
    );
    return { CapacityBytes: capacity };
  });

  peer.handle("ClientCSI.NodeDetachVolume", async (req, signal) => {
    const found = find(req);
    if (!found) return {};
    const { alias, stub, plugin } = found;
    await access.detachVolume(
      alias,
      {
        plugin,
        allocId: req.AllocID,
        volumeId: stub.volumeId,
        namespace: stub.namespace,
        externalId: stub.externalId,
        usage: stub.usage,
      },
      signal,
    );
    log.info("volume detached on node", { volume: req.VolumeID, alloc: req.AllocID });
    return {};
  });

  peer.handle("ClientCSI.NodeVolumeState", (req) => Promise.resolve(access.volumeState(req)));
}

/** The state DB reads NodeVolumeState makes. */
interface VolumeStateDb {
  getVolumeStubs(allocId: string): Record<string, CsiVolumeStub>;
  getPendingReleases(allocId: string): Record<string, PendingRelease>;
  getAlloc(allocId: string): { clientUpdate: { ClientStatus: ClientStatus } | null } | undefined;
}

/**
 * NodeVolumeState from the state DB, which the csi_hook writes in an order that makes it sound:
 * a stub is persisted once mounted; a prerun that fails after its mount step began persists a
 * pending release before the alloc's status turns terminal (csi_claim.ts unwind), and postrun
 * turns every stub into a pending release; an alloc's status is persisted before any of its hooks
 * run and turns terminal only after prerun ended. So an alloc known here with a non-terminal (or
 * no) status may still be claiming or mounting: it is active, and the server must keep waiting.
 */
export function volumeStateOf(db: VolumeStateDb, req: NodeVolumeStateRequest): NodeVolumeStateResponse {
  const names = (s: CsiVolumeStub) => s.volumeId === req.VolumeID && s.namespace === req.Namespace;
  const stored = db.getAlloc(req.AllocID);
  const status = stored?.clientUpdate?.ClientStatus;
  return {
    Mounted: Object.values(db.getVolumeStubs(req.AllocID)).some(names),
    ReleasePending: Object.values(db.getPendingReleases(req.AllocID)).some((r) => names(r.stub)),
    AllocActive: stored !== undefined && (status === undefined || !isClientTerminal(status)),
  };
}

/** The node agent's parts as NodeVolumeAccess. */
export function nodeVolumeAccess(parts: {
  stateDb: VolumeStateDb & { markNodeDetached(allocId: string, alias: string): void };
  registry: { get(role: "csi-node", pluginId: string): RegisteredPlugin | undefined };
  volumeManager: {
    expandVolume(req: ExpandVolumeRequest, signal?: AbortSignal): Promise<number>;
    unmountVolume(req: UnmountVolumeRequest, signal?: AbortSignal, guard?: UnmountGuard): Promise<void>;
  };
}): NodeVolumeAccess {
  const { stateDb } = parts;
  return {
    volumeStubs: (allocId) => stateDb.getVolumeStubs(allocId),
    registeredNodePlugin: (pluginId) => parts.registry.get("csi-node", pluginId),
    expandVolume: (req, signal) => parts.volumeManager.expandVolume(req, signal),
    detachVolume: (alias, req, signal) =>
      parts.volumeManager.unmountVolume(req, signal, {
        stillMounted: () =>
          stateDb.getVolumeStubs(req.allocId)[alias] !== undefined &&
          stateDb.getPendingReleases(req.allocId)[alias]?.unmounted !== true,
        unmounted: () => stateDb.markNodeDetached(req.allocId, alias),
      }),
    volumeState: (req) => volumeStateOf(stateDb, req),
  };
}
