/**
 * The plugin derivation as pure deltas (src/server/state/engine/derive_plugins.ts): no store, no I/O.
 * Each case feeds one node update, one job change or one alloc change and checks the plugin
 * record it yields from the previous one (the summary the delta moves, with the instances kept
 * apart as a store keeps them).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  allocLiveJobs,
  applyPluginDelta,
  jobPluginDeltas,
  nodePluginDeltas,
  type JobExpectation,
  type NodeInstances,
} from "../../../src/server/state/engine/derive_plugins.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import type { Node } from "../../../src/structs/node.js";
import {
  buildPlugin,
  NODE_DOWN_HEALTH,
  pluginIdentity,
  summaryOf,
  withInstances,
  type CSIInfo,
  type CSIPlugin,
  type CSIPluginSummary,
} from "../../../src/structs/plugin.js";
import { expectedOf, jobPluginUses } from "../../../src/structs/plugin_jobs.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { Job } from "../../../src/structs/job.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";

const at = (writeIndex: number, nowMs = 1000) => ({ writeIndex, nowMs });

/** Plugins as a store keeps them: summaries, and each node's instances per plugin. */
class Plugins {
  readonly summaries = new Map<string, CSIPluginSummary>();
  private readonly instances = new Map<string, Map<string, NodeInstances>>();

  /** The full record (summary + instances), as getPlugin answers it. */
  get(id: string): CSIPlugin | undefined {
    const s = this.summaries.get(id);
    if (!s) return undefined;
    const Controllers: Record<string, CSIInfo> = {};
    const Nodes: Record<string, CSIInfo> = {};
    for (const [nodeId, i] of [...(this.instances.get(id) ?? [])].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (i.controller) Controllers[nodeId] = i.controller;
      if (i.node) Nodes[nodeId] = i.node;
    }
    return withInstances(s, Controllers, Nodes);
  }

  /** Applies a node's update to the plugins it names, as a store does; returns the changed IDs. */
  applyNode(prev: Node | undefined, next: Node | undefined, idx: number, nowMs = 1000): string[] {
    const changed: string[] = [];
    const nodeId = (next ?? prev)!.ID;
    for (const [id, change] of nodePluginDeltas(nodeId, prev, next)) {
      const byNode = this.instances.get(id) ?? new Map<string, NodeInstances>();
      this.instances.set(id, byNode);
      if (change.after.controller || change.after.node) byNode.set(nodeId, change.after);
      else byNode.delete(nodeId);
      const sorted = [...byNode].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, i]) => i);
      const delta = { nodes: [change], identity: pluginIdentity(sorted) };
      const rec = applyPluginDelta(this.summaries.get(id), id, delta, at(idx, nowMs));
      if (rec) {
        this.summaries.set(id, rec);
        changed.push(id);
      }
    }
    return changed;
  }

  applyJobs(id: string, jobs: JobExpectation[], idx: number, nowMs = 1000): CSIPlugin | undefined {
    const rec = applyPluginDelta(this.summaries.get(id), id, { jobs }, at(idx, nowMs));
    if (rec) this.summaries.set(id, rec);
    return this.get(id);
  }
}

function applyNode(
  plugins: Plugins,
  prev: Node | undefined,
  next: Node | undefined,
  idx: number,
  nowMs = 1000,
): string[] {
  return plugins.applyNode(prev, next, idx, nowMs);
}

function pluginJob(
  id: string,
  type: string,
  groups: [string, number, "controller" | "node" | "monolith"][],
): Job {
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

function expectations(job: Job, live: Record<string, number> = {}): JobExpectation[] {
  return jobPluginDeltas([], jobPluginUses(job)).map(({ use }) => ({
    namespace: job.Namespace,
    jobId: job.ID,
    expected: use && expectedOf(use, live),
  }));
}

function alloc(over: Partial<Allocation>): Allocation {
  return {
    ID: "a1",
    Namespace: "default",
    Name: "j.g[0]",
    NodeID: "n1",
    NodeName: "n1",
    JobID: "j",
    Job: {} as Job,
    TaskGroup: "g",
    DesiredStatus: "run",
    DesiredDescription: "",
    ClientStatus: "pending",
    ClientDescription: "",
    TaskStates: {},
    CreateIndex: 0,
    ModifyIndex: 0,
    AllocModifyIndex: 0,
    CreateTime: 0,
    ModifyTime: 0,
    ...over,
  };
}

test("derive plugins: a node that adds a plugin creates it; one that drops it leaves it empty, stamped", () => {
  const plugins = new Plugins();
  const n1 = makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } });
  assert.deepEqual(applyNode(plugins, undefined, n1, 3), ["p1"]);
  let p = plugins.get("p1")!;
  assert.deepEqual([p.NodesHealthy, Object.keys(p.Nodes), p.CreateIndex, p.ModifyIndex], [1, ["n1"], 3, 3]);
  assert.deepEqual([p.Provider, p.Version, p.EmptySince], ["example.csi", "1.0.0", 0]);

  const n2 = makeNode("n2", { CSINodePlugins: { p1: nodePluginInfo("p1") } });
  applyNode(plugins, undefined, n2, 4);
  assert.deepEqual(applyNode(plugins, n1, { ...n1, CSINodePlugins: {} }, 5, 7777), ["p1"]);
  p = plugins.get("p1")!;
  assert.deepEqual(
    [Object.keys(p.Nodes), p.NodesHealthy, p.EmptySince],
    [["n2"], 1, 0],
    "only n1's entry goes",
  );
  applyNode(plugins, n2, undefined, 6, 8888);
  p = plugins.get("p1")!;
  assert.deepEqual([Object.keys(p.Nodes), p.CreateIndex, p.ModifyIndex, p.EmptySince], [[], 3, 6, 8888]);
  const none = { before: { nodeId: "n9" }, after: { nodeId: "n9" } };
  assert.equal(
    applyPluginDelta(plugins.summaries.get("p1"), "p1", { nodes: [none] }, at(7, 9999)),
    undefined,
    "an empty plugin staying empty keeps its EmptySince and does not change",
  );
  assert.equal(applyPluginDelta(undefined, "p2", { nodes: [none] }, at(7)), undefined);
});

