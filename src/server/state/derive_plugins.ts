/**
 * The plugin derivation every StateStore runs inside its write transactions, as deltas: one node
 * update, one job change or one system job's live allocs moving changes only the plugin records
 * they name, each patched from its previous record, never a table rebuilt. Pure: no store, no I/O.
 * A store supplies what it alone can count (a system job's live allocs per group) and writes back
 * the records these functions return.
 *
 * The previous plugin record is the source of truth for the instances and jobs it already counts
 * (its Controllers / Nodes and ControllerJobs / NodeJobs): a delta replaces one node's or one job's
 * entry, and the record is rebuilt from the result (buildPlugin), so counts cannot drift.
 */
import { isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import { ownEntry, type Node } from "../../structs/node.js";
import {
  buildPlugin,
  instanceOnNode,
  stampEmptySince,
  type CSIInfo,
  type CSIPlugin,
} from "../../structs/plugin.js";
import type { PluginJobExpected, PluginJobUse } from "../../structs/plugin_jobs.js";
import { contentOf } from "./records.js";
import { NS_PER_MS } from "../../structs/job.js";

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

/** The changes to one plugin record, applied by applyPluginDelta. */
export interface PluginDelta {
  nodes?: readonly NodeInstances[];
  jobs?: readonly JobExpectation[];
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
 * the instances that node counts for. Plugins whose counted instances stay the same are left out.
 */
export function nodePluginDeltas(
  nodeId: string,
  prev: Node | undefined,
  next: Node | undefined,
): Map<string, NodeInstances> {
  const ids = new Set([
    ...Object.keys(prev?.CSIControllerPlugins ?? {}),
    ...Object.keys(prev?.CSINodePlugins ?? {}),
    ...Object.keys(next?.CSIControllerPlugins ?? {}),
    ...Object.keys(next?.CSINodePlugins ?? {}),
  ]);
  const out = new Map<string, NodeInstances>();
  for (const id of ids) {
    const before = { ...nodeInstances(prev, id), nodeId };
    const after = { ...nodeInstances(next, id), nodeId };
    if (JSON.stringify(before) !== JSON.stringify(after)) out.set(id, after);
  }
  return out;
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
function expectationsOf(p: CSIPlugin | undefined): Map<string, PluginJobExpected> {
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
 * Plugin `id` after `delta`, from its previous record `prev`: the node and job entries the delta
 * names replaced, the rest kept. Returns undefined when nothing changes (no write, no index move),
 * including a plugin that does not exist and would have no instance and no job. A plugin left with
 * neither is returned stamped EmptySince (`nowMs`), kept for the garbage collector.
 */
export function applyPluginDelta(
  prev: CSIPlugin | undefined,
  id: string,
  delta: PluginDelta,
  at: { writeIndex: number; nowMs: number },
): CSIPlugin | undefined {
  const entries = new Map<string, { controller?: CSIInfo; node?: CSIInfo }>();
  for (const [nodeId, info] of Object.entries(prev?.Controllers ?? {}))
    entries.set(nodeId, { controller: info });
  for (const [nodeId, info] of Object.entries(prev?.Nodes ?? {})) {
    entries.set(nodeId, { ...entries.get(nodeId), node: info });
  }
  for (const n of delta.nodes ?? []) {
    if (n.controller || n.node) {
      entries.set(n.nodeId, {
        ...(n.controller ? { controller: n.controller } : {}),
        ...(n.node ? { node: n.node } : {}),
      });
    } else {
      entries.delete(n.nodeId);
    }
  }
  const jobs = expectationsOf(prev);
  for (const j of delta.jobs ?? []) {
    const key = JSON.stringify([j.namespace, j.jobId]);
    if (j.expected) jobs.set(key, j.expected);
    else jobs.delete(key);
  }
  if (!prev && entries.size === 0 && jobs.size === 0) return undefined;
  // Canonical order (by node ID; by namespace, then job ID), so an unchanged plugin serialises the same.
  const sortedEntries = [...entries]
    .sort(([a], [b]) => byString(a, b))
    .map(([nodeId, e]) => ({ nodeId, ...e }));
  const sortedJobs = [...jobs.values()].sort(
    (a, b) => byString(a.namespace, b.namespace) || byString(a.jobId, b.jobId),
  );
  const built = buildPlugin(id, sortedEntries, sortedJobs, {
    CreateIndex: prev ? prev.CreateIndex : at.writeIndex,
    ModifyIndex: at.writeIndex,
  });
  return changedPlugin(prev, stampEmptySince(built, prev, at.nowMs), at.nowMs);
}

/**
 * `next` stamped with Nomad's CreateTime (kept from `prev`) and ModifyTime (now), or undefined when
 * it says the same as `prev`: a no-op rebuild writes nothing and moves neither index nor time.
 */
export function changedPlugin(
  prev: CSIPlugin | undefined,
  next: CSIPlugin,
  nowMs: number,
): CSIPlugin | undefined {
  const nowNs = nowMs * NS_PER_MS;
  const kept = { ...next, CreateTime: prev?.CreateTime ?? nowNs, ModifyTime: prev?.ModifyTime ?? nowNs };
  if (prev && contentOf(prev) === contentOf(kept)) return undefined;
  return { ...kept, ModifyTime: nowNs };
}
