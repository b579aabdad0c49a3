/**
 * The jobs that run a CSI plugin, as Nomad's CSIPlugin.ControllerJobs / NodeJobs record them: a job
 * declares a plugin through a task's `csi_plugin` block. The association keeps a plugin record alive
 * while its job exists (e.g. while every instance restarts), so only a plugin with no instance and
 * no job is ever garbage collected. Pure.
 */
import type { Job } from "./job.js";

/** Nomad's JobDescription. */
export interface JobDescription {
  Namespace: string;
  ID: string;
  Version: number;
  /** How many allocs of the job run this side of the plugin (the count of each declaring group). */
  Expected: number;
}

/** Namespace → job ID → description (Nomad's JobDescriptions JSON shape). */
export type JobDescriptions = Record<string, Record<string, JobDescription>>;

/** One job's use of one plugin: how many allocs run its controller and node sides. */
export interface PluginJobUse {
  pluginId: string;
  namespace: string;
  jobId: string;
  version: number;
  controllerExpected: number;
  nodeExpected: number;
}

/**
 * The plugins `job` declares, one entry per plugin ID. A stopped job declares none: it no longer
 * runs the plugin (Nomad drops it from the plugin on stop, too). A monolith counts on both sides.
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
          controllerExpected: 0,
          nodeExpected: 0,
        };
        uses.set(cfg.ID, use);
      }
      if (cfg.Type !== "node") use.controllerExpected += group.Count;
      if (cfg.Type !== "controller") use.nodeExpected += group.Count;
    }
  }
  return [...uses.values()];
}

/** The ControllerJobs and NodeJobs of one plugin from the uses of every job that declares it. */
export function jobDescriptions(uses: readonly PluginJobUse[]): {
  ControllerJobs: JobDescriptions;
  NodeJobs: JobDescriptions;
} {
  const ControllerJobs: JobDescriptions = {};
  const NodeJobs: JobDescriptions = {};
  const add = (into: JobDescriptions, u: PluginJobUse, expected: number) => {
    const ns = (into[u.namespace] ??= {});
    ns[u.jobId] = { Namespace: u.namespace, ID: u.jobId, Version: u.version, Expected: expected };
  };
  for (const u of uses) {
    if (u.controllerExpected > 0) add(ControllerJobs, u, u.controllerExpected);
    if (u.nodeExpected > 0) add(NodeJobs, u, u.nodeExpected);
  }
  return { ControllerJobs, NodeJobs };
}
