/**
 * The `Capacity` field of `GET /v1/plugin/csi/:id?capacity=true` (berth's, absent without the
 * parameter so Nomad's clients keep Nomad's shape): what
 * the leader's capacity poll last measured per topology segment (structs/capacity.ts), each entry
 * with `Stale` (true once it counts as unknown for placement, capacity_fit.ts). Null when the plugin
 * was never measured (no healthy controller advertises GET_CAPACITY, or no poll yet).
 */
import type { PluginCapacity } from "../../structs/capacity.js";

export function capacityView(c: PluginCapacity | undefined, nowMs: number) {
  if (!c) return null;
  return {
    Entries: c.Entries.map((e) => ({ ...e, Stale: nowMs >= e.StaleAt })),
    LastError: c.LastError,
    ModifyIndex: c.ModifyIndex,
  };
}
