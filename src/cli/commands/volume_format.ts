/** Volume details shared by `volume status` and `alloc status`. */
import type { MountOptions } from "../../api/index.js";
import { bytes } from "../format.js";

/** A volume's capacity; 0 is "unknown" in CSI (the plugin did not say), never "0 B". */
export function formatCapacity(n: number | null | undefined): string {
  return n ? bytes(n) : "unknown";
}

/**
 * Nomad's rendering of mount options. Flags can carry credentials, so they are never printed, even
 * if a server forgot to redact them.
 */
export function formatMountOptions(mo: MountOptions | null): string {
  if (!mo || (!mo.FSType && (mo.MountFlags ?? []).length === 0)) return "<none>";
  const parts: string[] = [];
  if (mo.FSType) parts.push(`fs_type: ${mo.FSType}`);
  if ((mo.MountFlags ?? []).length > 0) parts.push("flags: [REDACTED]");
  return parts.join(" ");
}
