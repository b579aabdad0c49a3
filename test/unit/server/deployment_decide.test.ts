/**
 * The deployment watcher's pure decisions (deploymentwatcher/decide.ts): alloc health from task
 * states and its timing, counters, auto-promotion, success, failure by an unhealthy alloc or a
 * missed progress deadline, and auto_revert's target (the newest stable older version).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { decideDeployment } from "../../../src/server/deploymentwatcher/decide.js";
import type { Allocation, TaskState } from "../../../src/structs/alloc.js";
import { DEPLOYMENT_DESC, newDeployment, type Deployment } from "../../../src/structs/deployment.js";
import type { UpdateStrategy } from "../../../src/structs/job_stanzas.js";
import type { Job } from "../../../src/structs/job.js";
import { plainJob } from "../../builders/job.js";
import { allocOf } from "../../builders/alloc.js";

const S = 1_000_000_000;
const T0 = Date.parse("2026-01-01T00:00:00Z");

const update = (over: Partial<UpdateStrategy> = {}): UpdateStrategy => ({
  Stagger: 30 * S,
  MaxParallel: 1,
  HealthCheck: "task_states",
  MinHealthyTime: 10 * S,
  HealthyDeadline: 60 * S,
  ProgressDeadline: 120 * S,
  Canary: 0,
  AutoRevert: false,
  AutoPromote: false,
  ...over,
});

function jobWith(u: UpdateStrategy, version = 1): Job {
  const j = plainJob("web");
  return { ...j, Version: version, TaskGroups: j.TaskGroups.map((g) => ({ ...g, Update: u })) };
}

function deployment(job: Job, u: UpdateStrategy, total: number, canaries = 0): Deployment {
  return newDeployment("d1", job, { g: { total, canaries, update: u } }, T0 * 1e6);
}

const running = (startedMs: number): TaskState => ({
  State: "running",
  Failed: false,
  Restarts: 0,
  StartedAt: new Date(startedMs).toISOString(),
  FinishedAt: null,
  Events: [],
});

function alloc(job: Job, over: Partial<Allocation> = {}): Allocation {
  return allocOf(job, "n1", { DeploymentID: "d1", CreateTime: T0 * 1e6, ...over });
}

test("health: running tasks are healthy after MinHealthyTime, not before (the watcher wakes then)", () => {
  const u = update();
  const job = jobWith(u);
  const a = alloc(job, { TaskStates: { t: running(T0) } });
  const early = decideDeployment({
    deployment: deployment(job, u, 1),
    allocs: [a],
    versions: [],
    nowMs: T0 + 5000,
  });
  assert.deepEqual(early.health, []);
  assert.equal(early.wakeAtMs, T0 + 10_000);
  assert.equal(early.deployment.TaskGroups.g?.PlacedAllocs, 1);
  const later = decideDeployment({
    deployment: deployment(job, u, 1),
    allocs: [a],
    versions: [],
    nowMs: T0 + 10_000,
  });
  assert.deepEqual(
    later.health.map((h) => h.healthy),
    [true],
  );
  assert.equal(later.deployment.Status, "successful");
  assert.equal(later.deployment.StatusDescription, DEPLOYMENT_DESC.successful);
});

test("health: a failed task or a missed HealthyDeadline is unhealthy and fails the deployment", () => {
  const u = update();
  const job = jobWith(u);
  const failed = alloc(job, { TaskStates: { t: { ...running(T0), State: "dead", Failed: true } } });
  const d1 = decideDeployment({
    deployment: deployment(job, u, 1),
    allocs: [failed],
    versions: [],
    nowMs: T0 + 1000,
  });
  assert.deepEqual(
    [d1.deployment.Status, d1.deployment.StatusDescription],
    ["failed", DEPLOYMENT_DESC.failedAllocations],
  );
  const pending = alloc(job, { ClientStatus: "pending" });
  const d2 = decideDeployment({
    deployment: deployment(job, u, 1),
    allocs: [pending],
    versions: [],
    nowMs: T0 + 30_000,
  });
  assert.equal(d2.deployment.Status, "running");
  assert.equal(d2.wakeAtMs, T0 + 60_000, "wakes at the healthy deadline");
  const d3 = decideDeployment({
    deployment: deployment(job, u, 1),
    allocs: [pending],
    versions: [],
    nowMs: T0 + 60_000,
  });
  assert.deepEqual(
    d3.health.map((h) => h.healthy),
    [false],
  );
  assert.equal(d3.deployment.Status, "failed");
});

test("auto_revert: a failed deployment rolls back to the newest stable older version", () => {
  const u = update({ AutoRevert: true });
  const job = jobWith(u, 3);
  const failed = alloc(job, { ClientStatus: "failed" });
  const versions = [3, 2, 1, 0].map((v) => ({ ...job, Version: v, Stable: v === 1 || v === 0 }));
  const d = decideDeployment({ deployment: deployment(job, u, 1), allocs: [failed], versions, nowMs: T0 });
  assert.equal(d.revertTo, 1);
  assert.equal(
    d.deployment.StatusDescription,
    `${DEPLOYMENT_DESC.failedAllocations} - rolling back to job version 1`,
  );
  const none = decideDeployment({
    deployment: deployment(job, u, 1),
    allocs: [failed],
    versions: [job],
    nowMs: T0,
  });
  assert.equal(none.revertTo, null);
  assert.match(none.deployment.StatusDescription, /no stable job version to auto revert to$/);
});

test("canaries: auto-promoted once all are healthy; without auto_promote the deployment waits", () => {
  const auto = update({ Canary: 1, AutoPromote: true, MinHealthyTime: 0 });
  const job = jobWith(auto);
  const canary = alloc(job, {
    TaskStates: { t: running(T0) },
    DeploymentStatus: { Healthy: null, Canary: true, Timestamp: "" },
  });
  const d = decideDeployment({
    deployment: deployment(job, auto, 2, 1),
    allocs: [canary],
    versions: [],
    nowMs: T0 + 1,
  });
  const g = d.deployment.TaskGroups.g!;
  assert.deepEqual([g.Promoted, g.PlacedCanaries, g.HealthyAllocs], [true, [canary.ID], 1]);
  assert.equal(d.deployment.Status, "running", "promoted, but 1 of 2 healthy");
  assert.equal(d.deployment.StatusDescription, DEPLOYMENT_DESC.running);
  const manual = update({ Canary: 1, MinHealthyTime: 0 });
  const m = decideDeployment({
    deployment: deployment(jobWith(manual), manual, 1, 1),
    allocs: [canary],
    versions: [],
    nowMs: T0 + 1,
  });
  assert.equal(m.deployment.TaskGroups.g?.Promoted, false);
  assert.equal(m.deployment.Status, "running", "a lone healthy canary does not end an unpromoted deployment");
  assert.equal(m.deployment.StatusDescription, DEPLOYMENT_DESC.needsPromotion);
});

test("progress deadline: set at the first placement, moved by each healthy alloc, fails when missed", () => {
  const u = update({ ProgressDeadline: 20 * S, HealthyDeadline: 15 * S });
  const job = jobWith(u);
  const placed = alloc(job, { ClientStatus: "pending" });
  const first = decideDeployment({
    deployment: deployment(job, u, 2),
    allocs: [placed],
    versions: [],
    nowMs: T0,
  });
  assert.equal(first.deployment.TaskGroups.g?.RequireProgressBy, new Date(T0 + 20_000).toISOString());
  const healthy = { ...placed, DeploymentStatus: { Healthy: true, Canary: false, Timestamp: "" } };
  const moved = decideDeployment({
    deployment: first.deployment,
    allocs: [healthy],
    versions: [],
    nowMs: T0 + 5000,
  });
  assert.equal(moved.deployment.TaskGroups.g?.RequireProgressBy, new Date(T0 + 25_000).toISOString());
  const missed = decideDeployment({
    deployment: moved.deployment,
    allocs: [healthy],
    versions: [],
    nowMs: T0 + 25_000,
  });
  assert.deepEqual(
    [missed.deployment.Status, missed.deployment.StatusDescription],
    ["failed", DEPLOYMENT_DESC.progressDeadline],
  );
});

test("a terminal deployment is left alone", () => {
  const u = update();
  const job = jobWith(u);
  const d = { ...deployment(job, u, 1), Status: "successful" as const };
  const out = decideDeployment({
    deployment: d,
    allocs: [alloc(job, { ClientStatus: "failed" })],
    versions: [],
    nowMs: T0,
  });
  assert.equal(out.deployment, d);
  assert.deepEqual(out.health, []);
});
