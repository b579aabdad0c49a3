/**
 * A plugin's expected instance counts come from the jobs that declare it (Nomad's
 * CSIPlugin.UpdateExpectedWithJob), not from the instances that report: a service or batch job
 * expects each declaring group's Count, a system job its live allocs per group, a monolith counts
 * on both sides and a stopped job on neither. Pure.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Job } from "../../../src/structs/job.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { buildPlugin, type CSIInfo } from "../../../src/structs/plugin.js";
import { expectedOf, jobPluginUses } from "../../../src/structs/plugin_jobs.js";

type Side = "controller" | "node" | "monolith";

function pluginJob(id: string, type: string, groups: [name: string, count: number, side: Side][]): Job {
  return validateJob({
    ID: id,
    Type: type,
    TaskGroups: groups.map(([name, count, side]) => ({
      Name: name,
      Count: count,
      Tasks: [
        { Name: "plugin", Driver: "raw_exec", CSIPluginConfig: { ID: "p1", Type: side, MountDir: "/csi" } },
      ],
    })),
  });
}

function instance(healthy: boolean): CSIInfo {
  return {
    PluginID: "p1",
    AllocID: "",
    Healthy: healthy,
    HealthDescription: healthy ? "healthy" : "unhealthy",
    UpdateTime: 1,
    Provider: "example.csi",
    ProviderVersion: "1.0.0",
    RequiresControllerPlugin: false,
    RequiresTopologies: false,
    ControllerInfo: null,
    NodeInfo: null,
  };
}

/** [controller, node] a job expects, with `live` its live allocs per group. */
function expected(job: Job, live: Record<string, number> = {}) {
  return jobPluginUses(job).map((u) => {
    const e = expectedOf(u, live);
    return [e.controller, e.node];
  });
}

test("plugin expected: a service job expects each declaring group's Count", () => {
  const job = pluginJob("j", "service", [
    ["controller", 2, "controller"],
    ["nodes", 3, "node"],
  ]);
  assert.deepEqual(expected(job), [[2, 3]]);
  assert.deepEqual(expected(job, { nodes: 1 }), [[2, 3]], "live allocs do not matter for a service job");
  assert.deepEqual(expected(pluginJob("b", "batch", [["nodes", 2, "node"]])), [[undefined, 2]]);
});

test("plugin expected: a system job expects its live allocs per declaring group, not its Count", () => {
  const job = pluginJob("sys", "system", [["nodes", 1, "node"]]);
  assert.deepEqual(expected(job), [[undefined, 0]], "declared, nothing placed yet");
  assert.deepEqual(expected(job, { nodes: 2, other: 5 }), [[undefined, 2]], "allocs on 2 nodes");
});

test("plugin expected: a monolith counts on both sides; a stopped job on neither", () => {
  assert.deepEqual(expected(pluginJob("m", "service", [["mono", 2, "monolith"]])), [[2, 2]]);
  assert.deepEqual(expected(pluginJob("ms", "system", [["mono", 1, "monolith"]]), { mono: 3 }), [[3, 3]]);
  assert.deepEqual(expected({ ...pluginJob("j", "service", [["nodes", 2, "node"]]), Stop: true }), []);
});

test("plugin expected: the record sums the jobs' Expected; Healthy counts the instances", () => {
  const uses = [
    ...jobPluginUses(
      pluginJob("a", "service", [
        ["controller", 1, "controller"],
        ["nodes", 0, "node"],
      ]),
    ),
    ...jobPluginUses(pluginJob("sys", "system", [["nodes", 1, "node"]])),
  ];
  const p = buildPlugin(
    "p1",
    [
      { nodeId: "n1", node: instance(true) },
      { nodeId: "n2", node: instance(false) },
    ],
    uses.map((u) => expectedOf(u, u.system ? { nodes: 3 } : {})),
    { CreateIndex: 1, ModifyIndex: 1 },
  );
  assert.deepEqual(
    [p.ControllersHealthy, p.ControllersExpected, p.NodesHealthy, p.NodesExpected],
    [0, 1, 1, 3],
    "the controller is expected though none reports; one node instance is missing, one unhealthy",
  );
  assert.equal(p.NodeJobs.default!.a!.Expected, 0, "a group scaled to 0 still lists its job");
  assert.equal(p.NodeJobs.default!.sys!.Expected, 3);

  const none = buildPlugin("p1", [{ nodeId: "n1", node: instance(true) }], [], {
    CreateIndex: 1,
    ModifyIndex: 1,
  });
  assert.deepEqual([none.NodesHealthy, none.NodesExpected], [1, 0], "an instance no job declares");
});
