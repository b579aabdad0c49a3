/**
 * The reconciler's update decisions (reconcile_update.ts through the Scheduler, on an in-memory
 * SQLite store): deployments made and cancelled, MaxParallel pacing gated on health, canaries beside
 * the old allocs, and the single-writer hand-over (old alloc stopped first, the replacement placed
 * only once the volume has no write claim).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { HANDOVER_DESCRIPTION, UPDATE_DESCRIPTION } from "../../../src/server/scheduler/reconcile_update.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import { DEPLOYMENT_DESC } from "../../../src/structs/deployment.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { Job } from "../../../src/structs/job.js";
import { claimOf } from "../../builders/claim.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

const S = 1_000_000_000;

function job(opts: {
  count: number;
  accessMode: string;
  update: Record<string, unknown>;
  env?: string;
}): Job {
  return validateJob({
    ID: "web",
    Update: { MaxParallel: 1, HealthCheck: "task_states", MinHealthyTime: 1 * S, ...opts.update },
    TaskGroups: [
      {
        Name: "g",
        Count: opts.count,
        Volumes: {
          data: {
            Type: "csi",
            Source: "vol1",
            AccessMode: opts.accessMode,
            AttachmentMode: "file-system",
          },
        },
        Tasks: [
          {
            Name: "t",
            Driver: "exec",
            Config: { command: "/bin/sleep", args: ["1000"] },
            Env: { V: opts.env ?? "1" },
            VolumeMounts: [{ Volume: "data", Destination: "/data" }],
          },
        ],
      },
    ],
  });
}

async function setup(accessMode: string) {
  const store = new SqliteStateStore(null);
  const nodes = ["n1", "n2"].map((id) => makeNode(id, { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
  await store.txn((tx) => {
    nodes.forEach((n) => tx.putNode(n));
    tx.putVolume(
      makeVolume("vol1", {
        RequestedCapabilities: [
          { AccessMode: accessMode as "single-node-writer", AttachmentMode: "file-system" },
        ],
      }),
    );
  });
  return { store, scheduler: new Scheduler(store, nullLogger) };
}

type Store = SqliteStateStore;

async function register(store: Store, scheduler: Scheduler, j: Job) {
  await store.txn((tx) => {
    const prev = tx.getJob(j.Namespace, j.ID);
    tx.putJob({ ...j, Version: prev ? prev.Version + 1 : 0, CreateIndex: prev?.CreateIndex ?? 0 });
  });
  return scheduler.evaluate(j.Namespace, j.ID);
}

const live = (store: Store) =>
  store
    .allocsByJob("default", "web")
    .filter((a) => a.DesiredStatus === "run" && a.ClientStatus !== "complete");

/** The client's side: running (healthy per the deployment when `healthy` is given). */
async function setRunning(store: Store, allocs: Allocation[], healthy?: boolean) {
  await store.txn((tx) => {
    for (const a of allocs) {
      const cur = tx.getAlloc(a.ID)!;
      tx.putAlloc({
        ...cur,
        ClientStatus: "running",
        ...(healthy === undefined
          ? {}
          : {
              DeploymentStatus: {
                Healthy: healthy,
                Canary: cur.DeploymentStatus?.Canary ?? false,
                Timestamp: "",
              },
            }),
      });
    }
  });
}

/** The client's side of a stop: complete; with `release`, its claim on vol1 is gone too. */
async function complete(store: Store, ids: string[], release: boolean) {
  await store.txn((tx) => {
    for (const id of ids) tx.putAlloc({ ...tx.getAlloc(id)!, ClientStatus: "complete" });
    const vol = tx.getVolume("default", "vol1")!;
    const WriteClaims = { ...vol.WriteClaims };
    if (release) for (const id of ids) delete WriteClaims[id];
    tx.putVolume({ ...vol, WriteClaims });
  });
}

async function claim(store: Store, a: Allocation) {
  await store.txn((tx) => {
    const vol = tx.getVolume("default", "vol1")!;
    tx.putVolume({ ...vol, WriteClaims: { ...vol.WriteClaims, [a.ID]: claimOf(a) } });
  });
}

