/**
 * Evals carry their real trigger (Nomad's TriggeredBy): a finished alloc adds no eval (Nomad's
 * Node.UpdateAlloc creates one only for a failed alloc: `alloc-failure`), a scale is `job-scaling`,
 * a revert `job-register`. Also the scale and revert refusals and the deployment pause/resume.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { scaleJob, scaleStatus } from "../../../src/server/rpc/job_scale.js";
import { revertJobVersion } from "../../../src/server/rpc/job_revert.js";
import { DeploymentEndpoint } from "../../../src/server/deploymentwatcher/endpoint.js";
import { decideDeployment } from "../../../src/server/deploymentwatcher/decide.js";
import { newDeployment, DEPLOYMENT_DESC } from "../../../src/structs/deployment.js";
import type { Job } from "../../../src/structs/job.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { nodeEndpointOf } from "../../builders/node_endpoint.js";

const triggers = (store: SqliteStateStore, id: string) =>
  store.evalsByJob("default", id).map((e) => e.TriggeredBy);

async function cluster(job: Job) {
  const store = new SqliteStateStore(null);
  const scheduler = new Scheduler(store, nullLogger);
  await store.txn((tx) => {
    tx.putNode(makeNode("n1"));
    tx.putJob(job);
  });
  await scheduler.evaluate("default", job.ID, "job-register");
  // The first version's rollout is done (an active deployment blocks scaling).
  await store.txn((tx) => {
    for (const d of tx.deploymentsByJob("default", job.ID)) tx.putDeployment({ ...d, Status: "successful" });
  });
  const { ep, hb } = nodeEndpointOf(store, scheduler);
  const report = (id: string, ClientStatus: "running" | "complete" | "failed") =>
    ep.updateAllocs({
      NodeID: "n1",
      Allocs: [{ ID: id, ClientStatus, ClientDescription: "", TaskStates: {} }],
    });
  const close = async () => {
    await hb.stop();
    await scheduler.stop();
    store.close();
  };
  return { store, scheduler, report, close };
}

test("a finished alloc adds no eval; a failed one adds alloc-failure", async () => {
  const c = await cluster({
    ...plainJob("b", "batch"),
    TaskGroups: plainJob("b").TaskGroups.map((g) => ({ ...g, Count: 2 })),
  });
  const [a1, a2] = c.store.allocsByJob("default", "b");
  await c.report(a1!.ID, "running");
  await c.report(a1!.ID, "complete");
  assert.deepEqual(triggers(c.store, "b"), ["job-register"], "a completed batch alloc records no eval");
  await c.report(a2!.ID, "failed");
  const after = triggers(c.store, "b");
  assert.ok(after.length > 1 && after.slice(1).every((t) => t === "alloc-failure"), after.join());
  await c.close();
});

test("job scale: a new version with the count, TriggeredBy job-scaling; Nomad's refusals", async () => {
  const c = await cluster(plainJob("s"));
  const deps = { store: c.store, scheduler: c.scheduler };
  const r = await scaleJob(deps, "default", "s", { count: 3, group: "g" });
  assert.notEqual(r.EvalID, "");
  assert.equal(c.store.getEval(r.EvalID)!.TriggeredBy, "job-scaling");
  const job = c.store.getJob("default", "s")!;
  assert.deepEqual([job.Version, job.TaskGroups[0]!.Count], [1, 3]);
  assert.equal(scaleStatus(c.store, "default", "s").TaskGroups.g!.Desired, 3);
  await assert.rejects(scaleJob(deps, "default", "s", { count: -1, group: "g" }), /can't be negative/);
  await assert.rejects(scaleJob(deps, "default", "s", { count: 1, group: "x" }), /does not exist/);
  await assert.rejects(scaleJob(deps, "default", "nope", { count: 1, group: "g" }), /not found/);
  const none = await scaleJob(deps, "default", "s", { count: null, group: "g" });
  assert.equal(none.EvalID, "", "no count: nothing changed");
  // An active deployment blocks scaling, as Nomad's.
  await c.store.txn((tx) =>
    tx.putDeployment(newDeployment("d1", tx.getJob("default", "s")!, {}, Date.now() * 1e6)),
  );
  await assert.rejects(
    scaleJob(deps, "default", "s", { count: 1, group: "g" }),
    /blocked due to active deployment/,
  );
  await c.close();
});

test("job revert: the kept version again as the next one; current or unknown versions refused", async () => {
  const c = await cluster(plainJob("r"));
  const deps = { store: c.store, scheduler: c.scheduler };
  await scaleJob(deps, "default", "r", { count: 2, group: "g" });
  await assert.rejects(
    revertJobVersion(deps, "default", "r", { version: 1 }),
    /can't revert to current version/,
  );
  await assert.rejects(revertJobVersion(deps, "default", "r", { version: 9 }), /at version 9 not found/);
  await assert.rejects(
    revertJobVersion(deps, "default", "r", { version: 0, enforcePriorVersion: 0 }),
    /Current job has version 1; enforcing version 0/,
  );
  const r = await revertJobVersion(deps, "default", "r", { version: 0, enforcePriorVersion: 1 });
  assert.equal(c.store.getEval(r.EvalID)!.TriggeredBy, "job-register");
  const job = c.store.getJob("default", "r")!;
  assert.deepEqual([job.Version, job.TaskGroups[0]!.Count], [2, 1]);
  await c.close();
});

test("deployment pause: paused deployments neither complete nor fail; resume runs again", async () => {
  const store = new SqliteStateStore(null);
  const scheduler = new Scheduler(store, nullLogger);
  const job = await store.txn((tx) => tx.putJob(plainJob("p")));
  const d = newDeployment("d1", job, {}, Date.now() * 1e6);
  await store.txn((tx) => tx.putDeployment(d));
  const ep = new DeploymentEndpoint(store, scheduler);
  const paused = await ep.pause("d1", true);
  assert.equal(paused.EvalID, "");
  const stored = store.getDeployment("d1")!;
  assert.deepEqual([stored.Status, stored.StatusDescription], ["paused", DEPLOYMENT_DESC.paused]);
  // A deployment with nothing left to do succeeds only while running.
  const decided = decideDeployment({ deployment: stored, allocs: [], versions: [], nowMs: Date.now() });
  assert.equal(decided.deployment.Status, "paused");
  const resumed = await ep.pause("d1", false);
  assert.equal(store.getDeployment("d1")!.Status, "running");
  assert.equal(store.getEval(resumed.EvalID)!.TriggeredBy, "deployment-watcher");
  await store.txn((tx) => tx.putDeployment({ ...tx.getDeployment("d1")!, Status: "successful" }));
  await assert.rejects(ep.pause("d1", true), /terminal status/);
  await scheduler.stop();
  store.close();
});