test("derive plugins: health flips with the instance and with the node's status; a heartbeat changes nothing", () => {
  const plugins = new Plugins();
  const n1 = makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } });
  applyNode(plugins, undefined, n1, 1);
  const sick = { ...n1, CSINodePlugins: { p1: nodePluginInfo("p1", { Healthy: false }) } };
  assert.deepEqual(applyNode(plugins, n1, sick, 2), ["p1"]);
  assert.equal(plugins.get("p1")!.NodesHealthy, 0);
  applyNode(plugins, sick, n1, 3);
  assert.equal(plugins.get("p1")!.NodesHealthy, 1);

  const down: Node = { ...n1, Status: "down" };
  assert.deepEqual(applyNode(plugins, n1, down, 4), ["p1"]);
  const p = plugins.get("p1")!;
  assert.deepEqual([p.NodesHealthy, p.Nodes.n1!.HealthDescription], [0, NODE_DOWN_HEALTH]);
  applyNode(plugins, down, n1, 5);
  assert.equal(plugins.get("p1")!.NodesHealthy, 1, "healthy as reported once the node is back");

  const beat: Node = { ...n1, StatusUpdatedAt: 99, Name: "renamed" };
  assert.equal(nodePluginDeltas("n1", n1, beat).size, 0, "no plugin delta for a heartbeat");
  assert.equal(nodePluginDeltas("n1", down, { ...down, StatusUpdatedAt: 5 }).size, 0);
});

test("derive plugins: ControllerRequired follows a controller that supports attach/detach", () => {
  const plugins = new Plugins();
  const noAttach = makeNode("c1", { CSIControllerPlugins: { p1: controllerInfo("p1", false) } });
  applyNode(plugins, undefined, noAttach, 1);
  let p = plugins.get("p1")!;
  assert.deepEqual(
    [p.ControllerRequired, p.ControllersHealthy, Object.keys(p.Controllers)],
    [false, 1, ["c1"]],
  );
  const attach = makeNode("c2", { CSIControllerPlugins: { p1: controllerInfo("p1", true) } });
  applyNode(plugins, undefined, attach, 2);
  p = plugins.get("p1")!;
  assert.deepEqual([p.ControllerRequired, p.ControllersHealthy], [true, 2]);
  applyNode(plugins, attach, undefined, 3);
  assert.equal(plugins.get("p1")!.ControllerRequired, false, "recomputed from the instances left");
});

test("derive plugins: a job declares expected counts; an unchanged job is no delta; a stopped one lets go", () => {
  const job = pluginJob("plug", "service", [
    ["ctrl", 2, "controller"],
    ["nodes", 3, "node"],
  ]);
  const uses = jobPluginUses(job);
  let p = applyPluginDelta(undefined, "p1", { jobs: expectations(job) }, at(1))!;
  assert.deepEqual([p.ControllersExpected, p.NodesExpected, p.EmptySince], [2, 3, 0]);
  assert.deepEqual(p.ControllerJobs, {
    default: { plug: { Namespace: "default", ID: "plug", Version: 0, Expected: 2 } },
  });
  assert.deepEqual(jobPluginDeltas(uses, jobPluginUses({ ...job })), [], "same uses, nothing to do");

  const scaled = {
    ...job,
    TaskGroups: job.TaskGroups.map((g) => (g.Name === "nodes" ? { ...g, Count: 5 } : g)),
  };
  const delta = jobPluginDeltas(uses, jobPluginUses(scaled));
  assert.deepEqual(
    delta.map((d) => d.pluginId),
    ["p1"],
  );
  p = applyPluginDelta(
    p,
    "p1",
    { jobs: [{ namespace: "default", jobId: "plug", expected: expectedOf(delta[0]!.use!, {}) }] },
    at(2),
  )!;
  assert.deepEqual([p.ControllersExpected, p.NodesExpected, p.ModifyIndex], [2, 5, 2]);

  const other = pluginJob("other", "service", [["nodes", 1, "node"]]);
  p = applyPluginDelta(p, "p1", { jobs: expectations(other) }, at(3))!;
  assert.equal(p.NodesExpected, 6, "two jobs' expectations add up");

  const stopped = jobPluginDeltas(uses, jobPluginUses({ ...job, Stop: true }));
  assert.deepEqual(stopped, [{ pluginId: "p1", use: undefined }]);
  p = applyPluginDelta(
    p,
    "p1",
    { jobs: [{ namespace: "default", jobId: "plug", expected: undefined }] },
    at(4),
  )!;
  assert.deepEqual([p.ControllersExpected, p.NodesExpected, Object.keys(p.ControllerJobs)], [0, 1, []]);
  p = applyPluginDelta(
    p,
    "p1",
    { jobs: [{ namespace: "default", jobId: "other", expected: undefined }] },
    at(5, 4242),
  )!;
  assert.equal(p.EmptySince, 4242, "no instance and no job: kept, stamped for the garbage collector");
});

