/**
 * putVolume for the common case — the volume is stored, neither it nor the stored record holds
 * secrets or mount flags — without parsing the stored record (every claim and release step puts a volume, and
 * the parse and the two content encodings of the general path were a third of the claim path's
 * store CPU). The stored text is the JSON of a stamped record; the put is a no-op exactly when
 * the new record stamped with the stored record's own indexes encodes to that same text (asked
 * only when the new record's text has the length that allows it), which is what contentOf's
 * comparison decides on the general path (a volume has no index fields but CreateIndex and
 * ModifyIndex).
 *
 * Answers undefined when it cannot decide so (the general path then does); `{ rec }` when nothing
 * changed (rec is the stored record); `{ rec, json, before }` when it wrote the row: the new
 * record, its stored JSON and the JSON it replaced. The caller records the write (touched tables,
 * watch keys, the commit feed).
 */
import type { CSIVolume } from "../../../structs/volume.js";
import { SEALED_KEY } from "../secrets/secrets_at_rest.js";
import type { Statements } from "./statements.js";

export function putVolumeByText(
  s: Statements,
  vol: CSIVolume,
  writeIndex: number,
): { rec: CSIVolume; json?: string; before?: string } | undefined {
  if (vol.Secrets && Object.keys(vol.Secrets).length > 0) return undefined;
  // Mount flags are sealed with the secrets (secrets/secrets_at_rest.ts): the general path seals them.
  if ((vol.MountOptions?.MountFlags?.length ?? 0) > 0) return undefined;
  const row = s.volumeForPut.get(vol.Namespace, vol.ID) as
    { json: string; c: unknown; m: unknown } | undefined;
  if (!row || typeof row.c !== "number" || typeof row.m !== "number") return undefined;
  if (row.json.includes(SEALED_KEY)) return undefined;
  const rec = { ...vol, CreateIndex: row.c, ModifyIndex: writeIndex };
  const json = JSON.stringify(rec);
  // A no-op put's text differs from the stored one in the ModifyIndex digits alone, so any other
  // difference in length is a change, decided without a second encoding (claims and release
  // steps, the hot callers, only ever put a changed volume).
  const lengthOfNoop = row.json.length + String(writeIndex).length - String(row.m).length;
  if (
    json.length === lengthOfNoop &&
    JSON.stringify({ ...vol, CreateIndex: row.c, ModifyIndex: row.m }) === row.json
  ) {
    return { rec: JSON.parse(row.json) as CSIVolume };
  }
  s.putVolume.run(rec.Namespace, rec.ID, rec.PluginID, json);
  return { rec, json, before: row.json };
}
