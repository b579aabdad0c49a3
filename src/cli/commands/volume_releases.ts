/**
 * The "Releases" section of `berth volume status <volume>`: every claim whose release is under way
 * (a past claim) or reported stuck (a ReleaseStatus), with the step it is in, its last error and
 * when the next attempt starts — what otherwise only the agent logs would say.
 */
import type { CSIVolumeClaim, CSIVolumeWithClaims } from "../../api/index.js";
import { formatTimeNs, shortId, table } from "../format.js";

/** A blank line and the table, or nothing when no release is pending. */
export function releasesSection(vol: CSIVolumeWithClaims, verbose: boolean, nowMs: number): string[] {
  const claims = [
    ...Object.values(vol.ReadClaims ?? {}),
    ...Object.values(vol.WriteClaims ?? {}),
    ...Object.values(vol.PastClaims ?? {}),
  ].filter((c) => c.ReleaseStatus || c.State !== "taken");
  if (claims.length === 0) return [];
  const rows = [["Alloc ID", "Node ID", "State", "Step", "Attempts", "Next Attempt", "Last Error"]];
  for (const c of claims.sort((a, b) => a.AllocationID.localeCompare(b.AllocationID))) {
    const st = c.ReleaseStatus;
    rows.push([
      shortId(c.AllocationID, verbose),
      shortId(c.NodeID, verbose),
      c.State,
      st?.Step ?? pendingStep(vol, c),
      st ? String(st.Attempts) : "0",
      st ? nextAttempt(st.NextAttempt, nowMs) : "<none>",
      st?.LastError || "<none>",
    ]);
  }
  return ["", "Releases", ...table(rows)];
}

/** A releasing claim with nothing reported: the server's walk has it next. */
function pendingStep(vol: CSIVolumeWithClaims, c: CSIVolumeClaim): string {
  return c.State === "node-detached" && vol.ControllerRequired ? "controller-unpublish" : "server-release";
}

/** "2026-01-01T12:00:30Z (in 30s)"; "now" once due. */
export function nextAttempt(ns: number, nowMs: number): string {
  if (!ns) return "<unknown>";
  const secs = Math.round((ns / 1e6 - nowMs) / 1000);
  return `${formatTimeNs(ns)} (${secs > 0 ? `in ${secs}s` : "now"})`;
}
