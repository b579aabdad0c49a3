/**
 * The loops that walk stored records (at start and after) isolate a record that throws: the
 * failure is logged with the record's key, the other records are still handled, and the loop (and
 * the server start) goes on. A store wrapper makes one record's read throw, as a record the
 * quarantine could not foresee would.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as tick } from "node:timers/promises";
import type { Logger } from "../../../src/internal/log.js";
import { NodeDrainer } from "../../../src/server/drainer/drainer.js";
import { FollowupTimers } from "../../../src/server/scheduler/followup_timers.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { StateReader, StateStore } from "../../../src/server/state/store.js";
import { VolumeWatcher, type ClaimReleaser } from "../../../src/server/volumewatcher/watcher.js";
import { freeClaim } from "../../../src/structs/claim.js";
import type { Evaluation } from "../../../src/structs/eval.js";
import { applyDrainRequest } from "../../../src/structs/node.js";
import type { VolumeClaim } from "../../../src/structs/volume.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { makeVolume } from "../../builders/volume.js";

function recordingLog(): Logger & { errors: string[] } {
  const errors: string[] = [];
  const log = {
    errors,
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (m: string, f?: Record<string, unknown>) =>
      errors.push(`${m} ${JSON.stringify(f, (_k, v: unknown) => (v instanceof Error ? v.message : v))}`),
    child: () => log,
  };
  return log;
}

type Poison = { getJob?: string; getNode?: string; getAlloc?: string };

/** Wraps a reader so reading the poisoned record (by its ID) throws, in and out of transactions. */
function poisoned<T extends StateReader>(inner: T, p: Poison): T {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      const name = prop as keyof Poison;
      if (p[name] !== undefined) {
        return (...args: string[]) => {
          if (args.includes(p[name]!)) throw new TypeError(`cannot read ${String(prop)} ${p[name]}`);
          return (target[name] as (...a: string[]) => unknown)(...args);
        };
      }
      if (prop === "txn") {
        const store = target as unknown as StateStore;
        return (fn: Parameters<StateStore["txn"]>[0]) => store.txn((tx) => fn(poisoned(tx, p)));
      }
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

async function until(what: string, fn: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick(5);
  }
}

test("scheduler start: one job whose pass throws is logged; the others are evaluated and the start goes on", async (t) => {
  const real = new SqliteStateStore(null);
  t.after(() => real.close());
  await real.txn((tx) => {
    tx.putNode(makeNode("n1"));
    for (const id of ["a", "bad", "z"]) tx.putJob(plainJob(id));
  });
  const log = recordingLog();
  const scheduler = new Scheduler(poisoned(real, { getJob: "bad" }), log);
  await scheduler.evaluateAll();
  await scheduler.stop();
  assert.equal(real.allocsByJob("default", "a").length, 1);
  assert.equal(real.allocsByJob("default", "z").length, 1, "the job after the failing one is evaluated");
  assert.equal(log.errors.length, 1);
  assert.match(log.errors[0]!, /^evaluating a job at start failed .*"job":"bad".*cannot read getJob bad/);
});

test("follow-up timers: an eval that cannot be armed is reported; the others are armed", () => {
  const timers = new FollowupTimers(() => Promise.resolve());
  const later = new Date(Date.now() + 60_000).toISOString();
  const ev = (ID: string) => ({ ID, Namespace: "default", JobID: "j", Status: "pending", WaitUntil: later });
  const unreadable = Object.defineProperty(ev("bad"), "WaitUntil", {
    get: () => {
      throw new TypeError("unreadable WaitUntil");
    },
  });
  const failed: string[] = [];
  timers.armAll([ev("a"), unreadable, ev("z")] as unknown as Evaluation[], (e) => failed.push(e.ID));
  assert.deepEqual(failed, ["bad"]);
  assert.equal(timers.size, 2);
  timers.stop();
});

function claim(allocId: string, nodeId: string): VolumeClaim {
  return {
    AllocationID: allocId,
    NodeID: nodeId,
    ExternalNodeID: nodeId,
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
    State: "taken",
  };
}

test("volumewatcher scan: a volume that cannot be scanned is logged; the others are still reaped", async (t) => {
  const real = new SqliteStateStore(null);
  t.after(() => real.close());
  await real.txn((tx) => {
    tx.putNode(makeNode("gone", { Status: "down" }));
    tx.putVolume(makeVolume("a-bad", { WriteClaims: { boom: claim("boom", "gone") } }));
    tx.putVolume(makeVolume("z-good", { WriteClaims: { ok: claim("ok", "gone") } }));
  });
  const released: string[] = [];
  const releaser: ClaimReleaser = {
    async releaseClaim(namespace, req) {
      released.push(req.VolumeID);
      await real.txn((tx) =>
        tx.putVolume(freeClaim(tx.getVolume(namespace, req.VolumeID)!, req.AllocationID)),
      );
      return true;
    },
  };
  const log = recordingLog();
  // fenceHoldMs 0: the down node's single-writer claims are released at once (issue 28's hold is tested elsewhere).
  const fast = { scanIntervalMs: 5, minIntervalMs: 5, backoffBaseMs: 20, backoffMaxMs: 40, fenceHoldMs: 0 };
  const w = new VolumeWatcher(poisoned(real, { getAlloc: "boom" }), releaser, log, fast);
  w.start();
  t.after(() => w.stop());
  await until("the good volume's release", () => released.includes("z-good"));
  await w.stop();
  assert.deepEqual(released, ["z-good"]);
  assert.match(log.errors[0] ?? "", /^volumewatcher could not scan a volume .*"volume":"a-bad"/);
});

test("node drainer: a draining node whose step throws is logged; the other node's drain completes", async (t) => {
  const real = new SqliteStateStore(null);
  t.after(() => real.close());
  const spec = { DrainSpec: { Deadline: 0, IgnoreSystemJobs: false }, MarkEligible: false, Meta: {} };
  await real.txn((tx) => {
    tx.putNode(applyDrainRequest(makeNode("A"), spec, Date.now()));
    tx.putNode(applyDrainRequest(makeNode("B"), spec, Date.now()));
  });
  const log = recordingLog();
  const evaluator = { evaluate: () => Promise.resolve() };
  const d = new NodeDrainer(poisoned(real, { getNode: "A" }), evaluator, log, {
    settleMs: 5,
    errorBackoffMs: 20,
  });
  d.start();
  t.after(() => d.stop());
  await until("B's drain to complete", () => real.getNode("B")?.DrainStrategy == null);
  await d.stop();
  assert.ok(real.getNode("A")?.DrainStrategy, "A's drain is left for a later pass");
  assert.match(log.errors[0] ?? "", /^node drain step failed .*"node":"A"/);
});
