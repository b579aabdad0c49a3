/**
 * The "Usage" section of `berth volume status <volume>`: the volume's measured usage and health
 * (`?usage=true`): bytes and inodes used / available / total from NodeGetVolumeStats on a node
 * that publishes it, and the condition each side reported — "Node Condition" (the node plugin, with
 * the node that measured it) and "Controller Condition" (ControllerGetVolume, polled by the leader)
 * — and how old each figure is. Both are reported on change only, so an age is that of the last
 * change (structs/volume_usage.ts), and a volume no longer published keeps its last node figure.
 */
import type { CSIVolumeControllerCondition, CSIVolumeUsage } from "../../api/index.js";
import { ago, bytes, kv, shortId } from "../format.js";

const conditionText = (abnormal: boolean, message: string) =>
  abnormal ? `abnormal: ${message || "no message"}` : "healthy";

/**
 * A blank line and the section; a line saying why there are no figures when no node reported.
 * Nothing when the server knows neither field (`undefined`: an older server).
 */
export function usageSection(
  usage: CSIVolumeUsage | null | undefined,
  verbose: boolean,
  nowMs: number,
  controller?: CSIVolumeControllerCondition | null,
): string[] {
  if (usage === undefined && !controller) return [];
  const controllerLines: [string, string][] = controller
    ? [
        ["Controller Condition", conditionText(controller.Abnormal, controller.Message)],
        ["Controller Updated", ago(controller.UpdateTime / 1e6, nowMs)],
      ]
    : [];
  if (!usage) {
    return [
      "",
      "Usage",
      "No usage reported (not published on a node whose plugin reports volume stats)",
      ...kv(controllerLines),
    ];
  }
  const pct = (used: number, total: number) => (total > 0 ? ` (${((used / total) * 100).toFixed(1)}%)` : "");
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
      ["Node Condition", conditionText(usage.Abnormal, usage.Message)],
      ["Node ID", shortId(usage.NodeID, verbose)],
      ["Updated", ago(usage.UpdateTime / 1e6, nowMs)],
      ...controllerLines,
    ]),
  ];
}
