/**
 * Which create intents are orphans, pure (structs/volume_intent.ts says what an intent is).
 * - In flight: the create (or an adopt/delete of it) holds the volume's lock now — not an orphan.
 * - Resolved: a volume of that namespace + ID is recorded on the same plugin under the same name —
 *   the same storage, since CreateVolume is idempotent by name (a retried create or a register
 *   finished what the crash interrupted). The intent is stale and can be dropped.
 * - Otherwise an orphan: the plugin may hold storage under the intent's name that no berth volume
 *   records.
 */
import type { CSIVolume } from "../../structs/volume.js";
import type { CSIVolumeOrphan, VolumeCreateIntent } from "../../structs/volume_intent.js";

export interface IntentVerdicts {
  orphans: VolumeCreateIntent[];
  resolved: VolumeCreateIntent[];
}

export function classifyIntents(
  intents: readonly VolumeCreateIntent[],
  volumeOf: (namespace: string, id: string) => CSIVolume | undefined,
  inFlight: (namespace: string, id: string) => boolean,
): IntentVerdicts {
  const out: IntentVerdicts = { orphans: [], resolved: [] };
  for (const intent of intents) {
    if (inFlight(intent.Namespace, intent.ID)) continue;
    const rec = volumeOf(intent.Namespace, intent.ID);
    if (rec && rec.ExternalID !== "" && rec.PluginID === intent.PluginID && rec.Name === intent.Name) {
      out.resolved.push(intent);
    } else out.orphans.push(intent);
  }
  return out;
}

/** External IDs the plugin lists that none of `recorded` (its berth volumes) holds, sorted. */
export function unrecordedStorage(listed: readonly string[], recorded: readonly CSIVolume[]): string[] {
  const held = new Set(recorded.map((v) => v.ExternalID));
  return [...new Set(listed.filter((id) => !held.has(id)))].sort();
}

/** The API's view of an orphan: never the spec (it holds secrets). */
export function orphanView(
  intent: VolumeCreateIntent,
  listing: { unrecorded: string[] | null; error: string },
): CSIVolumeOrphan {
  return {
    ID: intent.ID,
    Namespace: intent.Namespace,
    Name: intent.Name,
    PluginID: intent.PluginID,
    CreateTime: intent.CreateTime,
    UnrecordedStorage: listing.unrecorded,
    ListError: listing.error,
    CreateIndex: intent.CreateIndex,
    ModifyIndex: intent.ModifyIndex,
  };
}
