/**
 * The plugin derivation every StateStore runs inside its write transactions, as deltas: one node
 * update, one job change or one system job's live allocs moving changes only the plugin summaries
 * they name, each patched from its previous summary, never rebuilt from every instance. Pure: no
 * store, no I/O. A store keeps each node's instances of a plugin apart (one row per (plugin,
 * node)), supplies what it alone can answer from its indexes (a system job's live allocs per group,
 * the plugin's Provider / Version after a node change: pluginIdentity's rule) and writes back the
 * summaries these functions return.
 *
 * Counts move by the difference between one node's instances before and after (countsOf): the
 * summary's healthy and instance counts are those buildPlugin would count over every instance, as
 * long as each change's `before` is what the store last counted for that node (nodePluginDeltas
 * takes both from the node record before and after the write, the same record the instance rows
 * were derived from). The jobs a summary counts are its own ControllerJobs / NodeJobs: a delta
 * replaces one job's entry and the expected counts are summed again (a plugin has few jobs).
 */
import { isAllocTerminal, type Allocation } from "../../../structs/alloc.js";
import { ownEntry, type Node } from "../../../structs/node.js";
import {
  instanceOnNode,
  requiresController,
  stampEmptySince,
  type CSIInfo,
  type CSIPlugin,
  type CSIPluginSummary,
  type PluginInstanceCounts,
} from "../../../structs/plugin.js";
import {
  jobDescriptions,
  totalExpected,
  type PluginJobExpected,
  type PluginJobUse,
} from "../../../structs/plugin_jobs.js";
import { contentOf } from "./records.js";
import { NS_PER_MS } from "../../../structs/job.js";

/** What one node runs of one plugin, as the plugin record counts it; both absent: nothing. */
export interface NodeInstances {
  nodeId: string;
  controller?: CSIInfo;
  node?: CSIInfo;
}

/** One job's expectation of one plugin; `expected` undefined: the job no longer declares it. */
export interface JobExpectation {
  namespace: string;
  jobId: string;
  expected: PluginJobExpected | undefined;
}

/** One node's instances of one plugin as the summary counted them, and as they are now. */
export interface InstanceChange {
  before: NodeInstances;
  after: NodeInstances;
}

/** The changes to one plugin summary, applied by applyPluginDelta. */
export interface PluginDelta {
  nodes?: readonly InstanceChange[];
  jobs?: readonly JobExpectation[];
  /**
   * The plugin's Provider / Version once `nodes` are applied (pluginIdentity over every instance,
   * which the store answers from its (plugin, node) index); absent: kept from the summary.
   */
  identity?: { Provider: string; Version: string };
}

/**
 * `node`'s instances of plugin `id`, as the plugin counts them: a down node's are unhealthy
 * (instanceOnNode), and none at all once the server has taken them off (CSIPluginsDetachedAt, set
 * when the node stayed down past the server's bound). A record missing a plugin map (stored before
 * validation on the way in) counts as reporting none.
 */
export function nodeInstances(node: Node | undefined, id: string): NodeInstances {
  const out: NodeInstances = { nodeId: node?.ID ?? "" };
  if (!node) return out;
  if (node.Status === "down" && node.CSIPluginsDetachedAt !== undefined) return out;
  const controller = ownEntry(node.CSIControllerPlugins, id);
  const nodeSide = ownEntry(node.CSINodePlugins, id);
  if (controller) out.controller = instanceOnNode(controller, node.Status);
  if (nodeSide) out.node = instanceOnNode(nodeSide, node.Status);
  return out;
}

/**
 * Per plugin, what a node's update from `prev` to `next` (undefined: absent / deleted) changes of
 * the instances that node counts for: before and after. Plugins whose counted instances stay the
 * same are left out. O(plugins on the node).
 */
