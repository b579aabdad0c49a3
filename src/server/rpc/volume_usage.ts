/**
 * CSIVolume.UpdateUsage: a node agent's batch of volume usage and health figures (NodeGetVolumeStats
 * of the volumes published on it), kept on each volume as `CSIVolume.Usage`.
 *
 * Contracts:
 * - The agent connection has already checked that NodeID is the calling node (agent.ts). A volume
 *   is recorded only while a live claim (read or write) of an alloc on that node holds it, so a node
 *   can describe no other volume; the others come back in `Refused` (a claim freed while the report
 *   was in flight is normal, and must not fail the rest of the batch).
 * - Written only on change (structs/volume_usage.ts usageChanged against the stored record, or a
 *   different reporting node): the entries are compared outside any transaction first, so a report
 *   that changes nothing opens none; those that change are re-read and written in one transaction.
 *   Each entry costs one volume read and at most one volume write: O(1) in the cluster's size.
 * - The plugin's condition message is stored with the volume's secret values redacted.
 */
import { BerthError } from "../../structs/errors.js";
import { checkId } from "../../structs/ids.js";
import { isObject } from "../../structs/json_check.js";
import { NS_PER_MS } from "../../structs/job.js";
import type { CSIVolume } from "../../structs/volume.js";
import {
  checkUsageReports,
  redactUsageMessage,
  usageChanged,
  usageFigures,
  type CSIVolumeUsage,
  type VolumeUsageReport,
  type VolumeUsageUpdateRequest,
  type VolumeUsageUpdateResponse,
} from "../../structs/volume_usage.js";
import type { StateReader, StateStore } from "../state/store.js";

export class VolumeUsageEndpoint {
  /** `nowMs` is injectable for tests. */
  constructor(
    private readonly store: StateStore,
    private readonly nowMs: () => number = Date.now,
  ) {}

  async update(req: VolumeUsageUpdateRequest): Promise<VolumeUsageUpdateResponse> {
    if (!isObject(req)) throw new BerthError("ERR_VALIDATION", "the request must be an object");
    const nodeId = checkId("NodeID", req.NodeID);
    const reports = lastPerVolume(checkUsageReports(req.Volumes));
    const refused: string[] = [];
    const due: VolumeUsageReport[] = [];
    for (const r of reports) {
      const next = nextUsage(this.store, nodeId, r, 0);
      if (next === "refused") refused.push(`${r.Namespace}/${r.VolumeID}`);
      else if (next !== "unchanged") due.push(r);
    }
    let recorded = 0;
    if (due.length > 0) {
      const nowNs = this.nowMs() * NS_PER_MS;
      recorded = await this.store.txn((tx) => {
        let n = 0;
        for (const r of due) {
          // Re-read inside the transaction: the claim may have gone, or another report won.
          const next = nextUsage(tx, nodeId, r, nowNs);
          if (next === "refused") {
            if (!refused.includes(`${r.Namespace}/${r.VolumeID}`))
              refused.push(`${r.Namespace}/${r.VolumeID}`);
            continue;
          }
          if (next === "unchanged") continue;
          tx.putVolume({ ...next.vol, Usage: next.usage });
          n++;
        }
        return n;
      });
    }
    return { Recorded: recorded, Refused: refused, Index: this.store.index() };
  }
}

/** What an entry would write: refused (not this node's), unchanged, or the new record. */
function nextUsage(
  state: Pick<StateReader, "getVolume">,
  nodeId: string,
  r: VolumeUsageReport,
  nowNs: number,
): "refused" | "unchanged" | { vol: CSIVolume; usage: CSIVolumeUsage } {
  const vol = state.getVolume(r.Namespace, r.VolumeID);
  if (!vol || !claimedByNode(vol, nodeId)) return "refused";
  const figures = { ...usageFigures(r), Message: redactUsageMessage(r.Message, vol.Secrets) };
  const prev = vol.Usage;
  if (prev && prev.NodeID === nodeId && !usageChanged(prev, figures)) return "unchanged";
  return { vol, usage: { NodeID: nodeId, ...figures, UpdateTime: nowNs } };
}

/** A live claim (read or write; not one being released) of an alloc on `nodeId`. */
function claimedByNode(vol: CSIVolume, nodeId: string): boolean {
  const live = [...Object.values(vol.ReadClaims), ...Object.values(vol.WriteClaims)];
  return live.some((c) => c.NodeID === nodeId);
}

/** A volume named twice in one report counts once: its last entry. */
function lastPerVolume(reports: VolumeUsageReport[]): VolumeUsageReport[] {
  const byKey = new Map<string, VolumeUsageReport>();
  for (const r of reports) byKey.set(`${r.Namespace}\u0000${r.VolumeID}`, r);
  return [...byKey.values()];
}
