/**
 * The deployment GC on a real (in-memory SQLite) store with the clock injected: a terminal
 * deployment goes once it is older than the threshold and every alloc naming it is terminal in
 * Nomad's sense (told to stop counts); a running or paused one stays however old.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { collectDeploymentsIn, DEFAULT_GC_OPTIONS } from "../../../src/server/gc/collector.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { newDeployment, type Deployment } from "../../../src/structs/deployment.js";
import { NS_PER_MS } from "../../../src/structs/job.js";
import type { UpdateStrategy } from "../../../src/structs/job_stanzas.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";

const UPDATE: UpdateStrategy = {
  Stagger: 0,
  MaxParallel: 1,
  HealthCheck: "task_states",
  MinHealthyTime: 0,
  HealthyDeadline: 0,
  ProgressDeadline: 0,
  Canary: 0,
  AutoRevert: false,
  AutoPromote: false,
};

const HOUR = 60 * 60_000;

test("deployment gc: terminal, older than the threshold, no live alloc naming it", async () => {
  assert.equal(DEFAULT_GC_OPTIONS.deploymentThresholdMs, HOUR, "Nomad's deployment_gc_threshold");
  const s = new SqliteStateStore(null);
  try {
    const job = plainJob("web");
    const t0 = 1_000_000;
    const dep = (id: string, status: Deployment["Status"]): Deployment => ({
      ...newDeployment(id, job, { g: { total: 1, canaries: 0, update: UPDATE } }, t0 * NS_PER_MS),
      Status: status,
    });
    const live = allocOf(job, "n1", { DeploymentID: "d-done" });
    await s.txn((tx) => {
      tx.putJob(job);
      tx.putDeployment(dep("d-done", "successful"));
      tx.putDeployment(dep("d-failed", "failed"));
      tx.putDeployment(dep("d-running", "running"));
      tx.putDeployment(dep("d-paused", "paused"));
      tx.putAlloc(live);
    });
    const opts = { deploymentThresholdMs: HOUR };
    const gc = (nowMs: number) => s.txn((tx) => collectDeploymentsIn(tx, nowMs, opts));

    assert.deepEqual(await gc(t0 + HOUR - 1), [], "younger than the threshold");
    assert.deepEqual(await gc(t0 + HOUR), ["d-failed"], "d-done is named by a running alloc");
    // Told to stop is terminal for Nomad's deploymentGC, even before the node has stopped it.
    await s.txn((tx) => tx.putAlloc({ ...live, DesiredStatus: "stop" }));
    assert.deepEqual(await gc(t0 + 10 * HOUR), ["d-done"]);
    assert.deepEqual(
      s.listDeployments().map((d) => d.ID),
      ["d-running", "d-paused"],
      "an active deployment stays however old",
    );
  } finally {
    s.close();
  }
});
