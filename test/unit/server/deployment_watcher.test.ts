/**
 * One deployment watcher step in a store transaction (deploymentwatcher/watcher.ts stepDeployment):
 * health marks written on the allocs, success marking the job version Stable, and auto_revert
 * registering the newest stable version again as the job's next version.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { DeploymentWatcher, stepDeployment } from "../../../src/server/deploymentwatcher/watcher.js";
import { nullLogger } from "../../../src/internal/log.js";
import { makeVolume } from "../../builders/volume.js";
import { newDeployment } from "../../../src/structs/deployment.js";
import type { UpdateStrategy } from "../../../src/structs/job_stanzas.js";
import type { Job } from "../../../src/structs/job.js";
import { plainJob } from "../../builders/job.js";
import { allocOf } from "../../builders/alloc.js";

const S = 1_000_000_000;
const u = (over: Partial<UpdateStrategy> = {}): UpdateStrategy => ({
  Stagger: 0,
  MaxParallel: 1,
  HealthCheck: "task_states",
  MinHealthyTime: 0,
  HealthyDeadline: 60 * S,
  ProgressDeadline: 0,
  Canary: 0,
  AutoRevert: true,
  AutoPromote: false,
  ...over,
});

function version(env: string, strategy: UpdateStrategy): Job {
  const j = plainJob("web");
  return {
    ...j,
    TaskGroups: j.TaskGroups.map((g) => ({
      ...g,
      Update: strategy,
      Tasks: g.Tasks.map((t) => ({ ...t, Env: { V: env } })),
    })),
  };
}

async function setup(outcome: "failed" | "running") {
  const store = new SqliteStateStore(null);
  const strategy = u();
  await store.txn((tx) => tx.putJob({ ...version("0", strategy), Version: 0, Stable: true }));
  const v1 = await store.txn((tx) =>
    tx.putJob({ ...tx.getJob("default", "web")!, ...version("1", strategy), Version: 1, Stable: false }),
  );
  const d = newDeployment("d1", v1, { g: { total: 1, canaries: 0, update: strategy } }, Date.now() * 1e6);
  const started = new Date(Date.now() - 1000).toISOString();
  await store.txn((tx) => {
    tx.putDeployment(d);
    tx.putAlloc(
      allocOf(v1, "n1", {
        ID: "a1",
        DeploymentID: "d1",
        ClientStatus: outcome,
        CreateTime: Date.now() * 1e6,
        TaskStates: {
          t: {
            State: outcome === "failed" ? "dead" : "running",
            Failed: outcome === "failed",
            Restarts: 0,
            StartedAt: started,
            FinishedAt: null,
            Events: [],
          },
        },
      }),
    );
  });
  return store;
}

test("a failed alloc fails the deployment and auto_revert registers the stable version 0 as version 2", async () => {
  const store = await setup("failed");
  const step = await store.txn((tx) => stepDeployment(tx, "d1", Date.now()));
  assert.equal(step?.changed, true);
  const d = store.getDeployment("d1")!;
  assert.deepEqual(
    [d.Status, d.StatusDescription],
    ["failed", "Failed due to unhealthy allocations - rolling back to job version 0"],
  );
  assert.equal(store.getAlloc("a1")?.DeploymentStatus?.Healthy, false);
  const job = store.getJob("default", "web")!;
  assert.deepEqual([job.Version, job.Stable, job.TaskGroups[0]!.Tasks[0]!.Env], [2, false, { V: "0" }]);
  assert.deepEqual(
    store.jobVersions("default", "web").map((v) => v.Version),
    [2, 1, 0],
  );
  // A second step finds the deployment terminal: nothing more happens.
  assert.equal(await store.txn((tx) => stepDeployment(tx, "d1", Date.now())), null);
  store.close();
});

test("a healthy alloc completes the deployment and marks its job version stable", async () => {
  const store = await setup("running");
  await store.txn((tx) => stepDeployment(tx, "d1", Date.now()));
  assert.equal(store.getDeployment("d1")?.Status, "successful");
  assert.equal(store.getAlloc("a1")?.DeploymentStatus?.Healthy, true);
  const job = store.getJob("default", "web")!;
  assert.deepEqual([job.Version, job.Stable], [1, true]);
  assert.equal(store.jobVersions("default", "web")[0]?.Stable, true);
  store.close();
});

test("a purged job takes its deployment; one of an earlier incarnation left in the store is cancelled", async () => {
  const store = await setup("running");
  const d1 = store.getDeployment("d1")!;
  await store.txn((tx) => tx.deleteJob("default", "web"));
  assert.equal(store.getDeployment("d1"), undefined, "purged with its job, as Nomad's DeleteJobTxn");
  assert.equal(await store.txn((tx) => stepDeployment(tx, "d1", Date.now())), null);
  // A deployment stored before purges took them along, its job since registered again.
  await store.txn((tx) => {
    tx.putJob(version("2", u()));
    tx.putDeployment(d1);
  });
  await store.txn((tx) => stepDeployment(tx, "d1", Date.now()));
  const d = store.getDeployment("d1")!;
  assert.deepEqual([d.Status, d.StatusDescription], ["cancelled", "Cancelled because job is stopped"]);
  store.close();
});

test("the watcher loop wakes for its deployments' allocs, not for volume writes (every claim step writes one)", async () => {
  const store = new SqliteStateStore(null);
  // MinHealthyTime far off: the deployment stays active through the test.
  const strategy = u({ MinHealthyTime: 3600 * S, HealthyDeadline: 7200 * S });
  const v1 = await store.txn((tx) => tx.putJob({ ...version("1", strategy), Version: 1, Stable: false }));
  const d = newDeployment("d1", v1, { g: { total: 1, canaries: 0, update: strategy } }, Date.now() * 1e6);
  const alloc = allocOf(v1, "n1", {
    ID: "a1",
    DeploymentID: "d1",
    ClientStatus: "pending",
    CreateTime: Date.now() * 1e6,
  });
  await store.txn((tx) => {
    tx.putDeployment(d);
    tx.putAlloc(alloc);
    tx.putVolume(makeVolume("vol"));
  });
  let evaluations = 0;
  const watcher = new DeploymentWatcher(
    store,
    { evaluate: () => Promise.resolve(void evaluations++) },
    nullLogger,
    { settleMs: 0 },
  );
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const until = async (what: string, ok: () => boolean) => {
    for (let i = 0; !ok(); i++) {
      if (i > 1000) throw new Error(`timed out waiting for ${what}`);
      await sleep(10);
    }
  };
  watcher.start();
  try {
    await until("the first pass", () => evaluations > 0);
    await sleep(200);
    const before = evaluations;
    // A burst of claim steps elsewhere: each writes the volume, none is the deployment's business.
    for (let i = 0; i < 20; i++) {
      await store.txn((tx) => tx.putVolume(makeVolume("vol", { Context: { step: String(i) } })));
      await sleep(5);
    }
    await sleep(200);
    // The deployment's own alloc changing wakes it (the loop is alive and waiting).
    await store.txn((tx) => tx.putAlloc({ ...alloc, ClientStatus: "running" }));
    await until("the pass the alloc write wakes", () => evaluations > before);
    await sleep(100);
    assert.equal(evaluations, before + 1, "one pass, for the alloc write; none for the 20 volume writes");
  } finally {
    await watcher.stop();
    store.close();
  }
});
