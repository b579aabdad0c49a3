/**
 * The "Capacity" section of `plugin status <plugin>`: what the leader's GetCapacity poll last
 * measured per topology segment (the API's `Capacity`), with the age of each answer. Nothing when
 * the plugin was never measured.
 */
import type { CSIPluginCapacity } from "../../api/index.js";
import { ago, bytes, table } from "../format.js";

function segmentName(segments: Record<string, string>): string {
  const pairs = Object.entries(segments).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return pairs.length === 0 ? "(all)" : pairs.map(([k, v]) => `${k}=${v}`).join(",");
}

export function capacitySection(c: CSIPluginCapacity | null | undefined, nowMs: number): string[] {
  if (!c || c.Entries.length === 0) return [];
  const rows = c.Entries.map((e) => [
    segmentName(e.Segments),
    `${bytes(e.AvailableBytes)} (${e.AvailableBytes})`,
    e.Stale ? `${ago(e.MeasuredAt, nowMs)} (stale)` : ago(e.MeasuredAt, nowMs),
  ]);
  return [
    "",
    "Capacity",
    ...table([["Segment", "Available", "Measured"], ...rows]),
    ...(c.LastError ? [`Last error: ${c.LastError}`] : []),
  ];
}
