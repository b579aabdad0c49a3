/**
 * The update routes over HTTP on an in-process server (loopback, in-memory state, no node: the
 * job's allocs find none): job versions, `PUT /v1/job/:id/plan` as a dry run (the store's index is
 * the same after it), the deployment reads, promote and fail with Nomad's answers, and bad input
 * refused with 4xx and the field named, changing nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { http, startServer } from "./fake_agent.js";

const S = 1_000_000_000;

function job(env: string, update: Record<string, unknown> = {}) {
  return {
    ID: "web",
    Update: { MaxParallel: 1, HealthCheck: "task_states", MinHealthyTime: S, ...update },
    TaskGroups: [{ Name: "g", Count: 2, Tasks: [{ Name: "t", Driver: "exec", Env: { V: env } }] }],
  };
}

test("job versions, plan as a dry run, deployment reads, promote and fail", async (t) => {
  const base = await startServer(t);
  assert.equal((await http(base, "PUT", "/v1/jobs", { Job: job("1") })).status, 200);
  const versions = await http(base, "GET", "/v1/job/web/versions");
  assert.equal(versions.status, 200);
  const listed = versions.json.Versions as { Version: number }[];
  assert.deepEqual(
    listed.map((v) => v.Version),
    [0],
  );
  assert.equal(versions.json.Diffs, null);

  const before = (await http(base, "GET", "/v1/job/web")).index;
  const plan = await http(base, "PUT", "/v1/job/web/plan", { Job: job("2"), Diff: true });
  assert.equal(plan.status, 200, plan.text);
  assert.equal(plan.json.Diff.Type, "Edited");
  assert.equal(plan.json.Diff.TaskGroups[0].Type, "Edited");
  assert.ok(plan.json.FailedTGAllocs.g, "no node: the group would not be placed");
  assert.deepEqual(Object.keys(plan.json.Annotations.DesiredTGUpdates), ["g"]);
  assert.equal(plan.json.NextPeriodicLaunch, "0001-01-01T00:00:00Z");
  assert.equal(plan.json.CreatedEvals, null);
  assert.equal(plan.json.Warnings, "");
  const after = await http(base, "GET", "/v1/job/web");
  assert.equal(after.index, before, "the plan wrote nothing");
  assert.equal(after.json.Version, 0);

  for (const [body, field] of [
    [{}, "Job"],
    [{ Job: { ...job("2"), ID: "other" } }, "Job.ID"],
    [
      // The job-level block is what is wrong: the error names it, not the group that inherits it.
      { Job: job("2", { MinHealthyTime: 10 * S, HealthyDeadline: 5 * S }) },
      "Job.Update.MinHealthyTime",
    ],
    [{ Job: job("2"), Diff: "yes" }, "Diff"],
  ] as const) {
    const bad = await http(base, "PUT", "/v1/job/web/plan", body);
    assert.equal(bad.status, 400, bad.text);
    assert.equal(
      (await fetch(`${base}/v1/job/web/plan`, { method: "PUT", body: JSON.stringify(body) })).headers.get(
        "x-berth-error-code",
      ),
      "ERR_VALIDATION",
    );
    assert.ok(bad.text.startsWith(field), `${bad.text} names ${field}`);
  }

  const list = await http(base, "GET", "/v1/deployments");
  assert.equal(list.status, 200);
  assert.equal(list.json.length, 1);
  const latest = await http(base, "GET", "/v1/job/web/deployment");
  const id: string = latest.json.ID;
  assert.deepEqual(
    [latest.json.JobVersion, latest.json.Status, latest.json.TaskGroups.g.DesiredTotal],
    [0, "running", 2],
  );
  assert.equal((await http(base, "GET", `/v1/deployment/${id}`)).json.ID, id);
  assert.deepEqual((await http(base, "GET", `/v1/deployment/allocations/${id}`)).json, []);
  assert.equal((await http(base, "GET", "/v1/job/web/deployments")).json.length, 1);

  const missing = await http(base, "PUT", "/v1/deployment/promote/nope", { All: true });
  assert.equal(missing.status, 404);
  const mismatch = await http(base, "PUT", `/v1/deployment/promote/${id}`, {
    DeploymentID: "other",
    All: true,
  });
  assert.equal(mismatch.status, 400);
  assert.equal(
    (await http(base, "PUT", `/v1/deployment/promote/${id}`, {})).status,
    400,
    "neither All nor Groups",
  );

  const failed = await http(base, "PUT", `/v1/deployment/fail/${id}`, { DeploymentID: id });
  assert.equal(failed.status, 200, failed.text);
  assert.equal(failed.json.RevertedJobVersion, null);
  const d = (await http(base, "GET", `/v1/deployment/${id}`)).json;
  assert.deepEqual([d.Status, d.StatusDescription], ["failed", "Deployment marked as failed"]);
  const late = await http(base, "PUT", `/v1/deployment/promote/${id}`, { All: true });
  assert.equal(late.status, 409);
  assert.match(late.text, /has terminal status "failed"/);
});
