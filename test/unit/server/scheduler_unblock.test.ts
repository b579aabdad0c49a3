/**
 * The blocked set never misses a wake-up (Scheduler.track, docs/design.md "Blocked jobs never miss
 * a wake-up"): a change that may free capacity and commits after a pass read the state, but whose
 * retry comes before that pass has put its job in the blocked set, still gets the job run again.
 * The change is injected in exactly that window through the store the scheduler sees. The
 * unblock-index guard closes both windows; the second (one group-commit batch) is also closed by
 * a retry reading the blocked set only after a yield, the first (the retry done before the pass
 * hears of its commit, as on an etcd leader) only by the guard. Also: a retry that finds the
 * job's allocs placed by another pass meanwhile records no eval.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { nodeWake } from "../../../src/server/scheduler/blocked_wait.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { StateWriter } from "../../../src/server/state/store.js";
import { NS_PER_MS } from "../../../src/structs/job.js";
import type { NodeResources } from "../../../src/structs/node.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";

type Hook = (submit: () => Promise<unknown>) => Promise<unknown>;

/**
 * The store as the scheduler sees it: the next txn the scheduler submits goes through `hook`,
 * which decides what lands around it (before it in its batch, or after its commit but before
 * the scheduler hears of it).
 */
function hooked(store: SqliteStateStore) {
  let hook: Hook | undefined;
  const seen = new Proxy(store, {
    get(target, prop) {
      if (prop === "txn") {
        return <T>(fn: (tx: StateWriter) => T): Promise<unknown> => {
          const h = hook;
          hook = undefined;
          return h ? h(() => target.txn(fn)) : target.txn(fn);
        };
      }
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { seen, onNextTxn: (h: Hook) => (hook = h) };
}

async function setup(t: { after(fn: () => unknown): void }) {
  const store = new SqliteStateStore(null);
  const { seen, onNextTxn } = hooked(store);
  const scheduler = new Scheduler(seen, nullLogger);
  t.after(async () => {
    await scheduler.stop();
    store.close();
  });
  return { store, scheduler, onNextTxn };
}

/** The job's allocs that should run, once there are `want` of them or 10 s have passed. */
async function running(store: SqliteStateStore, job: string, want = 1): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const n = store.allocsByJob("default", job).filter((a) => a.DesiredStatus === "run").length;
    const left = deadline - Date.now();
    if (n >= want || left <= 0) return n;
    await store.waitFor(["allocs"], store.tableIndex("allocs"), undefined, left);
  }
}

const statuses = (store: SqliteStateStore, job: string) =>
  store.evalsByJob("default", job).map((e) => `${e.TriggeredBy}:${e.Status}`);

test("a node made eligible after the pass read it, whose retry comes before the job is tracked, runs the job again", async (t) => {
  const { store, scheduler, onNextTxn } = await setup(t);
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { SchedulingEligibility: "ineligible" }));
    tx.putJob(plainJob("web"));
  });
  // As on an etcd leader whose replica applies another server's write, and that server's
  // forwarded retry runs, before the answer to its own commit comes back.
  onNextTxn(async (submit) => {
    const result = await submit();
    await store.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, SchedulingEligibility: "eligible" }));
    await scheduler.retryBlocked();
    return result;
  });
  const first = await scheduler.evaluate("default", "web");
  assert.equal(first.failures.length, 1, "the pass read the node ineligible");
  assert.equal(await running(store, "web"), 1, "the job was run again and placed");
  assert.deepEqual(statuses(store, "web"), ["job-register:complete", "queued-allocs:complete"]);
  assert.equal(scheduler.isBlocked("default", "web"), false);
});

test("a keyed wake (the node made eligible) in the same window runs the job again", async (t) => {
  const { store, scheduler, onNextTxn } = await setup(t);
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { SchedulingEligibility: "ineligible" }));
    tx.putJob(plainJob("web"));
  });
  onNextTxn(async (submit) => {
    const result = await submit();
    const n1 = await store.txn((tx) =>
      tx.putNode({ ...tx.getNode("n1")!, SchedulingEligibility: "eligible" }),
    );
    await scheduler.retryBlocked([nodeWake(n1)]);
    return result;
  });
  const first = await scheduler.evaluate("default", "web");
  assert.equal(first.failures.length, 1, "the pass read the node ineligible");
  assert.equal(await running(store, "web"), 1, "the job was run again and placed");
});

test("memory freed in the batch of a pass that applies its plan made ahead runs the job again", async (t) => {
  const { store, scheduler, onNextTxn } = await setup(t);
  const resources: NodeResources = {
    Cpu: { CpuShares: 4000, TotalCpuCores: 4, ReservableCpuCores: [0, 1, 2, 3] },
    Memory: { MemoryMB: 1000 },
    Disk: { DiskMB: 100_000 },
  };
  const big = (id: string) => {
    const j = plainJob(id);
    j.TaskGroups[0]!.Tasks[0]!.Resources = { MemoryMB: 800 };
    return j;
  };
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { NodeResources: resources }));
    tx.putJob(big("hog"));
  });
  await scheduler.evaluate("default", "hog");
  const [hogAlloc] = store.allocsByJob("default", "hog");
  await store.txn((tx) => tx.putJob(big("web")));
  // The hog's alloc completes (the node's alloc update: its txn, then a retry, as Node.UpdateAlloc
  // does) in the same group-commit batch as web's pass, just before it: the plan web made ahead
  // stays valid (an existing alloc changed status) and is applied, failing where room now is.
  onNextTxn((submit) => {
    const done = (tx: StateWriter) =>
      tx.putAlloc(
        { ...tx.getAlloc(hogAlloc!.ID)!, ClientStatus: "complete", ModifyTime: Date.now() * NS_PER_MS },
        { fromClient: true },
      );
    void store.txn(done).then(() => scheduler.retryBlocked());
    return submit();
  });
  const first = await scheduler.evaluate("default", "web");
  assert.deepEqual(
    first.failures[0]?.metrics.DimensionExhausted,
    { memory: 1 },
    "the plan read the hog running",
  );
  assert.equal(await running(store, "web"), 1, "the job was run again and placed");
  assert.deepEqual(statuses(store, "web"), ["job-register:complete", "queued-allocs:complete"]);
});

test("a retry queued behind a pass that placed the job's allocs records no eval", async (t) => {
  const { store, scheduler } = await setup(t);
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { SchedulingEligibility: "ineligible" }));
    tx.putJob(plainJob("web"));
  });
  await scheduler.evaluate("default", "web");
  assert.ok(scheduler.isBlocked("default", "web"));
  await store.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, SchedulingEligibility: "eligible" }));
  // Another pass (a deployment watcher's, say) takes the job first; the retry waits behind it.
  const other = scheduler.evaluate("default", "web", "deployment-watcher", { quiet: true });
  const retry = scheduler.retryBlocked();
  await Promise.all([other, retry]);
  assert.equal(await running(store, "web"), 1);
  assert.deepEqual(
    statuses(store, "web"),
    ["job-register:complete", "queued-allocs:cancelled", "deployment-watcher:complete"],
    "the blocked eval is cancelled as unneeded, and the retry adds no empty eval",
  );
});
