/**
 * Single-writer claims: the claims a node agent fences by itself when it cannot renew its lease
 * with the servers, and the server holds for the fence bound before it frees them (docs/design.md
 * invariant "a single-writer volume never has two writers"). A write claim in a mode that admits
 * one writer: single-node-writer, single-node-single-writer and multi-node-single-writer (claim.ts
 * refuses a second writer claim in these modes).
 * Pure.
 */
import type { VolumeClaim } from "./volume.js";

export const SINGLE_WRITER_ACCESS_MODES: readonly string[] = [
  "single-node-writer",
  "single-node-single-writer",
  "multi-node-single-writer",
];

/** A mode that admits one writer at a time (a claim's, or a job's volume request's). */
export function isSingleWriterAccessMode(mode: string): boolean {
  return SINGLE_WRITER_ACCESS_MODES.includes(mode);
}

export function isSingleWriterClaim(claim: Pick<VolumeClaim, "Mode" | "AccessMode">): boolean {
  return claim.Mode === "write" && isSingleWriterAccessMode(claim.AccessMode);
}
