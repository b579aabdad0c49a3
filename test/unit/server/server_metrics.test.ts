/**
 * The server's gauges from their sources (server/metrics/server_metrics.ts): plugin counts from the
 * plugin summaries, volume usage from the census (only the figures the node reported; abnormal as
 * 0/1), series of a plugin or volume that went away dropped at the next collection.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Telemetry } from "../../../src/internal/metrics/telemetry.js";
import { registerServerMetrics } from "../../../src/server/metrics/server_metrics.js";
import type { CensusSnapshot } from "../../../src/server/volumewatcher/claim_census.js";
import type { CSIPluginSummary } from "../../../src/structs/plugin.js";

test("plugin and usage gauges follow their sources, whole", async () => {
  const t = new Telemetry({ disableHostname: true, collectionIntervalMs: 0 });
  let plugins = [
    { ID: "hostpath", ControllersHealthy: 1, ControllersExpected: 1, NodesHealthy: 2, NodesExpected: 3 },
  ] as CSIPluginSummary[];
  const census: CensusSnapshot = {
    claims: { read: 0, write: 1 },
    pendingByState: new Map(),
    failingByStep: new Map(),
    oldestPendingSeconds: 0,
    usage: [
      {
        namespace: "default",
        volumeId: "demo",
        pluginId: "hostpath",
        nodeId: "n1",
        bytesUsed: 5242880,
        bytesTotal: 1073741824,
        abnormal: true,
      },
    ],
  };
  registerServerMetrics(t, {
    store: { index: () => 7, listPlugins: () => plugins },
    census: () => census,
    followupsArmed: () => 2,
  });
  let lines = (await t.prometheus()).split("\n");
  const vol = 'namespace="default",volume_id="demo",plugin_id="hostpath",node_id="n1"';
  for (const l of [
    'berth_server_plugin_nodes_healthy{plugin_id="hostpath"} 2',
    'berth_server_plugin_nodes_expected{plugin_id="hostpath"} 3',
    'berth_server_plugin_controllers_healthy{plugin_id="hostpath"} 1',
    `berth_server_volume_usage_bytes_used{${vol}} 5242880`,
    `berth_server_volume_usage_bytes_total{${vol}} 1073741824`,
    `berth_server_volume_usage_abnormal{${vol}} 1`,
    "berth_server_state_index 7",
    "berth_server_scheduler_followups_armed 2",
  ]) {
    assert.ok(lines.includes(l), `${l} in\n${lines.join("\n")}`);
  }
  assert.ok(
    !lines.some((l) => l.startsWith("berth_server_volume_usage_bytes_available{")),
    "not reported, not shown",
  );

  plugins = [];
  census.usage = [];
  lines = (await t.prometheus()).split("\n");
  assert.ok(
    !lines.some((l) => l.includes('plugin_id="hostpath"')),
    "gone plugins and volumes leave no series",
  );
});