export function nodePluginDeltas(
  nodeId: string,
  prev: Node | undefined,
  next: Node | undefined,
): Map<string, InstanceChange> {
  const ids = new Set([
    ...Object.keys(prev?.CSIControllerPlugins ?? {}),
    ...Object.keys(prev?.CSINodePlugins ?? {}),
    ...Object.keys(next?.CSIControllerPlugins ?? {}),
    ...Object.keys(next?.CSINodePlugins ?? {}),
  ]);
  const out = new Map<string, InstanceChange>();
  for (const id of ids) {
    const before = { ...nodeInstances(prev, id), nodeId };
    const after = { ...nodeInstances(next, id), nodeId };
    if (!sameInstances(before, after)) out.set(id, { before, after });
  }
  return out;
}

export function sameInstances(a: NodeInstances, b: NodeInstances): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What one node's instances add to a plugin's counts. */
export function countsOf(i: NodeInstances): PluginInstanceCounts & {
  ControllersHealthy: number;
  NodesHealthy: number;
} {
  return {
    Controllers: i.controller ? 1 : 0,
    Nodes: i.node ? 1 : 0,
    RequireController: requiresController([i.controller, i.node]) ? 1 : 0,
    ControllersHealthy: i.controller?.Healthy ? 1 : 0,
    NodesHealthy: i.node?.Healthy ? 1 : 0,
  };
}

/**
 * The plugins whose use by one job changes from `old` to `next` (jobPluginUses of the job before
 * and after; [] for an absent job): the new use, or undefined where the job stopped declaring it.
 */
export function jobPluginDeltas(
  old: readonly PluginJobUse[],
  next: readonly PluginJobUse[],
): { pluginId: string; use: PluginJobUse | undefined }[] {
  const before = new Map(old.map((u) => [u.pluginId, JSON.stringify(u)]));
  const out: { pluginId: string; use: PluginJobUse | undefined }[] = [];
  const seen = new Set<string>();
  for (const use of next) {
    seen.add(use.pluginId);
    if (before.get(use.pluginId) !== JSON.stringify(use)) out.push({ pluginId: use.pluginId, use });
  }
  for (const pluginId of before.keys()) if (!seen.has(pluginId)) out.push({ pluginId, use: undefined });
  return out;
}

/** The job group a live (placed, not terminal) alloc counts for, "" for none: see expectedOf. */
function liveGroupOf(a: Allocation | undefined): string {
  return a && !isAllocTerminal(a) ? JSON.stringify([a.Namespace, a.JobID, a.TaskGroup]) : "";
}

/**
 * The jobs whose live allocs per group an alloc's update from `prev` to `next` (undefined:
 * absent / deleted) moves. Only a system job's plugins depend on them (expectedOf).
 */
