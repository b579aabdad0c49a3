/**
 * The server's gauges, collected at scrape time (Telemetry.collect, at most once per
 * collection_interval) from what is already in memory or indexed — never a scan of a table:
 *
 *   berth.server.state.index                                  the store's latest write index
 *   berth.server.plugin.{controllers,nodes}_{healthy,expected} {plugin_id}   from the plugin summaries
 *   berth.server.volume.claims            {mode}              live claims, read and write
 *   berth.server.volume.releases_pending  {state}             claims to release, by release-walk state
 *   berth.server.volume.releases_failing  {step}              claims whose release step failed or waits
 *   berth.server.volume.oldest_pending_release_seconds        age of the oldest pending release
 *   berth.server.volume.usage.{bytes,inodes}_{used,available,total}, .abnormal
 *                                         {namespace, volume_id, plugin_id, node_id}
 *   berth.server.scheduler.followups_armed                    delayed evals waiting for their time
 *
 * Plugin summaries are O(plugins); the claim figures come from the volumewatcher's census
 * (claim_census.ts), kept by deltas as it reads changed volumes.
 */
import type { Telemetry } from "../../internal/metrics/telemetry.js";
import type { StateReader } from "../state/store.js";
import type { CensusSnapshot, VolumeUsageFigures } from "../volumewatcher/claim_census.js";

export interface ServerMetricSources {
  store: Pick<StateReader, "index" | "listPlugins">;
  census: () => CensusSnapshot;
  followupsArmed: () => number;
}

type UsageField =
  "bytesUsed" | "bytesAvailable" | "bytesTotal" | "inodesUsed" | "inodesAvailable" | "inodesTotal";
type UsageLabels = { namespace: string; volume_id: string; plugin_id: string; node_id: string };

const USAGE_FIGURES: [UsageField, string, string][] = [
  ["bytesUsed", "bytes_used", "Bytes used on the volume, as its node plugin reported."],
  ["bytesAvailable", "bytes_available", "Bytes available on the volume."],
  ["bytesTotal", "bytes_total", "The volume's size in bytes."],
  ["inodesUsed", "inodes_used", "Inodes used on the volume."],
  ["inodesAvailable", "inodes_available", "Inodes available on the volume."],
  ["inodesTotal", "inodes_total", "The volume's inodes in all."],
];

/** Registers the server's gauges and their collector; returns the function that removes it. */
export function registerServerMetrics(t: Telemetry, src: ServerMetricSources): () => void {
  const index = t.gauge(["server", "state", "index"], "The state store's latest write index.", []);
  const plugins = pluginGauges(t);
  const claims = claimGauges(t);
  const usage = usageGauges(t);
  const followups = t.gauge(
    ["server", "scheduler", "followups_armed"],
    "Delayed evaluations (reschedules) waiting for their time.",
    [],
  );
  return t.collect(() => {
    index.set({}, src.store.index());
    plugins(src.store.listPlugins());
    const census = src.census();
    claims(census);
    usage(census);
    followups.set({}, src.followupsArmed());
  });
}

type PluginSummary = ReturnType<ServerMetricSources["store"]["listPlugins"]>[number];

/** The plugin instance gauges, by plugin; returns their update from the plugin summaries. */
function pluginGauges(t: Telemetry): (plugins: readonly PluginSummary[]) => void {
  const plugin = (name: string, help: string) => t.gauge(["server", "plugin", name], help, ["plugin_id"]);
  const ctlHealthy = plugin("controllers_healthy", "Healthy controller instances of the CSI plugin.");
  const ctlExpected = plugin("controllers_expected", "Controller instances the plugin's jobs expect.");
  const nodesHealthy = plugin("nodes_healthy", "Healthy node instances of the CSI plugin.");
  const nodesExpected = plugin("nodes_expected", "Node instances the plugin's jobs expect.");
  return (plugins) => {
    const byPlugin = (f: (p: PluginSummary) => number) =>
      plugins.map((p): [{ plugin_id: string }, number] => [{ plugin_id: p.ID }, f(p)]);
    ctlHealthy.replace(byPlugin((p) => p.ControllersHealthy));
    ctlExpected.replace(byPlugin((p) => p.ControllersExpected));
    nodesHealthy.replace(byPlugin((p) => p.NodesHealthy));
    nodesExpected.replace(byPlugin((p) => p.NodesExpected));
  };
}

/** The claim and release gauges; returns their update from the volumewatcher's census. */
function claimGauges(t: Telemetry): (c: CensusSnapshot) => void {
  const claims = t.gauge(["server", "volume", "claims"], "Live CSI volume claims, by mode.", ["mode"]);
  const pending = t.gauge(
    ["server", "volume", "releases_pending"],
    "Claims whose release is due, by the release walk's state.",
    ["state"],
  );
  const failing = t.gauge(
    ["server", "volume", "releases_failing"],
    "Claims whose release records a failing or waiting step, by step.",
    ["step"],
  );
  const oldest = t.gauge(
    ["server", "volume", "oldest_pending_release_seconds"],
    "Seconds since this server first saw the oldest release still pending.",
    [],
  );
  return (c) => {
    claims.replace([
      [{ mode: "read" }, c.claims.read],
      [{ mode: "write" }, c.claims.write],
    ]);
    pending.replace([...c.pendingByState].map(([state, n]): [{ state: string }, number] => [{ state }, n]));
    failing.replace([...c.failingByStep].map(([step, n]): [{ step: string }, number] => [{ step }, n]));
    oldest.set({}, c.oldestPendingSeconds);
  };
}

/** The volume usage gauges, by volume and node; returns their update from the census. */
function usageGauges(t: Telemetry): (c: CensusSnapshot) => void {
  const usageLabels = ["namespace", "volume_id", "plugin_id", "node_id"] as const;
  const usage = USAGE_FIGURES.map(
    ([field, name, help]) =>
      [field, t.gauge(["server", "volume", "usage", name], help, usageLabels)] as const,
  );
  const abnormal = t.gauge(
    ["server", "volume", "usage", "abnormal"],
    "1 when the volume's node plugin (NodeGetVolumeStats) or controller plugin (ControllerGetVolume) reports its condition abnormal.",
    usageLabels,
  );
  const labelsOf = (u: VolumeUsageFigures): UsageLabels => ({
    namespace: u.namespace,
    volume_id: u.volumeId,
    plugin_id: u.pluginId,
    node_id: u.nodeId,
  });
  return (c) => {
    for (const [field, gauge] of usage) {
      gauge.replace(
        c.usage.flatMap((u): [UsageLabels, number][] => {
          const v = u[field];
          return v === undefined ? [] : [[labelsOf(u), v]];
        }),
      );
    }
    abnormal.replace(
      c.usage.flatMap((u): [UsageLabels, number][] =>
        u.abnormal === undefined ? [] : [[labelsOf(u), u.abnormal ? 1 : 0]],
      ),
    );
  };
}
