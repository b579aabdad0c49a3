/**
 * The snapshot file (src/server/state/snapshot/format.ts): a file written decodes to its header
 * and payload; the API client's reader (src/api/snapshot_file.ts) reads the same header; a file
 * with the wrong magic, a damaged or truncated header, a cut or lengthened payload or a flipped
 * payload byte is refused by both, naming the problem.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  decodeSnapshot,
  encodeSnapshot,
  type HeaderFields,
} from "../../../src/server/state/snapshot/format.js";
import { readSnapshotHeader } from "../../../src/api/snapshot_file.js";
import { inspectLines } from "../../../src/cli/commands/operator_snapshot.js";

const fields: HeaderFields = {
  ID: "42-0-1700000000000",
  BerthVersion: "0.1.0",
  Mode: "sqlite",
  Index: 42,
  Term: 0,
  Schema: 17,
  CreatedAt: "2023-11-14T22:13:20.000Z",
  KeyIDs: ["k1"],
  Types: [
    { Name: "Job", Count: 2, Size: 2048 },
    { Name: "CSIVolume", Count: 1, Size: 300 },
  ],
};
const payload = Buffer.from("pretend this is gzip of a SQLite image".repeat(10));

/** Both readers refuse `file` with a message matching `re`. */
function refused(file: Buffer, re: RegExp): void {
  assert.throws(
    () => decodeSnapshot(file),
    (e: Error & { code?: string; field?: string }) =>
      e.code === "ERR_VALIDATION" && e.field === "snapshot" && re.test(e.message),
  );
  assert.throws(() => readSnapshotHeader(file), re);
}

test("a snapshot file decodes to its header and payload, in both readers", () => {
  const { file, header } = encodeSnapshot(fields, payload);
  assert.ok(file.subarray(0, 15).equals(Buffer.from("BERTH-SNAPSHOT\n")));
  assert.equal(header.Format, 1);
  assert.equal(header.PayloadBytes, payload.length);
  const back = decodeSnapshot(file);
  assert.deepEqual(back.header, header);
  assert.ok(back.payload.equals(payload));
  assert.deepEqual(readSnapshotHeader(file), header);
});

test("a foreign, corrupt or truncated file is refused, naming the problem", () => {
  const { file } = encodeSnapshot(fields, payload);
  refused(Buffer.from("SQLite format 3\0 and the rest"), /not a berth snapshot file/);
  refused(Buffer.alloc(0), /not a berth snapshot file/);
  const headerEnd = file.indexOf(0x0a, 15);
  refused(file.subarray(0, headerEnd - 5), /header line is missing or cut short/);
  const badJson = Buffer.from(file);
  badJson[20] = 0x7b; // "{" inside the header's JSON
  refused(badJson, /header is not JSON|format version/);
  refused(file.subarray(0, file.length - 1), /truncated: its payload has \d+ of \d+ bytes/);
  refused(Buffer.concat([file, Buffer.from("x")]), /1 bytes after its payload/);
  const flipped = Buffer.from(file);
  flipped[flipped.length - 3]! ^= 0x01;
  refused(flipped, /SHA-256 does not match/);
  const future = encodeSnapshot(fields, payload).file.toString("latin1").replace('"Format":1', '"Format":9');
  refused(Buffer.from(future, "latin1"), /format version 9/);
});

test("inspect prints Nomad's fields, then the types largest first and their total", () => {
  const { file, header } = encodeSnapshot(fields, payload);
  const lines = inspectLines(header, file.length);
  assert.equal(lines[0], "Created       = 2023-11-14T22:13:20.000Z");
  assert.ok(lines.includes("Index         = 42"));
  assert.ok(lines.includes("Version       = 1"));
  assert.ok(lines.includes("Sealed With   = k1"));
  const table = lines.slice(lines.indexOf("") + 1);
  assert.deepEqual(table, [
    "Type       Count  Size",
    "Job        2      2.0 KiB",
    "CSIVolume  1      300 B",
    "",
    "Total      3      2.3 KiB",
  ]);
});
