/**
 * The snapshot file (`berth operator snapshot save`), format version 1:
 *
 *   BERTH-SNAPSHOT\n            the magic line: anything else is not a berth snapshot
 *   {header JSON}\n             one line, SnapshotHeader below
 *   payload                     gzip of a SQLite database image with the server state's schema
 *
 * The header names the format version, the berth that wrote it, the store mode it came from, the
 * state's index (and term), when it was made, the schema version, the keyring keys that sealed its
 * secrets (by ID only: a key itself is never in the file), the count and size of each record type
 * (what `inspect` prints without unpacking), and the payload's length and SHA-256. A file is
 * refused as a whole, naming the problem, when the magic, the header, the length (truncated or
 * trailing bytes) or the checksum is wrong; nothing is read from a refused file.
 *
 * The API client reads the same envelope for `inspect` (src/api/snapshot_file.ts; the layers keep
 * their own copies, test/unit/server/snapshot_format.test.ts checks they agree).
 */
import { createHash } from "node:crypto";
import { BerthError } from "../../../structs/errors.js";

export const SNAPSHOT_MAGIC = "BERTH-SNAPSHOT\n";
export const SNAPSHOT_FORMAT = 1;
/** A header line longer than this is not a header (a foreign file): refused before parsing. */
const MAX_HEADER_BYTES = 1024 * 1024;

/** One record type's count and bytes, as Nomad's inspect lists them. */
export interface SnapshotTypeStat {
  Name: string;
  Count: number;
  Size: number;
}

export interface SnapshotHeader {
  Format: number;
  /** `<index>-<term>-<created unix ms>`, as Nomad's (Raft's) snapshot IDs. */
  ID: string;
  BerthVersion: string;
  /** Which store it was read from: "sqlite" (one server) or "etcd" (a cluster). */
  Mode: "sqlite" | "etcd";
  /** The state's write index the snapshot holds. */
  Index: number;
  /** The leader term it was taken in (0 for a single server). */
  Term: number;
  /** The payload's schema version (SQLite user_version of the state's schema). */
  Schema: number;
  /** RFC 3339. */
  CreatedAt: string;
  /** The keyring keys that sealed the secrets inside (their IDs, never the keys). */
  KeyIDs: string[];
  Types: SnapshotTypeStat[];
  /** The payload's length in bytes and its SHA-256 (hex). */
  PayloadBytes: number;
  PayloadSHA256: string;
}

/** The header's fields a writer gives; the payload's length and checksum are computed. */
export type HeaderFields = Omit<SnapshotHeader, "Format" | "PayloadBytes" | "PayloadSHA256">;

export function snapshotError(problem: string): BerthError {
  return new BerthError("ERR_VALIDATION", `snapshot: ${problem}`, { field: "snapshot" });
}

export function sha256Hex(b: Buffer): string {
  return createHash("sha256").update(b).digest("hex");
}

/** The file: magic, header line, payload. */
export function encodeSnapshot(
  fields: HeaderFields,
  payload: Buffer,
): { file: Buffer; header: SnapshotHeader } {
  const header: SnapshotHeader = {
    Format: SNAPSHOT_FORMAT,
    ...fields,
    PayloadBytes: payload.length,
    PayloadSHA256: sha256Hex(payload),
  };
  const head = Buffer.from(`${SNAPSHOT_MAGIC}${JSON.stringify(header)}\n`, "utf8");
  return { file: Buffer.concat([head, payload]), header };
}

/** The header and the payload of a file, or a snapshotError naming what is wrong with it. */
export function decodeSnapshot(file: Buffer): { header: SnapshotHeader; payload: Buffer } {
  const magic = Buffer.from(SNAPSHOT_MAGIC, "utf8");
  if (file.length < magic.length || !file.subarray(0, magic.length).equals(magic)) {
    throw snapshotError("not a berth snapshot file (it does not start with BERTH-SNAPSHOT)");
  }
  const end = file.indexOf(0x0a, magic.length);
  if (end < 0 || end - magic.length > MAX_HEADER_BYTES) {
    throw snapshotError("the header line is missing or cut short (the file is truncated)");
  }
  const header = parseHeader(file.subarray(magic.length, end).toString("utf8"));
  const payload = file.subarray(end + 1);
  if (payload.length < header.PayloadBytes) {
    throw snapshotError(
      `the file is truncated: its payload has ${payload.length} of ${header.PayloadBytes} bytes`,
    );
  }
  if (payload.length > header.PayloadBytes) {
    throw snapshotError(
      `the file has ${payload.length - header.PayloadBytes} bytes after its payload (not as it was saved)`,
    );
  }
  if (sha256Hex(payload) !== header.PayloadSHA256) {
    throw snapshotError("the payload's SHA-256 does not match the header's (the file is corrupt)");
  }
  return { header, payload };
}

function parseHeader(text: string): SnapshotHeader {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw snapshotError("the header is not JSON (the file is corrupt)");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw snapshotError("the header is not an object");
  const h = v as Record<string, unknown>;
  if (h.Format !== SNAPSHOT_FORMAT) {
    throw snapshotError(
      `format version ${JSON.stringify(h.Format)} is not one this berth reads (it reads ${SNAPSHOT_FORMAT})`,
    );
  }
  const num = (k: string) => {
    if (typeof h[k] !== "number" || !Number.isSafeInteger(h[k]) || h[k] < 0)
      throw snapshotError(`the header's ${k} is not a non-negative integer`);
  };
  const str = (k: string) => {
    if (typeof h[k] !== "string") throw snapshotError(`the header's ${k} is not a string`);
  };
  ["Index", "Term", "Schema", "PayloadBytes"].forEach(num);
  ["ID", "BerthVersion", "CreatedAt", "PayloadSHA256"].forEach(str);
  if (h.Mode !== "sqlite" && h.Mode !== "etcd")
    throw snapshotError("the header's Mode is not sqlite or etcd");
  if (!Array.isArray(h.KeyIDs) || !h.KeyIDs.every((k) => typeof k === "string"))
    throw snapshotError("the header's KeyIDs is not a list of strings");
  if (!Array.isArray(h.Types) || !h.Types.every(isTypeStat))
    throw snapshotError("the header's Types is not a list of {Name, Count, Size}");
  return h as unknown as SnapshotHeader;
}

function isTypeStat(v: unknown): v is SnapshotTypeStat {
  if (typeof v !== "object" || v === null) return false;
  const t = v as Record<string, unknown>;
  return typeof t.Name === "string" && typeof t.Count === "number" && typeof t.Size === "number";
}
