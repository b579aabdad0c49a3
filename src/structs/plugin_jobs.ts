/**
 * The jobs that run a CSI plugin, as Nomad's CSIPlugin.ControllerJobs / NodeJobs record them: a job
 * declares a plugin through a task's `csi_plugin` block. The association keeps a plugin record alive
 * while its job exists (e.g. while every instance restarts), so only a plugin with no instance and
 * no job is ever garbage collected. It is also where the plugin's expected instance counts come
 * from (Nomad's CSIPlugin.UpdateExpectedWithJob). Pure.
 */
import { runsOnEveryNode, type Job } from "./job.js";

/** Nomad's JobDescription. */
export interface JobDescription {
  Namespace: string;
  ID: string;
  Version: number;
  /** How many instances of this side of the plugin the job expects to run (see expectedOf). */
  Expected: number;
}

/** Namespace → job ID → description (Nomad's JobDescriptions JSON shape). */
export type JobDescriptions = Record<string, Record<string, JobDescription>>;

/** One job's use of one plugin: which of its task groups run the controller and node sides. */
export interface PluginJobUse {
  pluginId: string;
  namespace: string;
  jobId: string;
  version: number;
  /**
   * A system job runs one alloc per eligible node whatever its groups' Count, so what it expects is
   * the number of its allocs that are placed and not terminal, which the store counts (expectedOf).
   */
  system: boolean;
  /** The declaring groups of each side, group name → Count. A monolith's group is on both sides. */
  controllerGroups: Record<string, number>;
  nodeGroups: Record<string, number>;
}

/**
 * The plugins `job` declares, one entry per plugin ID. A stopped job declares none: it no longer
 * runs the plugin (Nomad drops it from the plugin on stop, too).
 */
export function jobPluginUses(job: Job): PluginJobUse[] {
  if (job.Stop) return [];
  const uses = new Map<string, PluginJobUse>();
  for (const group of job.TaskGroups) {
    for (const task of group.Tasks) {
      const cfg = task.CSIPluginConfig;
      if (!cfg) continue;
      let use = uses.get(cfg.ID);
      if (!use) {
        use = {
          pluginId: cfg.ID,
          namespace: job.Namespace,
          jobId: job.ID,
          version: job.Version,
          system: runsOnEveryNode(job.Type),
          controllerGroups: {},
          nodeGroups: {},
        };
        uses.set(cfg.ID, use);
      }
      if (cfg.Type !== "node") use.controllerGroups[group.Name] = group.Count;
      if (cfg.Type !== "controller") use.nodeGroups[group.Name] = group.Count;
    }
  }
  return [...uses.values()];
}

/** One job's expectation of one plugin: instances per side, absent for a side the job does not run. */
export interface PluginJobExpected {
  namespace: string;
  jobId: string;
  version: number;
  controller?: number;
  node?: number;
}

/**
 * What `use` expects of each side, as Nomad's UpdateExpectedWithJob counts it: a service or batch
 * job the Count of each declaring group; a system job the allocs of each declaring group that are
 * placed and not terminal, `liveAllocs` (group name → count; only read for system jobs).
 */
export function expectedOf(
  use: PluginJobUse,
  liveAllocs: Readonly<Record<string, number>>,
): PluginJobExpected {
  const sum = (groups: Record<string, number>): number | undefined => {
    const names = Object.keys(groups);
    if (names.length === 0) return undefined;
    let n = 0;
    for (const name of names) n += use.system ? (liveAllocs[name] ?? 0) : (groups[name] ?? 0);
    return n;
  };
  const controller = sum(use.controllerGroups);
  const node = sum(use.nodeGroups);
  return {
    namespace: use.namespace,
    jobId: use.jobId,
    version: use.version,
    controller,
    node,
  };
}

/**
 * The ControllerJobs and NodeJobs of one plugin from the expectations of every job that declares
 * it. A job is listed on each side it runs, even while it expects 0 there (a system job with no
 * eligible node yet, a group scaled to 0), as Nomad lists it.
 */
export function jobDescriptions(expected: readonly PluginJobExpected[]): {
  ControllerJobs: JobDescriptions;
  NodeJobs: JobDescriptions;
} {
  const ControllerJobs: JobDescriptions = {};
  const NodeJobs: JobDescriptions = {};
  const add = (into: JobDescriptions, e: PluginJobExpected, n: number) => {
    const ns = (into[e.namespace] ??= {});
    ns[e.jobId] = { Namespace: e.namespace, ID: e.jobId, Version: e.version, Expected: n };
  };
  for (const e of expected) {
    if (e.controller !== undefined) add(ControllerJobs, e, e.controller);
    if (e.node !== undefined) add(NodeJobs, e, e.node);
  }
  return { ControllerJobs, NodeJobs };
}

/** The sum of the Expected of every job in `jobs`: the plugin's ControllersExpected / NodesExpected. */
export function totalExpected(jobs: JobDescriptions): number {
  let n = 0;
  for (const byId of Object.values(jobs)) for (const d of Object.values(byId)) n += d.Expected;
  return n;
}
