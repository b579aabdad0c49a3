/**
 * The pure reconcile of a service or batch pass (scheduler/reconcile.ts): which live allocs stop
 * and why, which keep their slot, which slots are open — on plain data, no state and no nodes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Allocation } from "../../../src/structs/alloc.js";
import type { Job } from "../../../src/structs/job.js";
import type { DisconnectPlan } from "../../../src/server/scheduler/disconnect_plan.js";
import {
  JOB_STOPPED_DESCRIPTION,
  MIGRATE_DESCRIPTION,
  NOT_NEEDED_DESCRIPTION,
} from "../../../src/server/scheduler/plan_types.js";
import { openSlots, reconcileAllocs, type ReconcileInput } from "../../../src/server/scheduler/reconcile.js";
import { HANDOVER_DESCRIPTION, UPDATE_DESCRIPTION } from "../../../src/server/scheduler/reconcile_update.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";

function jobOf(count: number, over: Partial<Job> = {}, type = "service"): Job {
  const j = plainJob("w", type);
  return { ...j, ...over, TaskGroups: [{ ...j.TaskGroups[0]!, Count: count }] };
}

const noDisconnect = (): DisconnectPlan => ({ replace: new Map(), stop: new Map() });

function input(job: Job, existing: Allocation[], over: Partial<ReconcileInput> = {}): ReconcileInput {
  return {
    job,
    existing,
    update: { keep: new Set(), handover: new Set() },
    disconnect: noDisconnect(),
    ...over,
  };
}

const at = (job: Job, i: number, over: Partial<Allocation> = {}) =>
  allocOf(job, "n1", { Name: `w.g[${i}]`, ...over });
const stops = (r: ReturnType<typeof reconcileAllocs>) => r.stop.map((s) => [s.alloc.Name, s.description]);

test("a job at its count keeps every live alloc and has no open slot; a lower count stops the rest", () => {
  const job = jobOf(2);
  const allocs = [at(job, 0), at(job, 1), at(job, 2)];
  const r = reconcileAllocs(input(job, allocs));
  assert.deepEqual([...r.running.keys()], ["w.g[0]", "w.g[1]"]);
  assert.deepEqual(stops(r), [["w.g[2]", NOT_NEEDED_DESCRIPTION]]);
  assert.deepEqual(openSlots(r), []);
});

test("open slots: wanted names without a live alloc, in index order; terminal or stopping allocs hold none", () => {
  const job = jobOf(3);
  const failed = at(job, 0, { ClientStatus: "failed" });
  const stopping = at(job, 2, { DesiredStatus: "stop" });
  const r = reconcileAllocs(input(job, [failed, at(job, 1), stopping]));
  assert.deepEqual(openSlots(r), ["w.g[0]", "w.g[2]"]);
  assert.deepEqual(r.stop, [], "a terminal or already stopped alloc is not stopped again");
});

test("a stopped job stops every live alloc with Nomad's words and wants nothing", () => {
  const job = jobOf(2, { Stop: true });
  const r = reconcileAllocs(input(job, [at(job, 0), at(job, 1)]));
  assert.deepEqual(stops(r), [
    ["w.g[0]", JOB_STOPPED_DESCRIPTION],
    ["w.g[1]", JOB_STOPPED_DESCRIPTION],
  ]);
  assert.equal(r.wanted.size, 0);
  assert.deepEqual(openSlots(r), []);
});

test("a drain's migration mark stops the alloc and opens its slot", () => {
  const job = jobOf(1);
  const marked = at(job, 0, { DesiredTransition: { Migrate: true } });
  const r = reconcileAllocs(input(job, [marked]));
  assert.deepEqual(stops(r), [["w.g[0]", MIGRATE_DESCRIPTION]]);
  assert.deepEqual(openSlots(r), ["w.g[0]"]);
});

test("an old version: kept while the update keeps it, else stopped (a hand-over says so)", () => {
  const v0 = jobOf(3);
  const v1 = { ...jobOf(3), Version: 1 };
  const [kept, handed, replaced] = [at(v0, 0), at(v0, 1), at(v0, 2)];
  const update = { keep: new Set([kept.ID]), handover: new Set([handed.ID]) };
  const r = reconcileAllocs(input(v1, [kept, handed, replaced], { update }));
  assert.deepEqual([...r.running.keys()], ["w.g[0]"]);
  assert.deepEqual(stops(r), [
    ["w.g[1]", HANDOVER_DESCRIPTION],
    ["w.g[2]", UPDATE_DESCRIPTION],
  ]);
  assert.deepEqual(openSlots(r), ["w.g[1]", "w.g[2]"]);
});

test("disconnect: a reconnect's loser stops with its words; an unknown alloc being replaced is neither stopped nor kept", () => {
  const job = jobOf(2);
  const loser = at(job, 0);
  const unknown = at(job, 1, { ClientStatus: "unknown" });
  const disconnect: DisconnectPlan = {
    stop: new Map([[loser.ID, "lost the reconnect"]]),
    replace: new Map([[unknown.Name, unknown]]),
  };
  const r = reconcileAllocs(input(job, [loser, unknown], { disconnect }));
  assert.deepEqual(stops(r), [["w.g[0]", "lost the reconnect"]]);
  assert.equal(r.running.size, 0);
  assert.deepEqual(openSlots(r), ["w.g[0]", "w.g[1]"]);
});

test("batch: a slot completed at this version is never open again; one completed at an older version is", () => {
  const v1 = { ...jobOf(2, {}, "batch"), Version: 1 };
  const v0 = jobOf(2, {}, "batch");
  const done = at(v1, 0, { ClientStatus: "complete" });
  const doneOld = at(v0, 1, { ClientStatus: "complete" });
  const r = reconcileAllocs(input(v1, [done, doneOld]));
  assert.deepEqual([...r.completed], ["w.g[0]"]);
  assert.deepEqual(openSlots(r), ["w.g[1]"]);
  const service = reconcileAllocs(input({ ...v1, Type: "service" }, [done]));
  assert.deepEqual(openSlots(service), ["w.g[0]", "w.g[1]"], "a service's completed alloc is replaced");
});
