/**
 * Deployments are garbage-collected as Nomad's are, seen over HTTP on an in-process server
 * (loopback, in-memory state, no node): a terminal deployment goes at the GC's next pass once past
 * the threshold (set to 0 here, the GC's interval short) while an active one stays; a purged job's
 * deployments go in the purge itself, with the default threshold of an hour.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import type { GcOptions } from "../../../src/server/gc/collector.js";
import { Server } from "../../../src/server/server.js";
import { http } from "./fake_agent.js";

const S = 1_000_000_000;

function job(id: string) {
  return {
    ID: id,
    Update: { MaxParallel: 1, HealthCheck: "task_states", MinHealthyTime: S },
    TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "exec" }] }],
  };
}

async function start(t: { after(fn: () => unknown): void }, gc: Partial<GcOptions>): Promise<string> {
  const server = new Server({ dataDir: null, httpAddr: "127.0.0.1:0", log: nullLogger, gc });
  await server.start();
  t.after(() => server.stop());
  return server.httpAddress;
}

async function deploymentOf(base: string, jobId: string): Promise<string> {
  assert.equal((await http(base, "PUT", "/v1/jobs", { Job: job(jobId) })).status, 200);
  const latest = await http(base, "GET", `/v1/job/${jobId}/deployment`);
  assert.equal(latest.json?.Status, "running", latest.text);
  return latest.json.ID as string;
}

test(
  "deployment gc: a terminal deployment is collected, an active one stays",
  { timeout: 30_000 },
  async (t) => {
    const base = await start(t, { intervalMs: 20, deploymentThresholdMs: 0 });
    const failedId = await deploymentOf(base, "web");
    const runningId = await deploymentOf(base, "api");
    const failed = await http(base, "PUT", `/v1/deployment/fail/${failedId}`, { DeploymentID: failedId });
    assert.equal(failed.status, 200, failed.text);
    // Blocking queries on the deployments table until the failed one is gone.
    let index = "0";
    for (;;) {
      const list = await http(base, "GET", `/v1/deployments?index=${index}&wait=5s`);
      const all = list.json as { ID: string; JobID: string }[];
      const ids = all.map((d) => d.ID);
      if (!ids.includes(failedId)) {
        assert.ok(ids.includes(runningId), "the pass that took the failed one kept the running one");
        // Anything else is web's next deployment: its blocked placement may start one for its
        // version once the failed one is gone, as Nomad's reconciler would.
        const others = all.filter((d) => d.ID !== runningId);
        assert.ok(
          others.every((d) => d.JobID === "web"),
          JSON.stringify(others),
        );
        assert.ok(others.length <= 1, JSON.stringify(others));
        break;
      }
      index = list.index!;
    }
    assert.equal((await http(base, "GET", `/v1/deployment/${failedId}`)).status, 404);
    assert.equal((await http(base, "GET", `/v1/deployment/${runningId}`)).json.Status, "running");
  },
);

test("deployment gc: a purged job's deployments go with it", async (t) => {
  const base = await start(t, {});
  const webId = await deploymentOf(base, "web");
  const apiId = await deploymentOf(base, "api");
  const purged = await http(base, "DELETE", "/v1/job/web?purge=true");
  assert.equal(purged.status, 200, purged.text);
  const ids = ((await http(base, "GET", "/v1/deployments")).json as { ID: string }[]).map((d) => d.ID);
  assert.deepEqual(ids, [apiId], "the purge took the job's deployment, and only its");
  assert.equal((await http(base, "GET", `/v1/deployment/${webId}`)).status, 404);
  // Registered again, the job starts a deployment history of its own.
  const again = await deploymentOf(base, "web");
  assert.notEqual(again, webId);
  assert.deepEqual(
    ((await http(base, "GET", "/v1/job/web/deployments?all=true")).json as { ID: string }[]).map((d) => d.ID),
    [again],
  );
});