export function allocLiveJobs(
  prev: Allocation | undefined,
  next: Allocation | undefined,
): { namespace: string; jobId: string }[] {
  if (liveGroupOf(prev) === liveGroupOf(next)) return [];
  const out = new Map<string, { namespace: string; jobId: string }>();
  for (const a of [prev, next]) {
    if (a) out.set(JSON.stringify([a.Namespace, a.JobID]), { namespace: a.Namespace, jobId: a.JobID });
  }
  return [...out.values()];
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The jobs' expectations `p` already counts, rebuilt from its ControllerJobs / NodeJobs. */
function expectationsOf(p: CSIPluginSummary | undefined): Map<string, PluginJobExpected> {
  const out = new Map<string, PluginJobExpected>();
  if (!p) return out;
  const sides = [
    ["controller", p.ControllerJobs],
    ["node", p.NodeJobs],
  ] as const;
  for (const [side, jobs] of sides) {
    for (const [namespace, byId] of Object.entries(jobs)) {
      for (const [jobId, d] of Object.entries(byId)) {
        const key = JSON.stringify([namespace, jobId]);
        const e = out.get(key) ?? { namespace, jobId, version: d.Version };
        e[side] = d.Expected;
        out.set(key, e);
      }
    }
  }
  return out;
}

/**
 * Plugin `id`'s summary after `delta`, from its previous summary `prev`: counts moved by each
 * node's change, the job entries the delta names replaced. O(the delta + the plugin's jobs),
 * whatever the number of instances. Returns undefined when nothing changes (no write, no index
 * move), including a plugin that does not exist and would have no instance and no job. A change of
 * any instance is a change of the plugin (its full record shows the instance) even when no count
 * moves. A plugin left with neither instance nor job is returned stamped EmptySince (`nowMs`),
 * kept for the garbage collector.
 */
export function applyPluginDelta(
  prev: CSIPluginSummary | undefined,
  id: string,
  delta: PluginDelta,
  at: { writeIndex: number; nowMs: number },
): CSIPluginSummary | undefined {
  const counts = {
    Controllers: prev?.Instances.Controllers ?? 0,
    Nodes: prev?.Instances.Nodes ?? 0,
    RequireController: prev?.Instances.RequireController ?? 0,
    ControllersHealthy: prev?.ControllersHealthy ?? 0,
    NodesHealthy: prev?.NodesHealthy ?? 0,
  };
  let instancesChanged = false;
  for (const { before, after } of delta.nodes ?? []) {
    if (sameInstances(before, after)) continue;
    instancesChanged = true;
    const b = countsOf(before);
    const a = countsOf(after);
    for (const k of Object.keys(counts) as (keyof typeof counts)[]) counts[k] += a[k] - b[k];
  }
  const jobs = expectationsOf(prev);
  for (const j of delta.jobs ?? []) {
    const key = JSON.stringify([j.namespace, j.jobId]);
    if (j.expected) jobs.set(key, j.expected);
    else jobs.delete(key);
  }
  if (!prev && counts.Controllers === 0 && counts.Nodes === 0 && jobs.size === 0) return undefined;
  // Canonical order (by namespace, then job ID), so an unchanged plugin serialises the same.
  const sortedJobs = [...jobs.values()].sort(
    (a, b) => byString(a.namespace, b.namespace) || byString(a.jobId, b.jobId),
  );
  const { ControllerJobs, NodeJobs } = jobDescriptions(sortedJobs);
  const next: CSIPluginSummary = {
    ID: id,
    Provider: delta.identity?.Provider ?? prev?.Provider ?? "",
    Version: delta.identity?.Version ?? prev?.Version ?? "",
    ControllerRequired: counts.RequireController > 0,
    ControllersHealthy: counts.ControllersHealthy,
    ControllersExpected: totalExpected(ControllerJobs),
    NodesHealthy: counts.NodesHealthy,
    NodesExpected: totalExpected(NodeJobs),
    ControllerJobs,
    NodeJobs,
    EmptySince: 0,
    CreateIndex: prev ? prev.CreateIndex : at.writeIndex,
    ModifyIndex: at.writeIndex,
    Instances: {
      Controllers: counts.Controllers,
      Nodes: counts.Nodes,
      RequireController: counts.RequireController,
    },
  };
  return changedPlugin(prev, stampEmptySince(next, prev, at.nowMs), at.nowMs, instancesChanged);
}

/**
 * `next` stamped with Nomad's CreateTime (kept from `prev`) and ModifyTime (now), or undefined when
 * it says the same as `prev` and `changed` is false (no instance changed): a no-op rebuild writes
 * nothing and moves neither index nor time.
 */
export function changedPlugin<P extends CSIPlugin | CSIPluginSummary>(
  prev: P | undefined,
  next: P,
  nowMs: number,
  changed = false,
): P | undefined {
  const nowNs = nowMs * NS_PER_MS;
  const kept = { ...next, CreateTime: prev?.CreateTime ?? nowNs, ModifyTime: prev?.ModifyTime ?? nowNs };
  if (prev && !changed && contentOf(prev) === contentOf(kept)) return undefined;
  return { ...kept, ModifyTime: nowNs };
}
