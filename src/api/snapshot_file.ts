/**
 * The snapshot file as the API client reads it (`berth operator snapshot inspect`, and a check of
 * what `save` received): the magic line, the header, and the payload's length and SHA-256. The
 * server writes the file (src/server/state/snapshot/format.ts states the format); the layers keep
 * their own copies, and test/unit/server/snapshot_format.test.ts checks that they agree.
 */
import { createHash } from "node:crypto";

const MAGIC = "BERTH-SNAPSHOT\n";
const FORMAT = 1;

export interface SnapshotTypeStat {
  Name: string;
  Count: number;
  Size: number;
}

/** The header (field meanings: the server's format.ts). */
export interface SnapshotFileHeader {
  Format: number;
  ID: string;
  BerthVersion: string;
  Mode: string;
  Index: number;
  Term: number;
  Schema: number;
  CreatedAt: string;
  KeyIDs: string[];
  Types: SnapshotTypeStat[];
  PayloadBytes: number;
  PayloadSHA256: string;
}

/** A file that is not a whole berth snapshot, with what is wrong with it. */
export class SnapshotFileError extends Error {
  constructor(problem: string) {
    super(`snapshot: ${problem}`);
    this.name = "SnapshotFileError";
  }
}

/** The header of a snapshot file, once its length and checksum check; throws SnapshotFileError. */
export function readSnapshotHeader(file: Buffer): SnapshotFileHeader {
  const magic = Buffer.from(MAGIC, "utf8");
  if (file.length < magic.length || !file.subarray(0, magic.length).equals(magic)) {
    throw new SnapshotFileError("not a berth snapshot file (it does not start with BERTH-SNAPSHOT)");
  }
  const end = file.indexOf(0x0a, magic.length);
  if (end < 0) throw new SnapshotFileError("the header line is missing or cut short (the file is truncated)");
  let header: SnapshotFileHeader;
  try {
    header = JSON.parse(file.subarray(magic.length, end).toString("utf8")) as SnapshotFileHeader;
  } catch {
    throw new SnapshotFileError("the header is not JSON (the file is corrupt)");
  }
  if (typeof header !== "object" || header === null || header.Format !== FORMAT) {
    throw new SnapshotFileError(
      `format version ${JSON.stringify(header?.Format)} is not one this berth reads`,
    );
  }
  if (!Array.isArray(header.Types) || typeof header.PayloadBytes !== "number") {
    throw new SnapshotFileError("the header lacks its Types or PayloadBytes");
  }
  const payload = file.subarray(end + 1);
  if (payload.length < header.PayloadBytes) {
    throw new SnapshotFileError(
      `the file is truncated: its payload has ${payload.length} of ${header.PayloadBytes} bytes`,
    );
  }
  if (payload.length > header.PayloadBytes) {
    throw new SnapshotFileError(
      `the file has ${payload.length - header.PayloadBytes} bytes after its payload (not as it was saved)`,
    );
  }
  if (createHash("sha256").update(payload).digest("hex") !== header.PayloadSHA256) {
    throw new SnapshotFileError("the payload's SHA-256 does not match the header's (the file is corrupt)");
  }
  return header;
}
