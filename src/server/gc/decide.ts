/**
 * What the garbage collector may remove, pure. Ages are measured from the record's own clock
 * (an alloc's ModifyTime, a down node's StatusUpdatedAt), so a restarted server keeps them.
 *
 * - An alloc goes once it is terminal, older than the threshold, holds no claim on any volume, and
 *   nothing will look at it again: its job is stopped or purged, or it is `lost` (already
 *   replaced). Terminal allocs of live jobs otherwise stay: a batch job's completed allocs are what
 *   tells the scheduler not to run them again.
 * - A node goes once it has been down longer than the threshold and runs nothing unfinished. Its
 *   plugin instances go with it (the store rebuilds the plugins), and the volumewatcher releases
 *   any claim left on it as it does for a down node.
 * - A plugin goes once it has had no instance on any node and no job declaring it for at least
 *   the threshold (its EmptySince, stamped by the store; 0 by default, as in Nomad): a plugin whose
 *   job is only restarting its tasks is never empty (the job declares it), so it keeps its record,
 *   and so do the volumes' Schedulable and the counts people watch.
 * - An evaluation goes once its job is gone (purged) and it has not changed for longer than the
 *   threshold (its ModifyTime): what it explains no longer exists. A live job keeps its last few
 *   (the scheduler prunes older ones).
 * - A deployment goes once it is terminal (successful, failed or cancelled), has not changed for
 *   longer than the threshold (its ModifyTime; Nomad's deployment_gc_threshold, 1 h) and every alloc
 *   that names it is terminal in Nomad's sense (desired to stop, or done on its node), as Nomad's
 *   core scheduler's deploymentGC decides. A purged job's deployments go with the job (the store's
 *   deleteJob), as in Nomad's DeleteJobTxn.
 * - A job goes (Nomad's job GC, `job_gc_threshold` 4 h) once it is dead and either stopped, or a
 *   batch or sysbatch job that is not a periodic or parameterized parent; every alloc of it is
 *   terminal and holds no claim, none of its evals is pending or blocked, and nothing of it changed
 *   for longer than the threshold (its SubmitTime, its allocs' and evals' ModifyTime). Its allocs,
 *   evals and deployments then go as those of a purged job.
 */
import { isAllocTerminal, isClientTerminal, type Allocation } from "../../structs/alloc.js";
import { isDeploymentActive, type Deployment } from "../../structs/deployment.js";
import type { Evaluation } from "../../structs/eval.js";
import { NS_PER_MS, type Job } from "../../structs/job.js";
import type { Node } from "../../structs/node.js";
import { isPluginEmpty, type CSIPlugin, type PluginEmptiness } from "../../structs/plugin.js";

export function allocCollectable(
  alloc: Pick<Allocation, "ClientStatus" | "DesiredStatus" | "ModifyTime">,
  job: Pick<Job, "Stop"> | undefined,
  holdsClaim: boolean,
  nowMs: number,
  thresholdMs: number,
): boolean {
  if (!isAllocTerminal(alloc) || holdsClaim) return false;
  if (job !== undefined && !job.Stop && alloc.ClientStatus !== "lost") return false;
  return nowMs - alloc.ModifyTime / NS_PER_MS >= thresholdMs;
}

export function nodeCollectable(
  node: Pick<Node, "Status" | "StatusUpdatedAt">,
  allocs: Pick<Allocation, "ClientStatus" | "DesiredStatus">[],
  nowMs: number,
  thresholdMs: number,
): boolean {
  if (node.Status !== "down") return false;
  if (nowMs - node.StatusUpdatedAt < thresholdMs) return false;
  return allocs.every((a) => isAllocTerminal(a));
}

export function pluginCollectable(
  plugin: PluginEmptiness & Pick<CSIPlugin, "EmptySince">,
  nowMs: number,
  thresholdMs: number,
): boolean {
  if (!isPluginEmpty(plugin) || plugin.EmptySince <= 0) return false;
  return nowMs - plugin.EmptySince >= thresholdMs;
}

export function evalCollectable(
  ev: Pick<Evaluation, "ModifyTime">,
  jobExists: boolean,
  nowMs: number,
  thresholdMs: number,
): boolean {
  return !jobExists && nowMs - ev.ModifyTime / NS_PER_MS >= thresholdMs;
}

export function deploymentCollectable(
  d: Pick<Deployment, "Status" | "ModifyTime">,
  allocs: Pick<Allocation, "ClientStatus" | "DesiredStatus">[],
  nowMs: number,
  thresholdMs: number,
): boolean {
  if (isDeploymentActive(d) || nowMs - d.ModifyTime / NS_PER_MS < thresholdMs) return false;
  // Nomad's Allocation.TerminalStatus: an alloc told to stop counts, even before its node stops it.
  return allocs.every((a) => a.DesiredStatus !== "run" || isClientTerminal(a.ClientStatus));
}

export function jobCollectable(
  job: Pick<Job, "Status" | "Stop" | "Type" | "Periodic" | "ParameterizedJob" | "SubmitTime">,
  allocs: { alloc: Pick<Allocation, "ClientStatus" | "DesiredStatus" | "ModifyTime">; holdsClaim: boolean }[],
  evals: Pick<Evaluation, "Status" | "ModifyTime">[],
  nowMs: number,
  thresholdMs: number,
): boolean {
  if (job.Status !== "dead") return false;
  const launcher = (job.Periodic?.Enabled ?? false) || Boolean(job.ParameterizedJob);
  const batch = (job.Type === "batch" || job.Type === "sysbatch") && !launcher;
  if (!job.Stop && !batch) return false;
  if (allocs.some(({ alloc, holdsClaim }) => holdsClaim || !isAllocTerminal(alloc))) return false;
  if (evals.some((e) => e.Status === "pending" || e.Status === "blocked")) return false;
  let changedNs = job.SubmitTime;
  for (const { alloc } of allocs) changedNs = Math.max(changedNs, alloc.ModifyTime);
  for (const e of evals) changedNs = Math.max(changedNs, e.ModifyTime);
  return nowMs - changedNs / NS_PER_MS >= thresholdMs;
}
