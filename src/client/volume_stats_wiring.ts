/**
 * The node agent's volume stats poller (csimanager/volume_stats.ts) wired to its parts: the
 * published volumes are the persisted stubs of uses not being released, the plugins come from the registry and the
 * csimanager, the locks are the volume manager's, and the reports go to the server as
 * CSIVolume.UpdateUsage over the agent's connection.
 */
import type { KeyedMutex } from "../internal/keyed_mutex.js";
import type { Logger } from "../internal/log.js";
import type { NodePluginSource } from "./csimanager/manager.js";
import { VolumeStatsPoller } from "./csimanager/volume_stats.js";
import type { RegisteredPlugin } from "./dynamicplugins/types.js";
import type { ServerConnection } from "./rpc/server_conn.js";
import type { CsiVolumeStub, PendingRelease } from "./state/types.js";

/** Deadline of one report to the server. */
const REPORT_TIMEOUT_MS = 10_000;

export function volumeStatsPoller(parts: {
  nodeId: string;
  stateDb: {
    listAllVolumeStubs(): { allocId: string; alias: string; stub: CsiVolumeStub }[];
    listAllocsWithPendingReleases(): string[];
    getPendingReleases(allocId: string): Record<string, PendingRelease>;
  };
  registry: { get(role: "csi-node", pluginId: string): RegisteredPlugin | undefined };
  plugins: NodePluginSource;
  locks: KeyedMutex;
  conn: Pick<ServerConnection, "call">;
  log: Logger;
  /** client `csi_volume_stats_interval` / `-csi-volume-stats-interval`; 60 s by default. */
  intervalMs: number | undefined;
}): VolumeStatsPoller {
  const { nodeId, stateDb, registry, conn } = parts;
  return new VolumeStatsPoller({
    // A use being released (its stub stays until the server freed the claim) is not polled: it is
    // unmounted or about to be, while another alloc's use of the volume may still be read.
    published: () => {
      const releasing = new Set(stateDb.listAllocsWithPendingReleases());
      return stateDb
        .listAllVolumeStubs()
        .filter((s) => !releasing.has(s.allocId) || !stateDb.getPendingReleases(s.allocId)[s.alias]);
    },
    registeredNodePlugin: (pluginId) => registry.get("csi-node", pluginId),
    plugins: parts.plugins,
    locks: parts.locks,
    report: async (volumes) => {
      const res = await conn.call(
        "CSIVolume.UpdateUsage",
        { NodeID: nodeId, Volumes: volumes },
        { timeoutMs: REPORT_TIMEOUT_MS },
      );
      if (res.Refused.length > 0) {
        parts.log.debug("the server recorded no usage for volumes this node holds no claim on", {
          volumes: res.Refused,
        });
      }
    },
    log: parts.log,
    intervalMs: parts.intervalMs,
  });
}
