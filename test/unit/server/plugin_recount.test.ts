/**
 * The plugin summaries the store moves by delta (derive_plugins.ts, sqlite_plugin_writer.ts) never
 * drift: after random sequences of node puts, deletes and status changes (down, detached), job
 * puts, stops and deletes (service and system jobs, every side) and system-job alloc changes, in
 * random groupings per transaction, every plugin's summary equals a from-scratch recount
 * (buildPlugin over every node's instances and every declaring job's expectation), its full record
 * shows the same instances, and the healthy-instance index answers the same nodes. A real
 * in-memory SQLite store; fast-check picks the sequences (BERTH_RECOUNT_SEED replays one).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { nodeInstances } from "../../../src/server/state/engine/derive_plugins.js";
import type { StateReader, StateWriter } from "../../../src/server/state/store.js";
import { isAllocTerminal, type ClientStatus } from "../../../src/structs/alloc.js";
import type { Node } from "../../../src/structs/node.js";
import {
  buildPlugin,
  isPluginEmpty,
  summaryOf,
  type CSIInfo,
  type CSIPluginSummary,
} from "../../../src/structs/plugin.js";
import { expectedOf, jobPluginUses, type PluginJobExpected } from "../../../src/structs/plugin_jobs.js";
import { alloc, node, pluginInfo, pluginJob } from "../../conformance/builders.js";

const PLUGINS = ["p1", "p2"];
const NODES = ["n1", "n2", "n3", "n4", "n5"];
const JOBS = ["j1", "j2", "j3"];

const side = fc.record({
  healthy: fc.boolean(),
  provider: fc.constantFrom("", "a.csi", "b.csi"),
  version: fc.constantFrom("", "1.0", "2.0"),
  attach: fc.boolean(),
});

const nodePut = fc.record({
  op: fc.constant("putNode" as const),
  node: fc.constantFrom(...NODES),
  status: fc.constantFrom("ready", "ready", "down", "initializing"),
  detached: fc.boolean(),
  plugins: fc.dictionary(
    fc.constantFrom(...PLUGINS),
    fc.record({ controller: fc.option(side), node: fc.option(side) }),
  ),
});

const op = fc.oneof(
  nodePut,
  fc.record({ op: fc.constant("deleteNode" as const), node: fc.constantFrom(...NODES) }),
  fc.record({
    op: fc.constant("status" as const),
    node: fc.constantFrom(...NODES),
    status: fc.constantFrom("ready", "down"),
    detached: fc.boolean(),
  }),
  fc.record({
    op: fc.constant("putJob" as const),
    job: fc.constantFrom(...JOBS),
    plugin: fc.constantFrom(...PLUGINS),
    type: fc.constantFrom("service", "system"),
    side: fc.constantFrom("node", "controller", "monolith"),
    count: fc.integer({ min: 0, max: 3 }),
    stop: fc.boolean(),
  }),
  fc.record({ op: fc.constant("deleteJob" as const), job: fc.constantFrom(...JOBS) }),
  fc.record({
    op: fc.constant("putAlloc" as const),
    alloc: fc.integer({ min: 0, max: 5 }),
    job: fc.constantFrom(...JOBS),
    status: fc.constantFrom<ClientStatus>("pending", "running", "complete", "failed", "lost"),
  }),
  fc.record({ op: fc.constant("deleteAlloc" as const), alloc: fc.integer({ min: 0, max: 5 }) }),
  fc.record({ op: fc.constant("deletePlugin" as const), plugin: fc.constantFrom(...PLUGINS) }),
);

type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;
type Side = { healthy: boolean; provider: string; version: string; attach: boolean };

function info(pluginId: string, which: "node" | "controller", s: Side): CSIInfo {
  const base = pluginInfo(pluginId, which, {
    Healthy: s.healthy,
    HealthDescription: s.healthy ? "healthy" : "probe failed",
    Provider: s.provider,
    ProviderVersion: s.version,
  });
  if (which === "controller" && base.ControllerInfo)
    return { ...base, ControllerInfo: { ...base.ControllerInfo, SupportsAttachDetach: s.attach } };
  return { ...base, RequiresControllerPlugin: s.attach };
}

function withStatus(n: Node, status: string, detached: boolean): Node {
  const down = status === "down";
  const { CSIPluginsDetachedAt: _gone, ...rest } = n;
  return {
    ...rest,
    Status: status as Node["Status"],
    ...(down && detached ? { CSIPluginsDetachedAt: 5 } : {}),
  };
}

function apply(tx: StateWriter, o: Op): void {
  switch (o.op) {
    case "putNode": {
      const controllers: Record<string, CSIInfo> = {};
      const nodes: Record<string, CSIInfo> = {};
      for (const [id, p] of Object.entries(o.plugins)) {
        if (p.controller) controllers[id] = info(id, "controller", p.controller);
        if (p.node) nodes[id] = info(id, "node", p.node);
      }
      const n = node(o.node, { CSIControllerPlugins: controllers, CSINodePlugins: nodes });
      tx.putNode(withStatus(n, o.status, o.detached));
      return;
    }
    case "deleteNode":
      tx.deleteNode(o.node);
      return;
    case "status": {
      const cur = tx.getNode(o.node);
      if (cur) tx.putNode(withStatus(cur, o.status, o.detached));
      return;
    }
    case "putJob": {
      // A system group's count is 0 or 1 (Nomad's validation); a larger one is written as 1.
      const count = o.type === "system" ? Math.min(o.count, 1) : o.count;
      const job = pluginJob(o.job, o.plugin, { type: o.type, side: o.side, count });
      tx.putJob({ ...job, Stop: o.stop });
      return;
    }
    case "deleteJob":
      tx.deleteJob("default", o.job);
      return;
    case "putAlloc": {
      const job = tx.getJob("default", o.job);
      if (!job) return;
      tx.putAlloc(
        alloc(`a${o.alloc}`, job, NODES[o.alloc % NODES.length]!, o.alloc, { ClientStatus: o.status }),
      );
      return;
    }
    case "deleteAlloc":
      tx.deleteAlloc(`a${o.alloc}`);
      return;
    case "deletePlugin":
      tx.deletePlugin(o.plugin);
      return;
  }
}

/** Plugin `id` from scratch: every stored node's instances and every stored job's expectation. */
function recount(s: StateReader, id: string) {
  const entries = s
    .listNodes()
    .map((n) => nodeInstances(n, id))
    .filter((e) => e.controller || e.node);
  const jobs: PluginJobExpected[] = [];
  for (const job of s.listJobs()) {
    for (const use of jobPluginUses(job)) {
      if (use.pluginId !== id) continue;
      const live: Record<string, number> = {};
      for (const a of s.allocsByJob(job.Namespace, job.ID)) {
        if (!isAllocTerminal(a)) live[a.TaskGroup] = (live[a.TaskGroup] ?? 0) + 1;
      }
      jobs.push(expectedOf(use, live));
    }
  }
  return buildPlugin(id, entries, jobs, { CreateIndex: 0, ModifyIndex: 0 });
}