test("rolling update: MaxParallel 1 over count 2 replaces one alloc, the next only once the new one is healthy", async () => {
  const { store, scheduler } = await setup("multi-node-multi-writer");
  const v0 = job({ count: 2, accessMode: "multi-node-multi-writer", update: {} });
  await register(store, scheduler, v0);
  const first = store.deploymentsByJob("default", "web");
  assert.equal(first.length, 1, "the first version is deployed too");
  await setRunning(store, live(store), true);
  const pass = await register(
    store,
    scheduler,
    job({ count: 2, accessMode: "multi-node-multi-writer", update: {}, env: "2" }),
  );
  const deps = store.deploymentsByJob("default", "web");
  assert.equal(store.getEval(pass.evalId)?.DeploymentID, deps[1]?.ID, "the eval names its deployment");
  assert.equal(deps.length, 2);
  assert.equal(deps[0]!.Status, "cancelled");
  assert.equal(deps[0]!.StatusDescription, DEPLOYMENT_DESC.newerJob);
  const d = deps[1]!;
  assert.deepEqual([d.JobVersion, d.Status, d.TaskGroups.g?.DesiredTotal], [1, "running", 2]);
  let allocs = live(store);
  const stopped = store.allocsByJob("default", "web").filter((a) => a.DesiredStatus === "stop");
  assert.equal(stopped.length, 1, "one old alloc replaced");
  assert.equal(stopped[0]!.DesiredDescription, UPDATE_DESCRIPTION);
  const fresh = allocs.filter((a) => a.Job.Version === 1);
  assert.equal(fresh.length, 1);
  assert.equal(fresh[0]!.DeploymentID, d.ID);
  // Not healthy yet: a pass replaces nothing more.
  await setRunning(store, fresh);
  await scheduler.evaluate("default", "web", "deployment-watcher");
  assert.equal(live(store).filter((a) => a.Job.Version === 0).length, 1);
  await setRunning(store, fresh, true);
  await scheduler.evaluate("default", "web", "deployment-watcher");
  allocs = live(store);
  assert.deepEqual(
    allocs.map((a) => a.Job.Version),
    [1, 1],
  );
  store.close();
});

test("canary beside the old allocs on a multi-writer volume: both old allocs stay until promotion", async () => {
  const { store, scheduler } = await setup("multi-node-multi-writer");
  await register(
    store,
    scheduler,
    job({ count: 2, accessMode: "multi-node-multi-writer", update: { Canary: 1 } }),
  );
  await setRunning(store, live(store), true);
  await register(
    store,
    scheduler,
    job({ count: 2, accessMode: "multi-node-multi-writer", update: { Canary: 1 }, env: "2" }),
  );
  const allocs = live(store);
  assert.equal(allocs.length, 3);
  const canaries = allocs.filter((a) => a.DeploymentStatus?.Canary === true);
  assert.equal(canaries.length, 1);
  assert.equal(canaries[0]!.Name, "web.g[0]");
  const d = store.deploymentsByJob("default", "web").at(-1)!;
  assert.equal(d.TaskGroups.g?.DesiredCanaries, 1);
  assert.equal(d.StatusDescription, DEPLOYMENT_DESC.needsPromotion);
  // Healthy but not promoted: nothing else is replaced.
  await setRunning(store, canaries, true);
  await scheduler.evaluate("default", "web", "deployment-watcher");
  assert.equal(live(store).filter((a) => a.Job.Version === 0).length, 2);
  // Promoted: the canary's namesake goes, the other one is replaced (MaxParallel 1).
  await store.txn((tx) => {
    const cur = tx.getDeployment(d.ID)!;
    tx.putDeployment({ ...cur, TaskGroups: { g: { ...cur.TaskGroups.g!, Promoted: true } } });
  });
  await scheduler.evaluate("default", "web", "deployment-watcher");
  assert.deepEqual(
    live(store).map((a) => a.Job.Version),
    [1, 1],
  );
  store.close();
});

