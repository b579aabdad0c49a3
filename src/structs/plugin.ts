/**
 * CSI plugins as the server sees them: one record per plugin ID, built from the fingerprints the
 * node agents report and the jobs that declare the plugin. Health counts are derived from the
 * per-node entries and expected counts from the job descriptions, never stored apart from them,
 * so they cannot drift.
 */
import type { NodeStatus } from "./node.js";
import { PLUGIN_TYPES, type CSIInfo, type CSIPluginType } from "./csi_terms.js";
import {
  jobDescriptions,
  totalExpected,
  type JobDescriptions,
  type PluginJobExpected,
} from "./plugin_jobs.js";

export {
  PLUGIN_TYPES,
  type CSIControllerInfo,
  type CSIInfo,
  type CSINodeInfo,
  type CSIPluginType,
} from "./csi_terms.js";

export interface CSIPlugin {
  ID: string;
  Provider: string;
  Version: string;
  /** RequiresControllerPlugin && SupportsAttachDetach: volumes go through ControllerPublish. */
  ControllerRequired: boolean;
  /** Keyed by node ID. */
  Controllers: Record<string, CSIInfo>;
  Nodes: Record<string, CSIInfo>;
  /** Instances in Controllers / Nodes that are healthy. */
  ControllersHealthy: number;
  /**
   * How many instances the jobs that declare the plugin expect to run (the sum of ControllerJobs' /
   * NodeJobs' Expected), not how many report: an instance that died leaves Healthy below Expected.
   * 0 for instances no job declares.
   */
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
  /** The jobs whose tasks run the plugin's controller / node side (plugin_jobs.ts). */
  ControllerJobs: JobDescriptions;
  NodeJobs: JobDescriptions;
  /**
   * Unix milliseconds since which the plugin has had no instance and no job (0 while it has one):
   * the garbage collector removes it once that is older than its threshold. Not in API answers.
   */
  EmptySince: number;
  CreateIndex: number;
  ModifyIndex: number;
  /**
   * Unix nanoseconds (Nomad's int64) when the record was first written and last changed. Optional:
   * records stored before berth kept them read as absent (the answer then says 0).
   */
  CreateTime?: number;
  ModifyTime?: number;
}

export const NODE_DOWN_HEALTH = "node is down";

/**
 * An entry instanceOnNode marked: its node is down. Such an entry is kept on the record (people
 * see the controller they lost, until the server's bound takes it off) but it never says what the
 * plugin requires: see buildPlugin.
 */
export function isDownNodeInstance(info: CSIInfo): boolean {
  return !info.Healthy && info.HealthDescription === NODE_DOWN_HEALTH;
}

/**
 * The instance as the plugin record counts it: an instance on a down node is unhealthy whatever
 * its last fingerprint said (nothing can reach it), and healthy again as reported once the node is
 * back. The node's own record keeps the fingerprint unchanged.
 */
export function instanceOnNode(info: CSIInfo, status: NodeStatus): CSIInfo {
  if (status !== "down") return info;
  return { ...info, Healthy: false, HealthDescription: NODE_DOWN_HEALTH };
}

/** No instance on any node and no job that declares it: a candidate for garbage collection. */
export function isPluginEmpty(
  p: Pick<CSIPlugin, "Controllers" | "Nodes" | "ControllerJobs" | "NodeJobs">,
): boolean {
  return (
    Object.keys(p.Controllers).length === 0 &&
    Object.keys(p.Nodes).length === 0 &&
    Object.keys(p.ControllerJobs).length === 0 &&
    Object.keys(p.NodeJobs).length === 0
  );
}

/** `next` with EmptySince carried from `prev` while it stays empty, `nowMs` when it just became so. */
export function stampEmptySince(next: CSIPlugin, prev: CSIPlugin | undefined, nowMs: number): CSIPlugin {
  if (!isPluginEmpty(next)) return { ...next, EmptySince: 0 };
  return { ...next, EmptySince: prev && prev.EmptySince > 0 ? prev.EmptySince : nowMs };
}

export function isPluginType(v: unknown): v is CSIPluginType {
  return typeof v === "string" && (PLUGIN_TYPES as readonly string[]).includes(v);
}

/**
 * Rebuilds a plugin record from every node's fingerprint entries for it and the jobs that declare
 * it. `entries` holds, per node, the controller and node instances that node reports (either may be
 * absent), as the record counts them (instanceOnNode); `jobs` what each declaring job expects
 * (expectedOf). EmptySince is left 0 (see stampEmptySince).
 */
export function buildPlugin(
  id: string,
  entries: { nodeId: string; controller?: CSIInfo; node?: CSIInfo }[],
  jobs: readonly PluginJobExpected[],
  stamps: { CreateIndex: number; ModifyIndex: number; CreateTime?: number; ModifyTime?: number },
): CSIPlugin {
  const Controllers: Record<string, CSIInfo> = {};
  const Nodes: Record<string, CSIInfo> = {};
  let provider = "";
  let version = "";
  let controllerRequired = false;
  for (const e of entries) {
    for (const info of [e.controller, e.node]) {
      if (!info) continue;
      if (info.Provider) provider = info.Provider;
      if (info.ProviderVersion) version = info.ProviderVersion;
    }
    if (e.controller) Controllers[e.nodeId] = e.controller;
    if (e.node) Nodes[e.nodeId] = e.node;
    // Whether volumes go through ControllerPublish is read from the instances on nodes that are
    // not down (healthy or not: a controller restarting on a live node still speaks for the
    // plugin). A departed node's "supports attach/detach" never gates claims or releases: with
    // it, every claim would wait for a controller that cannot answer and every release would
    // fail on a ControllerUnpublish nothing can take, until the node's record is collected.
    for (const info of [e.controller, e.node]) {
      if (!info || isDownNodeInstance(info)) continue;
      if (info.RequiresControllerPlugin && info.ControllerInfo?.SupportsAttachDetach)
        controllerRequired = true;
    }
  }
  const healthy = (m: Record<string, CSIInfo>) => Object.values(m).filter((i) => i.Healthy).length;
  const { ControllerJobs, NodeJobs } = jobDescriptions(jobs);
  return {
    ID: id,
    Provider: provider,
    Version: version,
    ControllerRequired: controllerRequired,
    Controllers,
    Nodes,
    ControllersHealthy: healthy(Controllers),
    ControllersExpected: totalExpected(ControllerJobs),
    NodesHealthy: healthy(Nodes),
    NodesExpected: totalExpected(NodeJobs),
    ControllerJobs,
    NodeJobs,
    EmptySince: 0,
    ...stamps,
  };
}
