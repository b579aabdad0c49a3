/**
 * CSI plugins as the server sees them: one record per plugin ID, built from the fingerprints the
 * node agents report and the jobs that declare the plugin. buildPlugin is the definition of every
 * derived field (health counts from the per-node entries, expected counts from the job
 * descriptions); the store keeps a small summary (CSIPluginSummary) moved by delta
 * (derive_plugins.ts) and the instances apart, and a property test checks that any sequence of
 * deltas yields what buildPlugin would from scratch.
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
  if (status !== "down" && status !== "disconnected") return info;
  return { ...info, Healthy: false, HealthDescription: NODE_DOWN_HEALTH };
}

/**
 * How many nodes run each side of a plugin (healthy or not: the sizes of the full record's
 * Controllers / Nodes maps), and how many of those nodes' instances say volumes go through
 * ControllerPublish (see buildPlugin). Kept on the summary so a delta can move them by ±1.
 */
export interface PluginInstanceCounts {
  Controllers: number;
  Nodes: number;
  RequireController: number;
}

/**
 * A plugin without its per-node maps: what the store keeps in the plugin's own row, updated by
 * delta, and what every hot path (volume views, claims, feasibility, lists, GC) reads; O(1) in
 * the size of the cluster. The full record (CSIPlugin) adds the instances, kept one row per
 * (plugin, node). `Instances` is server bookkeeping, never in API answers.
 */
export interface CSIPluginSummary extends Omit<CSIPlugin, "Controllers" | "Nodes"> {
  Instances: PluginInstanceCounts;
}

/** A summary or a full record: either tells whether the plugin has instances and jobs. */
export type PluginEmptiness = Pick<CSIPlugin, "ControllerJobs" | "NodeJobs"> &
  (Pick<CSIPluginSummary, "Instances"> | Pick<CSIPlugin, "Controllers" | "Nodes">);

/** No instance on any node and no job that declares it: a candidate for garbage collection. */
export function isPluginEmpty(p: PluginEmptiness): boolean {
  const [controllers, nodes] =
    "Instances" in p
      ? [p.Instances.Controllers, p.Instances.Nodes]
      : [Object.keys(p.Controllers).length, Object.keys(p.Nodes).length];
  return (
    controllers === 0 &&
    nodes === 0 &&
    Object.keys(p.ControllerJobs).length === 0 &&
    Object.keys(p.NodeJobs).length === 0
  );
}

/** Whether one node's instances make the plugin require a controller (buildPlugin's rule). */
export function requiresController(instances: readonly (CSIInfo | undefined)[]): boolean {
  // Whether volumes go through ControllerPublish is read from the instances on nodes that are
  // not down (healthy or not: a controller restarting on a live node still speaks for the
  // plugin). A departed node's "supports attach/detach" never gates claims or releases: with
  // it, every claim would wait for a controller that cannot answer and every release would
  // fail on a ControllerUnpublish nothing can take, until the node's record is collected.
  return instances.some(
    (info) =>
      info !== undefined &&
      !isDownNodeInstance(info) &&
      info.RequiresControllerPlugin &&
      info.ControllerInfo?.SupportsAttachDetach === true,
  );
}

/**
 * The summary of a full record: its maps replaced by their counts. Fields in the order the store's
 * deltas write them (times last), so the same content serialises the same.
 */
export function summaryOf(p: CSIPlugin): CSIPluginSummary {
  const { Controllers, Nodes, CreateTime, ModifyTime, ...rest } = p;
  const ids = new Set([...Object.keys(Controllers), ...Object.keys(Nodes)]);
  let require = 0;
  for (const id of ids) if (requiresController([Controllers[id], Nodes[id]])) require++;
  return {
    ...rest,
    Instances: {
      Controllers: Object.keys(Controllers).length,
      Nodes: Object.keys(Nodes).length,
      RequireController: require,
    },
    CreateTime,
    ModifyTime,
  };
}

/** The full record from a summary and the plugin's instances, in CSIPlugin's field order. */
export function withInstances(
  s: CSIPluginSummary,
  Controllers: Record<string, CSIInfo>,
  Nodes: Record<string, CSIInfo>,
): CSIPlugin {
  const { Instances: _counts, ID, Provider, Version, ControllerRequired, ...rest } = s;
  return { ID, Provider, Version, ControllerRequired, Controllers, Nodes, ...rest };
}

/** `next` with EmptySince carried from `prev` while it stays empty, `nowMs` when it just became so. */
export function stampEmptySince<P extends PluginEmptiness & Pick<CSIPlugin, "EmptySince">>(
  next: P,
  prev: Pick<CSIPlugin, "EmptySince"> | undefined,
  nowMs: number,
): P {
  if (!isPluginEmpty(next)) return { ...next, EmptySince: 0 };
  return { ...next, EmptySince: prev && prev.EmptySince > 0 ? prev.EmptySince : nowMs };
}

export function isPluginType(v: unknown): v is CSIPluginType {
  return typeof v === "string" && (PLUGIN_TYPES as readonly string[]).includes(v);
}

/** What one node's instances say of the plugin's Provider / Version: the node side's, else the controller's. */
export function instanceIdentity(e: { controller?: CSIInfo; node?: CSIInfo }): {
  Provider: string;
  Version: string;
} {
  return {
    Provider: e.node?.Provider || e.controller?.Provider || "",
    Version: e.node?.ProviderVersion || e.controller?.ProviderVersion || "",
  };
}

/**
 * The plugin's Provider and Version: each that of the instance on the greatest node ID that
 * reports one (`entries` in node ID order). A rule a store can answer from an index on
 * (plugin, node) without reading every instance.
 */
export function pluginIdentity(entries: readonly { controller?: CSIInfo; node?: CSIInfo }[]): {
  Provider: string;
  Version: string;
} {
  let Provider = "";
  let Version = "";
  for (const e of entries) {
    const id = instanceIdentity(e);
    if (id.Provider) Provider = id.Provider;
    if (id.Version) Version = id.Version;
  }
  return { Provider, Version };
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
  let controllerRequired = false;
  for (const e of entries) {
    if (e.controller) Controllers[e.nodeId] = e.controller;
    if (e.node) Nodes[e.nodeId] = e.node;
    if (requiresController([e.controller, e.node])) controllerRequired = true;
  }
  const healthy = (m: Record<string, CSIInfo>) => Object.values(m).filter((i) => i.Healthy).length;
  const { ControllerJobs, NodeJobs } = jobDescriptions(jobs);
  const { Provider, Version } = pluginIdentity(entries);
  return {
    ID: id,
    Provider,
    Version,
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