test("derive plugins: a system job expects its live allocs, which only a live-group change moves", () => {
  const job = pluginJob("sys", "system", [["g", 1, "monolith"]]);
  let p = applyPluginDelta(undefined, "p1", { jobs: expectations(job, {}) }, at(1))!;
  assert.deepEqual(
    [p.ControllersExpected, p.NodesExpected, Object.keys(p.NodeJobs.default!)],
    [0, 0, ["sys"]],
  );
  p = applyPluginDelta(p, "p1", { jobs: expectations(job, { g: 2 }) }, at(2))!;
  assert.deepEqual([p.ControllersExpected, p.NodesExpected], [2, 2]);

  const pending = alloc({ JobID: "sys" });
  assert.deepEqual(allocLiveJobs(undefined, pending), [{ namespace: "default", jobId: "sys" }], "placed");
  assert.deepEqual(allocLiveJobs(pending, { ...pending, ClientStatus: "running" }), [], "still live");
  assert.deepEqual(allocLiveJobs(pending, { ...pending, ClientStatus: "complete" }), [
    { namespace: "default", jobId: "sys" },
  ]);
  assert.deepEqual(allocLiveJobs(pending, undefined), [{ namespace: "default", jobId: "sys" }], "deleted");
  assert.deepEqual(allocLiveJobs({ ...pending, ClientStatus: "failed" }, undefined), [], "was not live");
});

test("derive plugins: a sequence of deltas equals a rebuild from scratch", () => {
  const plugins = new Plugins();
  const nodes = ["n3", "n1", "n2"].map((id, i) =>
    makeNode(id, {
      CSINodePlugins: { p1: nodePluginInfo("p1", { Healthy: i !== 1 }) },
      CSIControllerPlugins: i === 0 ? { p1: controllerInfo("p1") } : {},
    }),
  );
  nodes.forEach((n, i) => applyNode(plugins, undefined, n, i + 1));
  const job = pluginJob("plug", "service", [["nodes", 3, "node"]]);
  const withJob = plugins.applyJobs("p1", expectations(job), 4)!;
  const rebuilt = buildPlugin(
    "p1",
    ["n1", "n2", "n3"].map((id) => {
      const n = nodes.find((x) => x.ID === id)!;
      return {
        nodeId: id,
        ...(n.CSIControllerPlugins.p1 ? { controller: n.CSIControllerPlugins.p1 } : {}),
        node: n.CSINodePlugins.p1!,
      };
    }),
    [expectedOf(jobPluginUses(job)[0]!, {})],
    { CreateIndex: 1, ModifyIndex: 4, CreateTime: 1000e6, ModifyTime: 1000e6 },
  );
  assert.equal(JSON.stringify(withJob), JSON.stringify(rebuilt), "same record, same key order");
  assert.deepEqual(plugins.summaries.get("p1"), summaryOf(rebuilt), "the summary counts the same");
});

test("CreateTime is kept from the first write; ModifyTime moves only when the record changes", () => {
  const none = { nodeId: "n1" };
  const healthy = { nodeId: "n1", node: nodePluginInfo("p1", { Healthy: true }) };
  const first = applyPluginDelta(
    undefined,
    "p1",
    { nodes: [{ before: none, after: healthy }] },
    at(1, 1000),
  )!;
  assert.deepEqual([first.CreateTime, first.ModifyTime], [1000e6, 1000e6], "Unix ns of the first write");
  const same = { nodes: [{ before: healthy, after: healthy }] };
  assert.equal(applyPluginDelta(first, "p1", same, at(2, 5000)), undefined, "a no-op");
  const sick = { nodeId: "n1", node: nodePluginInfo("p1", { Healthy: false }) };
  const changed = applyPluginDelta(first, "p1", { nodes: [{ before: healthy, after: sick }] }, at(3, 9000))!;
  assert.deepEqual([changed.CreateTime, changed.ModifyTime], [1000e6, 9000e6]);
});
