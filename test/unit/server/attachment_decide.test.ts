/**
 * The attachment reconciler's pure decision (server/leader/attachment_decide.ts), as a table: which
 * of the provider's published nodes are stale (no claim of the volume names them, in any state),
 * which of berth's attached claims the provider lost (taken, publish recorded, alloc running, node
 * in contact), and the order (stale unpublishes first). Volumes that do not attach get nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { decideAttachments, type ClaimFacts } from "../../../src/server/leader/attachment_decide.js";
import type { VolumeClaim } from "../../../src/structs/volume.js";
import { makeVolume } from "../../builders/volume.js";

function claim(alloc: string, node: string, over: Partial<VolumeClaim> = {}): VolumeClaim {
  return {
    AllocationID: alloc,
    NodeID: node,
    ExternalNodeID: `ext-${node}`,
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
    State: "taken",
    ControllerPublishPluginID: "p1",
    ...over,
  };
}

const running: ClaimFacts = { allocRunning: true, nodeInContact: true };

interface Row {
  name: string;
  write?: VolumeClaim[];
  read?: VolumeClaim[];
  past?: VolumeClaim[];
  controllerRequired?: boolean;
  published: string[];
  facts?: Partial<Record<string, Partial<ClaimFacts>>>;
  want: string[];
}

const rows: Row[] = [
  { name: "agreement: nothing", write: [claim("a1", "n1")], published: ["ext-n1"], want: [] },
  { name: "no claims, nothing published", published: [], want: [] },
  {
    name: "published to a node with no claim: unpublish",
    published: ["ext-ghost"],
    want: ["unpublish-stale ext-ghost"],
  },
  {
    name: "a past claim (release in flight) on that node: the release walk's, left alone",
    past: [claim("a0", "n1", { State: "node-detached" })],
    published: ["ext-n1"],
    want: [],
  },
  {
    name: "a claim not yet published names the node: left alone",
    write: [claim("a1", "n1", { ControllerPublishPluginID: undefined })],
    controllerRequired: true,
    published: ["ext-n1"],
    want: [],
  },
  {
    name: "lost attachment of a running alloc: republish",
    write: [claim("a1", "n1")],
    published: [],
    want: ["republish-lost ext-n1 a1"],
  },
  {
    name: "lost attachment of a pending alloc: its own claim publishes",
    write: [claim("a1", "n1")],
    published: [],
    facts: { a1: { allocRunning: false } },
    want: [],
  },
  {
    name: "lost attachment on a down node: not republished",
    write: [claim("a1", "n1")],
    published: [],
    facts: { a1: { nodeInContact: false } },
    want: [],
  },
  {
    name: "a claim past taken is being released: not republished",
    write: [claim("a1", "n1", { State: "node-detached" })],
    published: [],
    want: [],
  },
  {
    name: "a claim without a recorded publish: nothing to repair",
    write: [claim("a1", "n1", { ControllerPublishPluginID: undefined })],
    controllerRequired: true,
    published: [],
    want: [],
  },
  {
    name: "stale first, then the repair (a single-node volume attached elsewhere)",
    write: [claim("a1", "n1")],
    published: ["ext-ghost"],
    want: ["unpublish-stale ext-ghost", "republish-lost ext-n1 a1"],
  },
  {
    name: "one republish per node, the writer's capability first",
    write: [claim("w1", "n1")],
    read: [claim("r1", "n1", { Mode: "read", AccessMode: "multi-node-reader-only" })],
    published: [],
    want: ["republish-lost ext-n1 w1"],
  },
  {
    name: "a volume that does not attach: the listing means nothing",
    write: [claim("a1", "n1", { ControllerPublishPluginID: undefined })],
    controllerRequired: false,
    published: ["ext-ghost"],
    want: [],
  },
  {
    name: "an empty node ID in the listing is ignored",
    write: [claim("a1", "n1")],
    published: ["ext-n1", ""],
    want: [],
  },
];

for (const row of rows) {
  test(`attachment decision: ${row.name}`, () => {
    const byAlloc = (cs: VolumeClaim[] = []) => Object.fromEntries(cs.map((c) => [c.AllocationID, c]));
    const vol = makeVolume("v1", {
      ControllerRequired: row.controllerRequired ?? true,
      WriteClaims: byAlloc(row.write),
      ReadClaims: byAlloc(row.read),
      PastClaims: byAlloc(row.past),
    });
    const steps = decideAttachments(vol, row.published, (c) => ({
      ...running,
      ...row.facts?.[c.AllocationID],
    }));
    assert.deepEqual(
      steps.map((s) =>
        s.kind === "unpublish-stale"
          ? `${s.kind} ${s.externalNodeId}`
          : `${s.kind} ${s.externalNodeId} ${s.claim.AllocationID}`,
      ),
      row.want,
    );
  });
}
