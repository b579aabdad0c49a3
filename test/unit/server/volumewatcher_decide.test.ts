/**
 * The volumewatcher's pure decisions for issue 28: single-writer claims of a down node held for
 * the node's self-fence bound (measured from this watcher's first sight of the node down, on its
 * own clock), and claims of finished allocs released without the node step only when their live
 * node said it holds nothing of them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  claimAction,
  fenceHoldMsOf,
  needsFenceHold,
  volumeWork,
  type ClaimFacts,
} from "../../../src/server/volumewatcher/decide.js";
import { NS_PER_MS } from "../../../src/structs/job.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import type { AccessMode, ClaimState, VolumeClaim } from "../../../src/structs/volume.js";
import { isSingleWriterClaim } from "../../../src/structs/single_writer.js";
import { allocOf } from "../../builders/alloc.js";
import { csiJob } from "../../builders/job.js";
import { makeVolume } from "../../builders/volume.js";

function claim(
  mode: "read" | "write",
  accessMode: AccessMode,
  State: ClaimState = "taken",
  allocId = "a",
): VolumeClaim {
  return {
    AllocationID: allocId,
    NodeID: "n",
    ExternalNodeID: "ext-n",
    Mode: mode,
    AccessMode: accessMode,
    AttachmentMode: "file-system",
    State,
  };
}

const writer = claim("write", "single-node-writer");
const running = { ClientStatus: "running", DesiredStatus: "run" } as const;
const lost = { ClientStatus: "lost", DesiredStatus: "stop" } as const;
const complete = { ClientStatus: "complete", DesiredStatus: "run" } as const;
const failed = { ClientStatus: "failed", DesiredStatus: "run" } as const;
const stoppedPending = { ClientStatus: "pending", DesiredStatus: "stop" } as const;
const down = { Status: "down" } as const;
const up = { Status: "ready" } as const;

const facts = (over: Partial<ClaimFacts>): ClaimFacts => ({
  now: 100_000,
  nodeDownSince: undefined,
  fenceHoldMs: 15_000,
  nodeHoldsNothing: false,
  ...over,
});

test("single-writer claims: write claims in a mode with one writer", () => {
  assert.equal(isSingleWriterClaim(claim("write", "single-node-writer")), true);
  assert.equal(isSingleWriterClaim(claim("write", "multi-node-single-writer")), true);
  assert.equal(isSingleWriterClaim({ Mode: "write", AccessMode: "single-node-single-writer" }), true);
  assert.equal(isSingleWriterClaim(claim("write", "multi-node-multi-writer")), false);
  assert.equal(isSingleWriterClaim(claim("read", "single-node-writer")), false);
  assert.equal(isSingleWriterClaim(claim("read", "multi-node-reader-only")), false);
});

test("fence hold: a single-writer claim of a down node is held until the bound has passed on this watcher's clock", () => {
  // First sight of the node down is now: held for the whole bound.
  assert.equal(claimAction(writer, lost, down, facts({})), "hold-fence");
  assert.equal(claimAction(writer, lost, down, facts({ nodeDownSince: 100_000 })), "hold-fence");
  // Just before the bound: still held; at it: released (node step skipped by the walk).
  assert.equal(claimAction(writer, lost, down, facts({ nodeDownSince: 85_001 })), "hold-fence");
  assert.equal(claimAction(writer, lost, down, facts({ nodeDownSince: 85_000 })), "release");
  // A gone node (deregistered) and any alloc state the tasks may still run in: held the same.
  for (const alloc of [running, lost, stoppedPending, undefined]) {
    assert.equal(claimAction(writer, alloc, undefined, facts({ nodeDownSince: 90_000 })), "hold-fence");
  }
  assert.equal(
    claimAction(claim("write", "multi-node-single-writer"), running, down, facts({})),
    "hold-fence",
  );
  // Without facts nothing is known: the claim is held, never freed.
  assert.equal(claimAction(writer, running, down), "hold-fence");
});

test("fence hold: readers, multi-writers and allocs the node reported finished are released at once", () => {
  const f = facts({ nodeDownSince: 100_000 });
  assert.equal(claimAction(claim("read", "single-node-writer"), running, down, f), "release");
  assert.equal(claimAction(claim("read", "multi-node-reader-only"), running, down, f), "release");
  assert.equal(claimAction(claim("write", "multi-node-multi-writer"), running, down, f), "release");
  // complete/failed come only from the node: its tasks are dead, nothing writes.
  assert.equal(claimAction(writer, complete, down, f), "release");
  assert.equal(claimAction(writer, failed, down, f), "release");
  assert.equal(needsFenceHold(writer, lost), true);
  assert.equal(needsFenceHold(writer, undefined), true);
  // A release already past the node step is finished whatever the node.
  assert.equal(
    claimAction(claim("write", "single-node-writer", "node-detached"), running, down, f),
    "release",
  );
  // A node back up before the bound: the normal path (the node agent's own release).
  assert.equal(claimAction(writer, lost, up, facts({ nodeDownSince: undefined })), "wait-node");
  assert.equal(claimAction(writer, running, up, facts({})), "keep");
});

test("fence bound: the alloc's longest task stop time plus the margin, at least the minimum; an override wins", () => {
  const o = { fenceHoldMs: undefined, fenceMarginMs: 10_000, minFenceHoldMs: 10_000 };
  const job = csiJob("j");
  const alloc = allocOf(job, "n");
  // validateJob's default kill_timeout is Nomad's 5 s.
  assert.equal(fenceHoldMsOf(alloc, o), 15_000);
  const group = job.TaskGroups[0]!;
  const slow: Allocation = allocOf(
    {
      ...job,
      TaskGroups: [
        {
          ...group,
          Tasks: [
            { ...group.Tasks[0]!, KillTimeout: 30_000 * NS_PER_MS },
            {
              ...group.Tasks[0]!,
              Name: "t2",
              KillTimeout: 1_000 * NS_PER_MS,
              ShutdownDelay: 45_000 * NS_PER_MS,
            },
          ],
        },
      ],
    },
    "n",
  );
  assert.equal(fenceHoldMsOf(slow, o), 56_000);
  const quick = allocOf(
    { ...job, TaskGroups: [{ ...group, Tasks: [{ ...group.Tasks[0]!, KillTimeout: 0 }] }] },
    "n",
  );
  assert.equal(fenceHoldMsOf(quick, { ...o, fenceMarginMs: 2_000 }), 10_000, "at least the minimum");
  assert.equal(fenceHoldMsOf(undefined, o), 15_000, "a gone alloc: Nomad's default kill timeout");
  assert.equal(fenceHoldMsOf(slow, { ...o, fenceHoldMs: 300 }), 300);
});

test("unused claims: released without the node step only when the live node said it holds nothing and the alloc ended", () => {
  const said = facts({ nodeHoldsNothing: true });
  const unsaid = facts({ nodeHoldsNothing: false });
  assert.equal(claimAction(writer, complete, up, said), "release-unused");
  assert.equal(claimAction(writer, failed, up, said), "release-unused");
  assert.equal(claimAction(writer, undefined, up, said), "release-unused", "a garbage-collected alloc");
  // No answer yet (or the node could not be asked): the node agent's step, waited for.
  assert.equal(claimAction(writer, complete, up, unsaid), "wait-node");
  // Stopped but not yet reported finished by its node: its prerun may still be claiming.
  assert.equal(claimAction(writer, stoppedPending, up, said), "wait-node");
  // A running alloc keeps its claim whatever is said.
  assert.equal(claimAction(writer, running, up, said), "keep");
});

test("volumeWork: holds carry their end, askable claims are the waiting ones whose alloc ended", () => {
  const vol = makeVolume("v", {
    WriteClaims: { w: claim("write", "single-node-writer", "taken", "w") },
    ReadClaims: {
      r: { ...claim("read", "single-node-writer", "taken", "r"), NodeID: "d" },
      s: { ...claim("read", "single-node-writer", "taken", "s"), NodeID: "u" },
      t: { ...claim("read", "single-node-writer", "taken", "t"), NodeID: "u" },
    },
  });
  const allocs: Record<string, Allocation | undefined> = {
    w: { ...allocOf(csiJob("j"), "d"), ...running },
    r: { ...allocOf(csiJob("j"), "d"), ...running },
    s: { ...allocOf(csiJob("j"), "u"), ...complete },
    t: { ...allocOf(csiJob("j"), "u"), ...stoppedPending },
  };
  const work = volumeWork(
    { ...vol, WriteClaims: { w: { ...vol.WriteClaims.w!, NodeID: "d" } } },
    {
      alloc: (id) => allocs[id],
      node: (id) => (id === "d" ? { ...down, StatusUpdatedAt: 1 } : { ...up, StatusUpdatedAt: 1 }),
      facts: (c) => facts({ nodeDownSince: c.NodeID === "d" ? 95_000 : undefined }),
    },
  );
  assert.deepEqual(
    work.held.map((h) => [h.claim.AllocationID, h.until, h.holdMs]),
    [["w", 110_000, 15_000]],
  );
  assert.deepEqual(
    work.release.map((c) => c.AllocationID),
    ["r"],
  );
  assert.deepEqual(work.waiting.map((c) => c.AllocationID).sort(), ["s", "t"]);
  assert.deepEqual(
    work.askable.map((c) => c.AllocationID),
    ["s"],
  );
  assert.deepEqual(work.releaseUnused, []);
});

test("disconnected node: an unknown alloc keeps its claims; a lost one's are held, then released", () => {
  const disconnected = { Status: "disconnected" } as const;
  const unknown = { ClientStatus: "unknown", DesiredStatus: "run" } as const;
  const late = facts({ now: 1e9, nodeDownSince: 0, fenceHoldMs: 1 });
  assert.equal(claimAction(writer, unknown, disconnected, late), "keep");
  assert.equal(claimAction(claim("read", "multi-node-reader-only"), unknown, disconnected, late), "keep");
  assert.equal(
    claimAction(writer, lost, disconnected, facts({ now: 5, nodeDownSince: 0, fenceHoldMs: 10 })),
    "hold-fence",
  );
  assert.equal(claimAction(writer, lost, disconnected, late), "release");
});
