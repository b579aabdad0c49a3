/**
 * The node-side ClientCSI calls: NodeExpandVolume (after the server expanded a volume through its
 * controller) and NodeDetachVolume (`volume detach`: the server asks this node to unmount a
 * terminal alloc's volume). Both act on one alloc's use of one volume, found through the stub the
 * csi_hook persisted when it mounted it; an alloc without a stub has nothing mounted here, which
 * makes both calls idempotent.
 *
 * NodeExpandVolume runs only when the node plugin advertises EXPAND_VOLUME (otherwise there is
 * nothing to do and it answers CapacityBytes 0). It is retried on transient errors (e.g. ABORTED
 * while the plugin handles another call for the volume). NodeDetachVolume goes through the volume
 * manager, so it is serialised with every other node call for that volume and keeps the staging
 * reference count right.
 */
import { BerthError } from "../../structs/errors.js";
import type { NodeVolumeRef } from "../../structs/rpc.js";
import type { Logger } from "../../internal/log.js";
import { DEFAULT_CSI_RETRY, retryCsiCall } from "../csimanager/csi_retry.js";
import type { NodePluginHandle } from "../csimanager/manager.js";
import { volumePaths } from "../csimanager/paths.js";
import type { UnmountVolumeRequest } from "../csimanager/volume_manager.js";
import type { RegisteredPlugin } from "../dynamicplugins/types.js";
import type { CsiVolumeStub } from "../state/types.js";
import type { ClientCsiPeer } from "./client_csi.js";

/** What the node-side handlers read and call; the node agent builds it from its parts. */
export interface NodeVolumeAccess {
  /** Every persisted stub of `allocId` (alias → stub). */
  volumeStubs(allocId: string): Record<string, CsiVolumeStub>;
  registeredNodePlugin(pluginId: string): RegisteredPlugin | undefined;
  nodePlugin(pluginId: string, signal: AbortSignal): Promise<NodePluginHandle>;
  unmountVolume(req: UnmountVolumeRequest, signal: AbortSignal): Promise<void>;
}

export function registerNodeVolumeHandlers(
  peer: ClientCsiPeer,
  access: NodeVolumeAccess,
  log: Logger,
  timeoutMs: number,
): void {
  const find = (ref: NodeVolumeRef): { stub: CsiVolumeStub; plugin: RegisteredPlugin } | null => {
    const stub = Object.values(access.volumeStubs(ref.AllocID)).find(
      (s) => s.volumeId === ref.VolumeID && s.namespace === ref.Namespace && s.pluginId === ref.PluginID,
    );
    if (!stub) return null;
    const plugin = access.registeredNodePlugin(ref.PluginID);
    if (!plugin) {
      throw new BerthError(
        "ERR_CSI_PLUGIN_UNAVAILABLE",
        `CSI node plugin ${JSON.stringify(ref.PluginID)} is not running on this node`,
      );
    }
    return { stub, plugin };
  };

  peer.handle("ClientCSI.NodeExpandVolume", async (req, signal) => {
    const found = find(req);
    if (!found) return { CapacityBytes: 0 };
    const { stub, plugin } = found;
    const node = await access.nodePlugin(req.PluginID, signal);
    if (!node.capabilities.expandVolume) return { CapacityBytes: 0 };
    const paths = volumePaths(
      plugin,
      { namespace: stub.namespace, volumeId: stub.volumeId, allocId: req.AllocID },
      stub.usage,
    );
    const res = await retryCsiCall(
      "NodeExpandVolume",
      () =>
        node.client.nodeExpandVolume(
          {
            volumeId: stub.externalId,
            volumePath: paths.targetPath,
            stagingTargetPath: stub.stagingPath ? paths.stagingPath : "",
            capacityRange: { requiredBytes: req.CapacityMin, limitBytes: req.CapacityMax },
            volumeCapability: null,
            secrets: { ...req.Secrets },
          },
          { signal, timeoutMs },
        ),
      { ...DEFAULT_CSI_RETRY, deadlineMs: timeoutMs },
      log,
      signal,
    );
    log.info("volume expanded on node", { volume: req.VolumeID, alloc: req.AllocID });
    return { CapacityBytes: res.capacityBytes };
  });

  peer.handle("ClientCSI.NodeDetachVolume", async (req, signal) => {
    const found = find(req);
    if (!found) return {};
    const { stub, plugin } = found;
    await access.unmountVolume(
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
}

/** The node agent's parts as NodeVolumeAccess. */
export function nodeVolumeAccess(parts: {
  stateDb: { getVolumeStubs(allocId: string): Record<string, CsiVolumeStub> };
  registry: { get(role: "csi-node", pluginId: string): RegisteredPlugin | undefined };
  plugins: { nodePlugin(pluginId: string, signal?: AbortSignal): Promise<NodePluginHandle> };
  volumeManager: { unmountVolume(req: UnmountVolumeRequest, signal?: AbortSignal): Promise<void> };
}): NodeVolumeAccess {
  return {
    volumeStubs: (allocId) => parts.stateDb.getVolumeStubs(allocId),
    registeredNodePlugin: (pluginId) => parts.registry.get("csi-node", pluginId),
    nodePlugin: (pluginId, signal) => parts.plugins.nodePlugin(pluginId, signal),
    unmountVolume: (req, signal) => parts.volumeManager.unmountVolume(req, signal),
  };
}
