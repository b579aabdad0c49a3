/**
 * The system reconciler's diff (system_slots.ts), pure: which slots (node, alloc name) a system or
 * sysbatch job wants against the allocs it has, as Nomad's NodeReconciler decides.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Allocation } from "../../../src/structs/alloc.js";
import type { Job } from "../../../src/structs/job.js";
import {
  JOB_STOPPED_DESCRIPTION,
  MIGRATE_DESCRIPTION,
  NOT_NEEDED_DESCRIPTION,
} from "../../../src/server/scheduler/plan_types.js";
import { UPDATE_DESCRIPTION } from "../../../src/server/scheduler/reconcile_update.js";
import { systemDiff } from "../../../src/server/scheduler/system_slots.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import type { Node } from "../../../src/structs/node.js";

const CLOCK = { nowNs: 0, runningEvalId: "" };
const diffNow = (job: Job, existing: Allocation[], nodes: Node[]) => systemDiff(job, existing, nodes, CLOCK);
const sys = (over: Partial<Job> = {}, type = "system"): Job => ({ ...plainJob("s", type), ...over });
const places = (d: ReturnType<typeof systemDiff>) =>
  d.place.map((p) => [p.node.ID, p.name, p.previous?.ID ?? ""]);
const stops = (d: ReturnType<typeof systemDiff>) => d.stop.map((s) => [s.alloc.ID, s.description]);

test("one alloc per ready, eligible node in the job's datacenters, named <job>.<group>[0] on each", () => {
  const nodes = [
    makeNode("a"),
    makeNode("b", { Datacenter: "dc2" }),
    makeNode("c", { SchedulingEligibility: "ineligible" }),
    makeNode("d", { Status: "down" }),
    makeNode("e", { Datacenter: "west" }),
  ];
  assert.deepEqual(places(diffNow(sys(), [], nodes)), [
    ["a", "s.g[0]", ""],
    ["b", "s.g[0]", ""],
    ["e", "s.g[0]", ""],
  ]);
  assert.deepEqual(places(diffNow(sys({ Datacenters: ["dc*"] }), [], nodes)), [
    ["a", "s.g[0]", ""],
    ["b", "s.g[0]", ""],
  ]);
  const none = sys();
  none.TaskGroups = [{ ...none.TaskGroups[0]!, Count: 0 }];
  assert.deepEqual(places(diffNow(none, [], nodes)), [], "count 0: no alloc anywhere");
  const two = sys({}, "sysbatch");
  two.TaskGroups = [{ ...two.TaskGroups[0]!, Count: 2 }];
  assert.deepEqual(places(diffNow(two, [], [makeNode("a")])), [
    ["a", "s.g[0]", ""],
    ["a", "s.g[1]", ""],
  ]);
});

test("a running alloc keeps its node's slot; a new node gets its own", () => {
  const job = sys();
  const onA = allocOf(job, "a", { Name: "s.g[0]" });
  const d = diffNow(job, [onA], [makeNode("a"), makeNode("b")]);
  assert.deepEqual(places(d), [["b", "s.g[0]", ""]]);
  assert.deepEqual(stops(d), []);
  assert.deepEqual(
    d.keep.map((a) => a.ID),
    [onA.ID],
  );
});

test("ineligible node: kept as it runs (Nomad), stopped once the job has a new version, never placed on", () => {
  const v0 = sys();
  const onC = allocOf(v0, "c", { Name: "s.g[0]" });
  const nodes = [makeNode("c", { SchedulingEligibility: "ineligible" })];
  const same = diffNow(v0, [onC], nodes);
  assert.deepEqual([places(same), stops(same), same.keep.length], [[], [], 1]);
  const v1 = { ...v0, Version: 1 };
  const updated = diffNow(v1, [onC], nodes);
  assert.deepEqual([places(updated), stops(updated)], [[], [[onC.ID, NOT_NEEDED_DESCRIPTION]]]);
});

test("a new version replaces each node's alloc on that node; a node out of the datacenters loses it", () => {
  const v0 = sys();
  const onA = allocOf(v0, "a", { Name: "s.g[0]" });
  const onB = allocOf(v0, "b", { Name: "s.g[0]" });
  const nodes = [makeNode("a"), makeNode("b", { Datacenter: "dc2" })];
  const d = diffNow({ ...v0, Version: 1, Datacenters: ["dc1"] }, [onA, onB], nodes);
  assert.deepEqual(places(d), [["a", "s.g[0]", onA.ID]]);
  assert.deepEqual(stops(d), [
    [onA.ID, UPDATE_DESCRIPTION],
    [onB.ID, NOT_NEEDED_DESCRIPTION],
  ]);
});

test("drain-marked, stopped job, removed group; unknown and down-node allocs are left to their rules", () => {
  const job = sys();
  const marked = allocOf(job, "a", { Name: "s.g[0]", DesiredTransition: { Migrate: true } });
  const unknown = allocOf(job, "b", { Name: "s.g[0]", ClientStatus: "unknown" });
  const onDown = allocOf(job, "d", { Name: "s.g[0]" });
  const gone = allocOf(job, "b", { Name: "s.old[0]", TaskGroup: "old" });
  const nodes = [
    makeNode("a", { SchedulingEligibility: "ineligible" }),
    makeNode("b", { Status: "disconnected" }),
    makeNode("d", { Status: "down" }),
  ];
  const d = diffNow(job, [marked, unknown, onDown, gone], nodes);
  assert.deepEqual(stops(d), [
    [marked.ID, MIGRATE_DESCRIPTION],
    [gone.ID, NOT_NEEDED_DESCRIPTION],
  ]);
  assert.deepEqual(
    d.keep.map((a) => a.ID),
    [unknown.ID, onDown.ID],
  );
  assert.deepEqual(places(d), []);
  const stopped = diffNow({ ...job, Stop: true }, [marked, unknown], nodes);
  assert.deepEqual(stops(stopped), [
    [marked.ID, JOB_STOPPED_DESCRIPTION],
    [unknown.ID, JOB_STOPPED_DESCRIPTION],
  ]);
});

test("an ended system alloc is placed again on its own node, linked; sysbatch runs once per version", () => {
  const job = sys();
  const failed: Allocation = allocOf(job, "a", { Name: "s.g[0]", ClientStatus: "failed" });
  assert.deepEqual(places(diffNow(job, [failed], [makeNode("a")])), [["a", "s.g[0]", failed.ID]]);

  const batch = sys({}, "sysbatch");
  const done = allocOf(batch, "a", { Name: "s.g[0]", ClientStatus: "complete" });
  const bad = allocOf(batch, "b", { Name: "s.g[0]", ClientStatus: "failed" });
  const nodes = [makeNode("a"), makeNode("b"), makeNode("c")];
  assert.deepEqual(
    places(diffNow(batch, [done, bad], nodes)),
    [["c", "s.g[0]", ""]],
    "ran on a and b (whatever the outcome): only the new node c",
  );
  assert.deepEqual(
    places(diffNow({ ...batch, Version: 1 }, [done, bad], nodes)),
    [
      ["a", "s.g[0]", done.ID],
      ["b", "s.g[0]", bad.ID],
      ["c", "s.g[0]", ""],
    ],
    "a new version runs again everywhere",
  );
});

test("a slot failing again and again waits, doubling, for its delayed eval; the eval places it", () => {
  const job = sys();
  const S = 1e9;
  // Three failures in a row on node a, each a second after it was placed; the last ended at 100 s.
  const f1 = allocOf(job, "a", {
    ID: "f1",
    CreateIndex: 1,
    Name: "s.g[0]",
    ClientStatus: "failed",
    CreateTime: 98 * S,
    ModifyTime: 99 * S,
  });
  const f2 = allocOf(job, "a", {
    ID: "f2",
    CreateIndex: 2,
    Name: "s.g[0]",
    ClientStatus: "failed",
    PreviousAllocation: "f1",
    CreateTime: 99 * S,
    ModifyTime: 99.5 * S,
  });
  const f3 = allocOf(job, "a", {
    ID: "f3",
    Name: "s.g[0]",
    ClientStatus: "failed",
    PreviousAllocation: "f2",
    CreateTime: 99.5 * S,
    ModifyTime: 100 * S,
    CreateIndex: 3,
  });
  const nodes = [makeNode("a")];
  const at = (nowS: number, runningEvalId = "") =>
    systemDiff(job, [f1, f2, f3], nodes, { nowNs: nowS * S, runningEvalId });
  // The third failure in a row waits 10 s (the first is replaced at once, the second waits 5 s).
  const early = at(100);
  assert.deepEqual(places(early), []);
  assert.deepEqual(
    early.later.map((l) => [l.alloc.ID, l.time / S]),
    [["f3", 110]],
  );
  assert.deepEqual(places(at(109.5)), [["a", "s.g[0]", "f3"]], "due within the 1 s window");
  assert.deepEqual(places(at(101, "ev")), [], "another eval does not place it early");
  const waiting = { ...f3, FollowupEvalID: "ev" };
  assert.deepEqual(
    places(systemDiff(job, [f1, f2, waiting], nodes, { nowNs: 101 * S, runningEvalId: "ev" })),
    [["a", "s.g[0]", "f3"]],
    "its own delayed eval places it whatever the clock",
  );
  // A single failure is replaced at once, as Nomad does.
  assert.deepEqual(places(systemDiff(job, [f1], nodes, { nowNs: 99 * S, runningEvalId: "" })), [
    ["a", "s.g[0]", "f1"],
  ]);
});
