/**
 * A volume's measured usage and health (issue 15): what a node's plugin answered to
 * NodeGetVolumeStats for a volume published there, kept on the volume as `CSIVolume.Usage`.
 * Nomad has no such record (Nomad #10325); the field names are berth's, read by the API
 * (`?usage=true`), `volume status`, the event stream and the metrics.
 *
 * Changes only: the node reports a volume when its figures moved by more than the threshold below
 * or its condition changed, and the server writes only then too (the same rule), so a steady volume
 * costs no write however often it is polled. `UpdateTime` is therefore when the figures last
 * changed that much, not when they were last measured.
 */
import { validationError } from "./errors.js";
import { checkId } from "./ids.js";
import { asObject, optBool, optNumber, optString } from "./json_check.js";

export interface CSIVolumeUsage {
  /** The node whose plugin measured it (a multi-node volume: the latest reporter). */
  NodeID: string;
  /** From the plugin's BYTES usage entry; 0 when it gave none. */
  BytesUsed: number;
  BytesAvailable: number;
  BytesTotal: number;
  /** From the INODES entry; 0 when it gave none. */
  InodesUsed: number;
  InodesAvailable: number;
  InodesTotal: number;
  /** VolumeCondition, when the node plugin advertises VOLUME_CONDITION; false/"" otherwise. */
  Abnormal: boolean;
  Message: string;
  /** Unix nanoseconds of the report that last changed the record. */
  UpdateTime: number;
}

/** The figures a node measured (the record without NodeID and UpdateTime). */
export type VolumeUsageFigures = Omit<CSIVolumeUsage, "NodeID" | "UpdateTime">;

/** Byte figures closer than this are "the same": at least 1 MiB, or 0.1% of the volume's size. */
export const USAGE_MIN_BYTES_DELTA = 1024 * 1024;
/** Inode figures closer than this are "the same": at least 64, or 0.1% of the inode count. */
export const USAGE_MIN_INODES_DELTA = 64;
/** Longest condition message kept: it comes from a plugin and is for people to read. */
export const MAX_USAGE_MESSAGE_CHARS = 1024;

const BYTE_FIELDS = ["BytesUsed", "BytesAvailable", "BytesTotal"] as const;
const INODE_FIELDS = ["InodesUsed", "InodesAvailable", "InodesTotal"] as const;

/**
 * Whether `next` differs enough from `prev` to be reported and written: no previous figure, a
 * condition that changed (abnormal flag or message), or a byte or inode figure that moved by at
 * least the threshold (relative to the larger total, so a big volume is not rewritten for every
 * small file).
 */
export function usageChanged(prev: VolumeUsageFigures | null | undefined, next: VolumeUsageFigures): boolean {
  if (!prev) return true;
  if (prev.Abnormal !== next.Abnormal || prev.Message !== next.Message) return true;
  const bytesDelta = Math.max(USAGE_MIN_BYTES_DELTA, Math.max(prev.BytesTotal, next.BytesTotal) / 1000);
  const inodesDelta = Math.max(USAGE_MIN_INODES_DELTA, Math.max(prev.InodesTotal, next.InodesTotal) / 1000);
  return (
    BYTE_FIELDS.some((f) => Math.abs(prev[f] - next[f]) >= bytesDelta) ||
    INODE_FIELDS.some((f) => Math.abs(prev[f] - next[f]) >= inodesDelta)
  );
}

/** The figures alone, from a report or a stored record (no other field is carried along). */
export function usageFigures(u: VolumeUsageFigures): VolumeUsageFigures {
  return {
    BytesUsed: u.BytesUsed,
    BytesAvailable: u.BytesAvailable,
    BytesTotal: u.BytesTotal,
    InodesUsed: u.InodesUsed,
    InodesAvailable: u.InodesAvailable,
    InodesTotal: u.InodesTotal,
    Abnormal: u.Abnormal,
    Message: u.Message,
  };
}

/** One volume's figures in a node's CSIVolume.UpdateUsage report. */
export interface VolumeUsageReport extends VolumeUsageFigures {
  VolumeID: string;
  Namespace: string;
}

/** Most volumes one report may carry: a node's poll batches every volume it has published. */
export const MAX_USAGE_REPORTS = 1000;

/**
 * Checks one report entry from a node (untrusted input), naming the field it refuses: IDs, counts
 * that are whole numbers ≥ 0, a boolean flag; the message is cut to MAX_USAGE_MESSAGE_CHARS.
 */
export function checkUsageReport(field: string, input: unknown): VolumeUsageReport {
  const r = asObject(field, input);
  const count = (name: (typeof BYTE_FIELDS)[number] | (typeof INODE_FIELDS)[number]) =>
    optNumber(`${field}.${name}`, r[name], 0, { integer: true, min: 0 });
  const message = optString(`${field}.Message`, r.Message, "");
  return {
    VolumeID: checkId(`${field}.VolumeID`, r.VolumeID),
    Namespace: checkId(`${field}.Namespace`, r.Namespace || "default"),
    BytesUsed: count("BytesUsed"),
    BytesAvailable: count("BytesAvailable"),
    BytesTotal: count("BytesTotal"),
    InodesUsed: count("InodesUsed"),
    InodesAvailable: count("InodesAvailable"),
    InodesTotal: count("InodesTotal"),
    Abnormal: optBool(`${field}.Abnormal`, r.Abnormal, false),
    Message:
      message.length <= MAX_USAGE_MESSAGE_CHARS
        ? message
        : message.slice(0, MAX_USAGE_MESSAGE_CHARS - 1) + "…",
  };
}

/** The list of a report, at most MAX_USAGE_REPORTS long. */
export function checkUsageReports(input: unknown): VolumeUsageReport[] {
  if (!Array.isArray(input)) throw validationError("Volumes", "must be an array");
  if (input.length > MAX_USAGE_REPORTS) {
    throw validationError("Volumes", `at most ${MAX_USAGE_REPORTS} volumes per report, got ${input.length}`);
  }
  return input.map((v, i) => checkUsageReport(`Volumes[${i}]`, v));
}

/** Replaces each secret value (3 characters or more) in a plugin's message by [REDACTED]. */
export function redactUsageMessage(message: string, secrets: Record<string, string> | null): string {
  let out = message;
  for (const v of Object.values(secrets ?? {})) if (v.length >= 3) out = out.split(v).join("[REDACTED]");
  return out;
}

/**
 * A node's volume usage and health (NodeGetVolumeStats), batched: only volumes whose figures or
 * condition changed since its last report. Each volume must be claimed by an alloc on the calling
 * node; others are not recorded and come back in `Refused` (a claim released while the report was
 * in flight is normal, so one stale entry does not fail the batch).
 */
export interface VolumeUsageUpdateRequest {
  NodeID: string;
  Volumes: VolumeUsageReport[];
}
export interface VolumeUsageUpdateResponse {
  /** How many volumes were written (a report equal to the stored record within the threshold writes nothing). */
  Recorded: number;
  /** `namespace/id` of the volumes this node holds no claim on. */
  Refused: string[];
  Index: number;
}
