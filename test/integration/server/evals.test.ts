/**
 * Evaluations through the real server and a fake node agent: a job whose volume's plugin has no
 * healthy node plugin is not placed, and its evaluations say why (Nomad's FailedTGAllocs with the
 * CSI reason, a blocked eval); once the node reports the plugin healthy, the blocked eval places the
 * alloc and completes with no failures.
 *
 * The job has no deployment (`max_parallel = 0`, as in Nomad): a service job's deployment watcher
 * also evaluates the job, and when its pass comes first after the fingerprint it places the alloc
 * itself and cancels the blocked eval as unneeded — a correct outcome too (unit tests: evals.test.ts,
 * scheduler_unblock.test.ts), but not the one this test is about, and the one a loaded CI run hit.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http, startServer } from "./fake_agent.js";

/** The IDs in a list answer, in order. */
const ids = (r: { json: unknown }) => (r.json as { ID: string }[]).map((e) => e.ID);

const jobSpec = {
  ID: "web",
  Update: { MaxParallel: 0 },
  TaskGroups: [
    {
      Name: "g",
      Volumes: {
        data: {
          Type: "csi",
          Source: "vol1",
          AccessMode: "single-node-writer",
          AttachmentMode: "file-system",
        },
      },
      Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
    },
  ],
};

test("evaluations: a CSI placement failure is visible over HTTP, then resolved by the blocked eval", async (t) => {
  const base = await startServer(t);
  const peer = await connectAgent(base);
  t.after(() => peer.close());
  const sick = nodePluginInfo("p1", { Healthy: false, HealthDescription: "probe failed" });
  const node = makeNode("n1", { CSINodePlugins: { p1: sick } });
  await peer.call("Node.Register", { Node: node });
  const vol = await http(base, "PUT", "/v1/volume/csi/vol1", {
    Volumes: [
      {
        ID: "vol1",
        PluginID: "p1",
        ExternalID: "ext-vol1",
        RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
      },
    ],
  });
  assert.equal(vol.status, 200, vol.text);

  const reg = await http(base, "PUT", "/v1/jobs", { Job: jobSpec });
  assert.equal(reg.status, 200, reg.text);
  assert.deepEqual((await http(base, "GET", "/v1/job/web/allocations")).json, []);

  const evals = await http(base, "GET", "/v1/job/web/evaluations");
  assert.equal(evals.status, 200);
  assert.ok(Number(evals.index) >= 1);
  assert.equal(evals.json.length, 2);
  const [first, blocked] = evals.json;
  assert.equal(first.ID, reg.json.EvalID, "the register answer names the eval");
  assert.deepEqual(
    [first.Status, first.TriggeredBy, first.JobID, first.Namespace, first.Type, first.BlockedEval],
    ["complete", "job-register", "web", "default", "service", blocked.ID],
  );
  const metric = first.FailedTGAllocs.g;
  assert.deepEqual(metric.ConstraintFiltered, { "CSI plugin p1 is unhealthy on client n1": 1 });
  assert.deepEqual(
    [metric.NodesEvaluated, metric.NodesFiltered, metric.NodesAvailable, metric.CoalescedFailures],
    [1, 1, { dc1: 1 }, 0],
  );
  assert.deepEqual(first.QueuedAllocations, { g: 1 });
  assert.ok(first.CreateTime > 1e18 && first.ModifyTime >= first.CreateTime, "unix nanoseconds");
  assert.ok(first.CreateIndex > 0 && first.ModifyIndex >= first.CreateIndex);
  assert.equal(first.PlacedAllocIDs, undefined, "server bookkeeping stays inside");
  assert.deepEqual(
    [blocked.Status, blocked.TriggeredBy, blocked.PreviousEval],
    ["blocked", "queued-allocs", first.ID],
  );

  const one = await http(base, "GET", `/v1/evaluation/${first.ID}`);
  assert.equal(one.status, 200);
  assert.deepEqual(one.json, first);
  assert.equal((await http(base, "GET", "/v1/evaluation/no-such-eval")).status, 404);
  const all = await http(base, "GET", "/v1/evaluations");
  // Nomad's order: CreateIndex, then ID (both evals may be written at one index).
  const byNomad = [first, blocked] as { ID: string; CreateIndex: number }[];
  byNomad.sort((a, b) => a.CreateIndex - b.CreateIndex || (a.ID < b.ID ? -1 : 1));
  assert.deepEqual(
    ids(all),
    byNomad.map((e) => e.ID),
  );
  const byPrefix = await http(base, "GET", `/v1/evaluations?prefix=${String(blocked.ID).slice(0, 8)}`);
  assert.deepEqual(ids(byPrefix), [blocked.ID]);
  const byStatus = await http(base, "GET", "/v1/evaluations?status=blocked&job=web");
  assert.deepEqual(ids(byStatus), [blocked.ID]);

  // A blocking query on the job's evals wakes when the node reports its plugin healthy and the
  // blocked eval, run again, places the alloc.
  const waiting = http(base, "GET", `/v1/job/web/evaluations?index=${evals.index}&wait=10s`);
  await peer.call("Node.UpdateFingerprint", {
    NodeID: "n1",
    Drivers: node.Drivers,
    CSIControllerPlugins: {},
    CSINodePlugins: { p1: nodePluginInfo("p1") },
  });
  let later = await waiting;
  assert.ok(Number(later.index) > Number(evals.index));
  // Until the blocked eval is blocked no more, whatever it became (checked below), so a wrong
  // outcome fails at once; a retry that never comes fails at the (generous) bound.
  const stillBlocked = (r: { json: { ID: string; Status: string }[] }) =>
    r.json.some((e) => e.ID === blocked.ID && e.Status === "blocked");
  const deadline = Date.now() + 30_000;
  while (stillBlocked(later) && Date.now() < deadline) {
    later = await http(base, "GET", `/v1/job/web/evaluations?index=${later.index}&wait=5s`);
  }
  assert.equal(later.json.length, 2, "the blocked eval ran again: no new eval");
  const done = later.json[1];
  assert.deepEqual(
    [done.ID, done.Status, done.FailedTGAllocs, done.QueuedAllocations],
    [blocked.ID, "complete", null, { g: 0 }],
  );
  assert.ok(done.ModifyIndex > blocked.ModifyIndex);

  const allocs = (await http(base, "GET", "/v1/job/web/allocations")).json;
  assert.equal(allocs.length, 1);
  assert.equal(allocs[0].NodeID, "n1");
  const placed = await http(base, "GET", `/v1/evaluation/${done.ID}/allocations`);
  assert.deepEqual(ids(placed), [allocs[0].ID]);
  assert.deepEqual((await http(base, "GET", `/v1/evaluation/${first.ID}/allocations`)).json, []);

  // Stopping the job records a job-deregister eval with no failures.
  const stop = await http(base, "DELETE", "/v1/job/web");
  assert.equal(stop.status, 200, stop.text);
  const final = await http(base, "GET", "/v1/job/web/evaluations");
  const dereg = (
    final.json as { ID: string; TriggeredBy: string; Status: string; FailedTGAllocs: unknown }[]
  ).find((e) => e.ID === stop.json.EvalID)!;
  assert.deepEqual(
    [dereg.TriggeredBy, dereg.Status, dereg.FailedTGAllocs],
    ["job-deregister", "complete", null],
  );
});
