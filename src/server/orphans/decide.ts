/**
 * Which create intents are orphans, pure (structs/volume_intent.ts says what an intent is). An
 * intent whose create (or an adopt/delete of it) holds the volume's lock now is in flight, not an
 * orphan; every other one is: the plugin may hold storage under its name that no berth volume
 * records. None is dropped here by guessing — a volume recorded under the same ID says nothing of
 * which storage the interrupted create made (CSI lists no names); only the create that retries it
 * (same name: the same storage), adopt or delete end an intent.
 */
import type { CSIVolume } from "../../structs/volume.js";
import type { CSIVolumeOrphan, VolumeCreateIntent } from "../../structs/volume_intent.js";

export function orphanIntents(
  intents: readonly VolumeCreateIntent[],
  inFlight: (namespace: string, id: string) => boolean,
): VolumeCreateIntent[] {
  return intents.filter((i) => !inFlight(i.Namespace, i.ID));
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
