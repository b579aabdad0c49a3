/**
 * The claim rules of all seven access modes, as one table: a volume holding one claim (read or
 * write) of alloc a1 on node n1, and a second alloc's read or write claim on the same node or
 * another. Each row is the answer checkClaim must give (null: granted).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkClaim, applyClaim, type ClaimRequest } from "../../../src/structs/claim.js";
import { ACCESS_MODES, newVolume, type AccessMode, type CSIVolume } from "../../../src/structs/volume.js";

type Mode = "read" | "write";
type Answer = null | "ERR_CSI_IN_USE" | "ERR_CSI_MAX_CLAIMS" | "ERR_VALIDATION";

/** [held, asked, same node, other node]. */
type Row = [Mode, Mode, Answer, Answer];

const RO: Row[] = [
  ["read", "read", null, "ERR_CSI_IN_USE"],
  ["read", "write", "ERR_VALIDATION", "ERR_VALIDATION"],
];
const TABLE: Record<AccessMode, { first: { read: Answer; write: Answer }; rows: Row[] }> = {
  "single-node-reader-only": { first: { read: null, write: "ERR_VALIDATION" }, rows: RO },
  "single-node-writer": {
    first: { read: null, write: null },
    rows: [
      ["read", "read", null, "ERR_CSI_IN_USE"],
      ["read", "write", null, "ERR_CSI_IN_USE"],
      ["write", "read", null, "ERR_CSI_IN_USE"],
      ["write", "write", "ERR_CSI_MAX_CLAIMS", "ERR_CSI_IN_USE"],
    ],
  },
  "single-node-single-writer": {
    first: { read: null, write: null },
    rows: [
      ["read", "read", null, "ERR_CSI_IN_USE"],
      ["read", "write", null, "ERR_CSI_IN_USE"],
      ["write", "read", null, "ERR_CSI_IN_USE"],
      ["write", "write", "ERR_CSI_MAX_CLAIMS", "ERR_CSI_IN_USE"],
    ],
  },
  "single-node-multi-writer": {
    first: { read: null, write: null },
    rows: [
      ["read", "read", null, "ERR_CSI_IN_USE"],
      ["read", "write", null, "ERR_CSI_IN_USE"],
      ["write", "read", null, "ERR_CSI_IN_USE"],
      ["write", "write", null, "ERR_CSI_IN_USE"],
    ],
  },
  "multi-node-reader-only": {
    first: { read: null, write: "ERR_VALIDATION" },
    rows: [
      ["read", "read", null, null],
      ["read", "write", "ERR_VALIDATION", "ERR_VALIDATION"],
    ],
  },
  "multi-node-single-writer": {
    first: { read: null, write: null },
    rows: [
      ["read", "read", null, null],
      ["read", "write", null, null],
      ["write", "read", null, null],
      ["write", "write", "ERR_CSI_MAX_CLAIMS", "ERR_CSI_MAX_CLAIMS"],
    ],
  },
  "multi-node-multi-writer": {
    first: { read: null, write: null },
    rows: [
      ["read", "read", null, null],
      ["read", "write", null, null],
      ["write", "read", null, null],
      ["write", "write", null, null],
    ],
  },
};

function vol(mode: AccessMode): CSIVolume {
  return newVolume({
    ID: "v",
    PluginID: "p",
    Schedulable: true,
    RequestedCapabilities: [{ AccessMode: mode, AttachmentMode: "file-system" }],
  });
}

function req(alloc: string, node: string, mode: Mode, access: AccessMode): ClaimRequest {
  return {
    AllocationID: alloc,
    NodeID: node,
    ExternalNodeID: `ext-${node}`,
    Mode: mode,
    AccessMode: access,
    AttachmentMode: "file-system",
  };
}

const code = (v: CSIVolume, r: ClaimRequest): Answer => (checkClaim(v, r)?.code as Answer) ?? null;

test("the table covers exactly the seven access modes", () => {
  assert.deepEqual(Object.keys(TABLE).sort(), [...ACCESS_MODES].sort());
  assert.equal(ACCESS_MODES.length, 7);
});

for (const mode of ACCESS_MODES) {
  const { first, rows } = TABLE[mode];
  test(`${mode}: a first claim on an idle volume`, () => {
    assert.equal(code(vol(mode), req("a1", "n1", "read", mode)), first.read);
    assert.equal(code(vol(mode), req("a1", "n1", "write", mode)), first.write);
  });
  for (const [held, asked, sameNode, otherNode] of rows) {
    test(`${mode}: ${held} held on n1, then ${asked} on n1 → ${sameNode}, on n2 → ${otherNode}`, () => {
      const v = applyClaim(vol(mode), req("a1", "n1", held, mode)).volume;
      assert.equal(code(v, req("a2", "n1", asked, mode)), sameNode, "same node");
      assert.equal(code(v, req("a2", "n2", asked, mode)), otherNode, "other node");
    });
  }
}

test("single-node-multi-writer: many writers on one node, none elsewhere", () => {
  const mode = "single-node-multi-writer";
  let v = vol(mode);
  for (const a of ["a1", "a2", "a3"]) v = applyClaim(v, req(a, "n1", "write", mode)).volume;
  assert.equal(Object.keys(v.WriteClaims).length, 3);
  assert.equal(code(v, req("a4", "n2", "write", mode)), "ERR_CSI_IN_USE");
});

test("a volume in use in one single-node mode refuses a claim in another", () => {
  const v = applyClaim(
    newVolume({
      ID: "v",
      PluginID: "p",
      Schedulable: true,
      RequestedCapabilities: [
        { AccessMode: "single-node-single-writer", AttachmentMode: "file-system" },
        { AccessMode: "single-node-multi-writer", AttachmentMode: "file-system" },
      ],
    }),
    req("a1", "n1", "write", "single-node-single-writer"),
  ).volume;
  assert.equal(code(v, req("a2", "n1", "write", "single-node-multi-writer")), "ERR_CSI_IN_USE");
});
