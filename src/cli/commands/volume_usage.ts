/**
 * The "Usage" section of `berth volume status <volume>`: the volume's measured usage and health
 * (NodeGetVolumeStats on a node that publishes it, `?usage=true`): bytes and inodes used /
 * available / total, the condition, the node that measured it and how old the figure is. Figures
 * are reported on change only, so the age is that of the last change past the threshold
 * (structs/volume_usage.ts), and a volume no longer published keeps its last figure.
 */
import type { CSIVolumeUsage } from "../../api/index.js";
import { ago, bytes, kv, shortId } from "../format.js";

/** A blank line and the section; a line saying why there is none when no node reported. */
export function usageSection(
  usage: CSIVolumeUsage | null | undefined,
  verbose: boolean,
  nowMs: number,
): string[] {
  if (usage === undefined) return [];
  if (usage === null) {
    return ["", "Usage", "No usage reported (not published on a node whose plugin reports volume stats)"];
  }
  const pct = (used: number, total: number) => (total > 0 ? ` (${((used / total) * 100).toFixed(1)}%)` : "");
  const condition = usage.Abnormal ? `abnormal: ${usage.Message || "no message"}` : "healthy";
  return [
    "",
    "Usage",
    ...kv([
      ["Bytes Used", `${bytes(usage.BytesUsed)}${pct(usage.BytesUsed, usage.BytesTotal)}`],
      ["Bytes Available", bytes(usage.BytesAvailable)],
      ["Bytes Total", usage.BytesTotal > 0 ? bytes(usage.BytesTotal) : "unknown"],
      ["Inodes Used", `${usage.InodesUsed}${pct(usage.InodesUsed, usage.InodesTotal)}`],
      ["Inodes Available", String(usage.InodesAvailable)],
      ["Inodes Total", usage.InodesTotal > 0 ? String(usage.InodesTotal) : "unknown"],
      ["Condition", condition],
      ["Node ID", shortId(usage.NodeID, verbose)],
      ["Updated", ago(usage.UpdateTime / 1e6, nowMs)],
    ]),
  ];
}