test("single-writer canary: the old alloc is stopped first; the canary is placed only once the claim is gone", async () => {
  const { store, scheduler } = await setup("single-node-writer");
  await register(
    store,
    scheduler,
    job({ count: 1, accessMode: "single-node-writer", update: { Canary: 1, AutoPromote: true } }),
  );
  const [v0] = live(store);
  await setRunning(store, [v0!], true);
  await claim(store, v0!);
  await register(
    store,
    scheduler,
    job({ count: 1, accessMode: "single-node-writer", update: { Canary: 1, AutoPromote: true }, env: "2" }),
  );
  const old = store.getAlloc(v0!.ID)!;
  assert.equal(old.DesiredStatus, "stop");
  assert.equal(old.DesiredDescription, HANDOVER_DESCRIPTION);
  assert.equal(live(store).length, 0, "no canary while the old alloc runs");
  // Not a placement failure, but retried like one, so the freed claim fills the slot.
  assert.equal(
    scheduler.isBlocked("default", "web"),
    true,
    "a waiting hand-over is retried when a claim is freed",
  );
  // Stopped, but its claim is not released yet: still no canary.
  await complete(store, [v0!.ID], false);
  const waiting = await scheduler.evaluate("default", "web", "deployment-watcher");
  assert.equal(live(store).length, 0);
  assert.deepEqual(waiting.failures, [], "waiting for the claim is not a placement failure");
  await complete(store, [v0!.ID], true);
  await scheduler.evaluate("default", "web", "deployment-watcher");
  const [canary] = live(store);
  assert.ok(canary);
  assert.equal(canary.DeploymentStatus?.Canary, true);
  assert.equal(canary.Name, "web.g[0]");
  assert.equal(canary.Job.Version, 1);
  store.close();
});

test("single-writer rolling update: each batch stops first and waits for the volume", async () => {
  const { store, scheduler } = await setup("single-node-writer");
  await register(store, scheduler, job({ count: 1, accessMode: "single-node-writer", update: {} }));
  const [v0] = live(store);
  await setRunning(store, [v0!], true);
  await claim(store, v0!);
  await register(store, scheduler, job({ count: 1, accessMode: "single-node-writer", update: {}, env: "2" }));
  assert.equal(store.getAlloc(v0!.ID)!.DesiredDescription, HANDOVER_DESCRIPTION);
  assert.equal(live(store).length, 0);
  await complete(store, [v0!.ID], true);
  await scheduler.evaluate("default", "web", "deployment-watcher");
  assert.deepEqual(
    live(store).map((a) => [a.Job.Version, a.DeploymentStatus?.Canary ?? false]),
    [[1, false]],
  );
  store.close();
});

test("stopping the job cancels its deployment; a job without an update strategy gets none", async () => {
  const { store, scheduler } = await setup("multi-node-multi-writer");
  await register(store, scheduler, job({ count: 1, accessMode: "multi-node-multi-writer", update: {} }));
  await store.txn((tx) => tx.putJob({ ...tx.getJob("default", "web")!, Stop: true }));
  await scheduler.evaluate("default", "web", "job-deregister");
  const [d] = store.deploymentsByJob("default", "web");
  assert.deepEqual([d!.Status, d!.StatusDescription], ["cancelled", DEPLOYMENT_DESC.stoppedJob]);
  const plain = job({ count: 1, accessMode: "multi-node-multi-writer", update: { MaxParallel: 0 } });
  await store.txn((tx) => tx.putJob({ ...plain, ID: "plain" }));
  await scheduler.evaluate("default", "plain");
  assert.equal(store.deploymentsByJob("default", "plain").length, 0);
  assert.equal(store.allocsByJob("default", "plain").length, 1);
  store.close();
});

test("a version whose finished deployment was collected refills a lost slot without a new deployment", async () => {
  const { store, scheduler } = await setup("multi-node-multi-writer");
  await register(store, scheduler, job({ count: 2, accessMode: "multi-node-multi-writer", update: {} }));
  await setRunning(store, live(store), true);
  const [d] = store.deploymentsByJob("default", "web");
  // The deployment ended and the GC removed it (Nomad's deploymentGC); then one alloc is lost.
  await store.txn((tx) => tx.deleteDeployment(d!.ID));
  const [lost] = live(store);
  await store.txn((tx) => tx.putAlloc({ ...tx.getAlloc(lost!.ID)!, ClientStatus: "lost" }));
  await scheduler.evaluate("default", "web");
  const placed = live(store).filter((a) => a.ClientStatus !== "lost");
  assert.equal(placed.length, 2, "the slot is refilled");
  assert.deepEqual(store.deploymentsByJob("default", "web"), [], "as Nomad: no deployment for it");
  // A new version still rolls out under a deployment.
  await register(
    store,
    scheduler,
    job({ count: 2, accessMode: "multi-node-multi-writer", update: {}, env: "2" }),
  );
  assert.equal(store.deploymentsByJob("default", "web").length, 1);
  store.close();
});