/** The summary's derived content: what a recount must reproduce (stamps and GC clock left out). */
function derived(p: CSIPluginSummary) {
  const { CreateIndex: _c, ModifyIndex: _m, CreateTime: _ct, ModifyTime: _mt, EmptySince: _e, ...rest } = p;
  return rest;
}

function check(s: SqliteStateStore, trace: string): void {
  for (const id of PLUGINS) {
    const want = recount(s, id);
    const have = s.pluginSummary(id);
    if (!have) {
      assert.ok(isPluginEmpty(want), `${trace}\nplugin ${id} is missing but has instances or jobs`);
      continue;
    }
    assert.deepEqual(derived(have), derived(summaryOf(want)), `${trace}\nplugin ${id}'s summary drifted`);
    assert.equal(have.EmptySince > 0, isPluginEmpty(want), `${trace}\nplugin ${id}'s EmptySince`);
    const full = s.getPlugin(id)!;
    assert.deepEqual(
      [full.Controllers, full.Nodes],
      [want.Controllers, want.Nodes],
      `${trace}\n${id} instances`,
    );
    for (const which of ["controller", "node"] as const) {
      const map = which === "controller" ? want.Controllers : want.Nodes;
      const healthy = Object.keys(map).filter((n) => map[n]!.Healthy);
      assert.deepEqual([...s.healthyPluginInstances(id, which).keys()], healthy, `${trace}\n${id} ${which}s`);
    }
  }
}

test("plugin summaries moved by delta equal a from-scratch recount after any sequence of writes", async () => {
  const seed = process.env.BERTH_RECOUNT_SEED ? Number(process.env.BERTH_RECOUNT_SEED) : undefined;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), { maxLength: 25 }),
      async (txns) => {
        const s = new SqliteStateStore(null, { now: () => 1_000 });
        try {
          const done: Op[][] = [];
          for (const ops of txns) {
            await s.txn((tx) => {
              for (const o of ops) apply(tx, o);
            });
            done.push(ops);
            check(s, `after ${JSON.stringify(done)}`);
          }
        } finally {
          s.close();
        }
      },
    ),
    { numRuns: 150, ...(seed !== undefined ? { seed } : {}) },
  );
});
