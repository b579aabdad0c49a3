/**
 * The volumewatcher's bookkeeping for issue 28, pure: when it first saw a node down (per down
 * episode), which fence holds end when, and when it asks a live node about a finished alloc's
 * claim (grace, re-asks, answers that expire).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { NodeDownClock } from "../../../src/server/volumewatcher/down_clock.js";
import { FenceHolds } from "../../../src/server/volumewatcher/fence_holds.js";
import { OrphanChecks } from "../../../src/server/volumewatcher/orphans.js";
import type { VolumeClaim } from "../../../src/structs/volume.js";
import { claimOf } from "../../builders/claim.js";

/** Alloc `allocId`'s write claim on node `nodeId`. */
function claim(allocId: string, nodeId = "n"): VolumeClaim {
  return claimOf({ ID: allocId, NodeID: nodeId });
}

test("down clock: counts from the first sight of each down episode; up, or a new episode, starts afresh", () => {
  const c = new NodeDownClock();
  const downAt = (t: number) => ({ Status: "down" as const, StatusUpdatedAt: t });
  assert.equal(c.observe("n", { Status: "ready", StatusUpdatedAt: 1 }, 10), undefined);
  assert.equal(c.observe("n", downAt(500), 20), 20);
  assert.equal(c.observe("n", downAt(500), 90), 20, "the same episode keeps its start");
  // Down, up and down again between two passes: a new episode (StatusUpdatedAt moved).
  assert.equal(c.observe("n", downAt(900), 100), 100);
  // Seen up: forgotten.
  assert.equal(c.observe("n", { Status: "ready", StatusUpdatedAt: 901 }, 110), undefined);
  assert.equal(c.observe("n", downAt(900), 120), 120);
  // A node written and up again (no claim examined): refresh ends the episode too.
  c.refresh(["n", "other"], () => ({ Status: "ready" }));
  assert.equal(c.observe("n", downAt(900), 130), 130);
  // A node record gone (deregistered) counts as down, from its own first sight.
  assert.equal(c.observe("gone", undefined, 140), 140);
  assert.equal(c.observe("gone", undefined, 150), 140);
});

test("fence holds: fresh holds are reported once, due volumes and the next end are known", () => {
  const h = new FenceHolds();
  const held = (allocId: string, until: number) => ({ claim: claim(allocId), until, holdMs: 15 });
  assert.deepEqual(
    h.note("ns/v1", [held("a", 100)]).map((x) => x.claim.AllocationID),
    ["a"],
  );
  assert.deepEqual(h.note("ns/v1", [held("a", 100)]), [], "the same hold again is not fresh");
  assert.equal(h.note("ns/v2", [held("b", 50), held("c", 70)]).length, 2);
  assert.equal(h.nextDue(), 50);
  assert.deepEqual(h.due(60), ["ns/v2"]);
  assert.deepEqual(h.due(100).sort(), ["ns/v1", "ns/v2"]);
  assert.equal(h.note("ns/v1", [held("a", 130)]).length, 1, "a new end (a new episode) is fresh");
  h.note("ns/v2", []);
  assert.equal(h.nextDue(), 130);
  h.forget("ns/v1");
  assert.equal(h.nextDue(), undefined);
});

test("orphan checks: asked after the grace, re-asked while the node holds something, answers expire", () => {
  const o = new OrphanChecks({ graceMs: 1_000, recheckMs: 5_000 });
  o.note("ns/v", "ns", "v", [claim("a")], 0);
  assert.deepEqual(o.takeDue(999), []);
  assert.equal(o.nextDue(), 1_000);
  const [ref] = o.takeDue(1_000);
  assert.deepEqual(ref, { key: "ns/v", namespace: "ns", volumeId: "v", allocId: "a", nodeId: "n" });
  assert.deepEqual(o.takeDue(10_000), [], "one question at a time");
  assert.equal(o.nextDue(), undefined);
  // Noted again meanwhile (a pass): the question in flight and the start are kept.
  o.note("ns/v", "ns", "v", [claim("a")], 1_500);
  o.answered(ref, false, 2_000);
  assert.equal(o.holdsNothing("ns/v", "a", "n", 2_000), false);
  assert.equal(o.nextDue(), 7_000, "the node holds something: asked again after recheckMs");
  const [again] = o.takeDue(7_000);
  o.answered(again!, true, 7_100);
  assert.equal(o.holdsNothing("ns/v", "a", "n", 7_100), true);
  assert.equal(o.holdsNothing("ns/v", "a", "other-node", 7_100), false);
  assert.equal(o.holdsNothing("ns/v", "a", "n", 12_100), false, "an old answer is not acted on");
  // The claim moved to another node (a new claim of the alloc): a new candidate, asked afresh.
  o.note("ns/v", "ns", "v", [claim("a", "m")], 8_000);
  assert.equal(o.holdsNothing("ns/v", "a", "m", 8_000), false);
  assert.equal(o.nextDue(), 9_000);
  // An answer for a claim no longer a candidate is dropped.
  o.note("ns/v", "ns", "v", [], 8_500);
  o.answered(again!, true, 8_600);
  assert.equal(o.holdsNothing("ns/v", "a", "n", 8_600), false);
  assert.equal(o.nextDue(), undefined);
});
