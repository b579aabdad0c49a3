/**
 * JobPasses (src/server/scheduler/job_passes.ts): one scheduling pass per job at a time; a request
 * identical to one still waiting for its turn shares that pass, one identical to the running pass
 * gets a pass of its own after it; a failing pass rejects its own callers only.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { JobPasses } from "../../../src/server/scheduler/job_passes.js";

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every queued callback and promise reaction run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

/**
 * Passes that record when they start and how many run at once, each held until released by name.
 */
function harness() {
  const passes = new JobPasses<string>();
  const started: string[] = [];
  const gates = new Map<string, Deferred<string>>();
  let running = 0;
  let maxRunning = 0;
  const runningByJob = new Map<string, number>();
  let maxPerJob = 0;
  const pass = (job: string, name: string) => async () => {
    started.push(name);
    running++;
    maxRunning = Math.max(maxRunning, running);
    runningByJob.set(job, (runningByJob.get(job) ?? 0) + 1);
    maxPerJob = Math.max(maxPerJob, runningByJob.get(job)!);
    const gate = deferred<string>();
    gates.set(name, gate);
    try {
      return await gate.promise;
    } finally {
      running--;
      runningByJob.set(job, runningByJob.get(job)! - 1);
    }
  };
  const run = (job: string, request: string, name: string) => passes.run(job, request, pass(job, name));
  const release = (name: string, value = name) => gates.get(name)!.resolve(value);
  const fail = (name: string, err: Error) => gates.get(name)!.reject(err);
  return {
    passes,
    started,
    run,
    release,
    fail,
    stats: () => ({ running, maxRunning, maxPerJob }),
  };
}

test("job passes: two passes of one job never overlap, and run in arrival order", async () => {
  const h = harness();
  const p1 = h.run("default/web", "a", "p1");
  const p2 = h.run("default/web", "b", "p2");
  const p3 = h.run("default/web", "c", "p3");
  await settle();
  assert.deepEqual(h.started, ["p1"], "the others wait for the first");
  h.release("p1");
  assert.equal(await p1, "p1");
  await settle();
  assert.deepEqual(h.started, ["p1", "p2"]);
  h.release("p2");
  await settle();
  assert.deepEqual(h.started, ["p1", "p2", "p3"]);
  h.release("p3");
  assert.deepEqual(await Promise.all([p2, p3]), ["p2", "p3"]);
  assert.equal(h.stats().maxPerJob, 1);
  assert.equal(h.passes.busyJobs, 0, "an idle job holds nothing");
});

test("job passes: passes of different jobs run at the same time", async () => {
  const h = harness();
  const web = h.run("default/web", "a", "web");
  const api = h.run("default/api", "a", "api");
  await settle();
  assert.deepEqual(h.started.sort(), ["api", "web"]);
  assert.equal(h.stats().running, 2);
  assert.equal(h.passes.busyJobs, 2);
  h.release("api");
  h.release("web");
  assert.deepEqual(await Promise.all([web, api]), ["web", "api"]);
  assert.equal(h.stats().maxPerJob, 1);
});

test("job passes: a request identical to a waiting one shares its pass, which runs once", async () => {
  const h = harness();
  const first = h.run("default/web", "a", "first");
  await settle();
  const waiting = h.run("default/web", "b", "waiting");
  const same = h.run("default/web", "b", "same");
  const other = h.run("default/web", "c", "other");
  const otherJob = h.run("default/api", "b", "otherJob");
  assert.equal(same, waiting, "the very promise of the waiting pass");
  assert.notEqual(other, waiting, "another request of the job is a pass of its own");
  assert.notEqual(otherJob, waiting, "the same request of another job too");
  h.release("first");
  await first;
  await settle();
  assert.ok(h.started.includes("waiting"));
  h.release("waiting");
  assert.equal(await same, "waiting");
  await settle();
  h.release("other");
  h.release("otherJob");
  await Promise.all([other, otherJob]);
  assert.deepEqual(h.started.sort(), ["first", "other", "otherJob", "waiting"], "'same' never ran");
});

test("job passes: a request identical to the running pass gets its own later pass", async () => {
  const h = harness();
  const running = h.run("default/web", "a", "running");
  await settle();
  assert.deepEqual(h.started, ["running"]);
  const again = h.run("default/web", "a", "again");
  assert.notEqual(again, running, "a started pass may have read the state too early to share");
  // A third identical request shares the one now waiting.
  assert.equal(h.run("default/web", "a", "third"), again);
  await settle();
  assert.deepEqual(h.started, ["running"], "the new pass waits for the running one");
  h.release("running");
  assert.equal(await running, "running");
  await settle();
  assert.deepEqual(h.started, ["running", "again"]);
  h.release("again");
  assert.equal(await again, "again");
  assert.equal(h.stats().maxPerJob, 1);
});

test("job passes: a failing pass rejects only its callers, and the next pass still runs", async () => {
  const h = harness();
  const head = h.run("default/web", "a", "head");
  await settle();
  const failing = h.run("default/web", "b", "failing");
  const sharer = h.run("default/web", "b", "sharer");
  const next = h.run("default/web", "c", "next");
  h.release("head");
  assert.equal(await head, "head");
  await settle();
  const boom = new Error("boom");
  h.fail("failing", boom);
  await assert.rejects(failing, (e) => e === boom);
  await assert.rejects(sharer, (e) => e === boom, "a caller that shared the pass sees its error");
  await settle();
  assert.deepEqual(h.started, ["head", "failing", "next"]);
  h.release("next");
  assert.equal(await next, "next");
  // The failed request, made again, is a fresh pass.
  const retry = h.run("default/web", "b", "retry");
  await settle();
  h.release("retry");
  assert.equal(await retry, "retry");
  // A pass that throws before its first await fails alike.
  const sync = h.passes.run("default/web", "d", () => {
    throw boom;
  });
  await assert.rejects(sync, (e) => e === boom);
  assert.equal(h.passes.busyJobs, 0);
});
