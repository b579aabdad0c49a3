/**
 * The optional call record of csi-hostpath: one JSON line per RPC, appended when the call ends, so
 * tests (and operators debugging a plugin) can check the order of CSI calls across processes. Only
 * identifiers, the outcome and the capability's shape are written — never secrets, contexts or
 * mount flags (only how many there were).
 */
import fs from "node:fs";
import type { WireVolumeCapability } from "../wire.js";

export interface CallRecord {
  /** Unix milliseconds when the call ended. */
  time: number;
  method: string;
  volume_id: string;
  /** The request's node_id (controller calls), or the serving node's id for Node service calls. */
  node_id: string;
  /** Node calls: the request's target_path, else its staging_target_path (pairs calls per mount). */
  target?: string;
  /** "OK" or the gRPC status name. */
  code: string;
  /** Set when the failure was injected by --faults rather than produced by the handler. */
  fault?: true;
  /** Calls carrying one volume capability: its CSI access mode name (e.g. SINGLE_NODE_WRITER). */
  access_mode?: string;
  /** ... its access type. */
  access_type?: "mount" | "block";
  /** ... a mount capability's fs_type. */
  fs_type?: string;
  /** ... how many mount_flags it carried (the flags themselves may hold credentials). */
  mount_flags_count?: number;
}

/** What the call log records of a request's `volume_capability` (none: nothing). */
export function capabilityRecord(
  req: Record<string, unknown>,
): Pick<CallRecord, "access_mode" | "access_type" | "fs_type" | "mount_flags_count"> {
  const c = req.volume_capability as WireVolumeCapability | null | undefined;
  if (!c || typeof c !== "object") return {};
  const access_mode = c.access_mode?.mode;
  if (c.block) return { access_mode, access_type: "block" };
  if (!c.mount) return { access_mode };
  return {
    access_mode,
    access_type: "mount",
    fs_type: c.mount.fs_type,
    mount_flags_count: c.mount.mount_flags?.length ?? 0,
  };
}

export type CallRecorder = (record: Omit<CallRecord, "time">) => void;

/** A recorder appending to `file`, or a no-op without a file. Appends are synchronous and ordered. */
export function callRecorder(file: string | null): CallRecorder {
  if (!file) return () => undefined;
  return (record) => {
    fs.appendFileSync(file, JSON.stringify({ time: Date.now(), ...record }) + "\n");
  };
}

const PERIODIC_READS = new Set(["NodeGetVolumeStats", "ControllerGetVolume"]);

/**
 * Reads a call log back; tests use it. NodeGetVolumeStats and ControllerGetVolume — a CO's
 * periodic reads, outside every ordering the tests check — are left out unless `reads` asks for them.
 */
export function readCallLog(file: string, opts: { reads?: boolean } = {}): CallRecord[] {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as CallRecord)
    .filter((c) => opts.reads === true || !PERIODIC_READS.has(c.method));
}
