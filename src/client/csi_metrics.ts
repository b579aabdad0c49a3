/**
 * The node agent's CSI call metrics: every call its CSI connections send (node calls, and the
 * controller calls the server asks this node to run), counted per plugin, RPC and gRPC status name,
 * and timed per plugin and RPC:
 *
 *   berth.client.csi.rpc.calls     {plugin_id, rpc, code}   counter  (Prometheus: …_calls_total)
 *   berth.client.csi.rpc.duration  {plugin_id, rpc}         timer    (Prometheus: …_duration_seconds)
 */
import type { CsiCallOutcome } from "../csi/call_outcome.js";
import { createCsiClient } from "../csi/client.js";
import type { Logger } from "../internal/log.js";
import type { CsiClientFactory } from "./csimanager/manager.js";
import type { Telemetry } from "../internal/metrics/telemetry.js";

/** CSI calls take from under a millisecond (Probe) to minutes (a slow attach): buckets up to 5 min. */
const CSI_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** Builds, per plugin, the `onCall` its CSI clients report to. */
export function csiCallRecorder(t: Telemetry): (pluginId: string) => (o: CsiCallOutcome) => void {
  const calls = t.counter(
    ["client", "csi", "rpc", "calls"],
    "CSI calls this agent sent, by plugin, RPC and gRPC status (OK on success).",
    ["plugin_id", "rpc", "code"],
  );
  const duration = t.timer(
    ["client", "csi", "rpc", "duration"],
    "Time CSI calls took, by plugin and RPC.",
    ["plugin_id", "rpc"],
    CSI_BUCKETS_S,
  );
  return (pluginId) => (o) => {
    calls.inc({ plugin_id: pluginId, rpc: o.rpc, code: o.code });
    duration.observe({ plugin_id: pluginId, rpc: o.rpc }, o.ms);
  };
}

export type { Telemetry as ClientTelemetry } from "../internal/metrics/telemetry.js";

/** The node agent's CSI connections: gRPC over the plugin's socket, each call measured when `t` is given. */
export function csiClientFactory(log: Logger, t: Telemetry | undefined): CsiClientFactory {
  const recorder = t ? csiCallRecorder(t) : undefined;
  return (socket, pluginId) =>
    createCsiClient(socket, {
      log,
      onCall: recorder && pluginId !== undefined ? recorder(pluginId) : undefined,
    });
}

/**
 * The node's volumes needing attention (an escalated, lazily detached release; state/types.ts
 * VolumeAttention), read from the client state DB at each collection:
 *
 *   berth.client.csi.volumes_needing_attention  {}  gauge
 *
 * A closed state DB (a stopped agent) counts none.
 */
export function volumesNeedingAttentionGauge(t: Telemetry, db: { countVolumeAttention(): number }): void {
  const gauge = t.gauge(
    ["client", "csi", "volumes_needing_attention"],
    "Volumes whose hung node unmount this agent detached lazily; each needs an operator's look.",
    [],
  );
  t.collect(() => gauge.set({}, db.countVolumeAttention()));
}
