/**
 * The deployment watcher's decisions for one active deployment (Nomad's deploymentwatcher, with the
 * alloc health berth's servers judge themselves: structs/deployment.ts judgeHealth). Pure:
 *
 * - every alloc of the deployment whose health is undecided is judged from its task states;
 * - each group's counters (PlacedAllocs, HealthyAllocs, UnhealthyAllocs, PlacedCanaries) follow the
 *   allocs; RequireProgressBy moves to now + ProgressDeadline at the first placement and whenever an
 *   alloc turns healthy;
 * - an unhealthy alloc fails the deployment, and so does a group that makes no progress by its
 *   deadline; a group with AutoRevert then rolls the job back to its newest stable version;
 * - canaries are promoted when every group waiting for promotion has auto_promote and all its
 *   canaries are healthy;
 * - the deployment succeeds once every group is promoted (or had no canaries) and has DesiredTotal
 *   healthy allocs.
 */
import { allocTaskGroup, type Allocation } from "../../structs/alloc.js";
import {
  allocHealth,
  awaitsPromotion,
  DEPLOYMENT_DESC,
  isCanary,
  isDeploymentActive,
  judgeHealth,
  rollbackDescription,
  ZERO_TIME,
  type Deployment,
  type DeploymentState,
} from "../../structs/deployment.js";
import type { Job } from "../../structs/job.js";

export interface WatchInput {
  deployment: Deployment;
  /** The job's allocs that belong to the deployment (DeploymentID). */
  allocs: Allocation[];
  /** The job's stored versions, newest first (auto_revert's candidates). */
  versions: Job[];
  nowMs: number;
}

export interface WatchDecision {
  /** Allocs whose deployment health was decided now. */
  health: { alloc: Allocation; healthy: boolean }[];
  /** The deployment as it should be stored (the same object when nothing changed). */
  deployment: Deployment;
  /** The job version to roll back to (auto_revert of a failed deployment), or null. */
  revertTo: number | null;
  /** When (unix ms) to look again without a state change, or null. */
  wakeAtMs: number | null;
}

const rfc3339 = (ms: number) => new Date(ms).toISOString();

/** Each alloc's health, judging the undecided ones now (into `out.health`; a later look into `wake`). */
function judgeAll(
  input: WatchInput,
  out: WatchDecision,
  wake: (ms: number) => void,
): Map<string, boolean | null> {
  const healthOf = new Map<string, boolean | null>();
  for (const a of input.allocs) {
    let h = allocHealth(a);
    const u = allocTaskGroup(a)?.Update;
    if (h === null && u && a.DesiredStatus === "run") {
      const j = judgeHealth(a, u, input.nowMs);
      if (j && "healthy" in j) {
        h = j.healthy;
        out.health.push({ alloc: a, healthy: h });
      } else if (j) wake(j.recheckAtMs);
    }
    healthOf.set(a.ID, h);
  }
  return healthOf;
}

/** Each group's counters from its allocs; RequireProgressBy moves on when the group progressed. */
function countGroups(input: WatchInput, healthOf: ReadonlyMap<string, boolean | null>) {
  const groups: Record<string, DeploymentState> = {};
  for (const [name, s] of Object.entries(input.deployment.TaskGroups)) {
    const mine = input.allocs.filter((a) => a.TaskGroup === name);
    const healthy = mine.filter((a) => healthOf.get(a.ID) === true).length;
    const next: DeploymentState = {
      ...s,
      PlacedCanaries: mine.filter(isCanary).map((a) => a.ID),
      PlacedAllocs: mine.length,
      HealthyAllocs: healthy,
      UnhealthyAllocs: mine.filter((a) => healthOf.get(a.ID) === false).length,
    };
    const progressed = healthy > s.HealthyAllocs || (s.RequireProgressBy === ZERO_TIME && mine.length > 0);
    if (progressed && s.ProgressDeadline > 0)
      next.RequireProgressBy = rfc3339(input.nowMs + s.ProgressDeadline / 1e6);
    groups[name] = next;
  }
  return groups;
}

const done = (s: DeploymentState) => !awaitsPromotion(s) && s.HealthyAllocs >= s.DesiredTotal;

/** Why the deployment fails now (an unhealthy alloc, a missed progress deadline), or null. */
function failureOf(
  states: readonly DeploymentState[],
  nowMs: number,
  wake: (ms: number) => void,
): string | null {
  if (states.some((s) => s.UnhealthyAllocs > 0)) return DEPLOYMENT_DESC.failedAllocations;
  for (const s of states) {
    if (done(s) || s.RequireProgressBy === ZERO_TIME || s.ProgressDeadline === 0) continue;
    const by = Date.parse(s.RequireProgressBy);
    if (nowMs >= by) return DEPLOYMENT_DESC.progressDeadline;
    wake(by);
  }
  return null;
}

/**
 * A running deployment that did not fail: its auto_promote groups promoted once all their canaries
 * are healthy (`states` are updated in place), and its status once every group is done.
 */
function progress(
  d: Deployment,
  states: readonly DeploymentState[],
  healthOf: ReadonlyMap<string, boolean | null>,
): Pick<Deployment, "Status" | "StatusDescription"> {
  let status = d.Status;
  let description = d.StatusDescription;
  const waiting = states.filter(awaitsPromotion);
  const ready = (s: DeploymentState) =>
    s.AutoPromote && s.PlacedCanaries.filter((id) => healthOf.get(id) === true).length >= s.DesiredCanaries;
  if (waiting.length > 0 && waiting.every(ready)) {
    for (const s of waiting) s.Promoted = true;
    description = DEPLOYMENT_DESC.running;
  }
  if (states.every(done)) {
    status = "successful";
    description = DEPLOYMENT_DESC.successful;
  }
  return { Status: status, StatusDescription: description };
}

export function decideDeployment(input: WatchInput): WatchDecision {
  const { deployment: d, nowMs } = input;
  const out: WatchDecision = { health: [], deployment: d, revertTo: null, wakeAtMs: null };
  if (!isDeploymentActive(d)) return out;
  const wake = (ms: number) => {
    if (out.wakeAtMs === null || ms < out.wakeAtMs) out.wakeAtMs = ms;
  };
  const healthOf = judgeAll(input, out, wake);
  const groups = countGroups(input, healthOf);
  const states = Object.values(groups);
  let status: Pick<Deployment, "Status" | "StatusDescription"> = {
    Status: d.Status,
    StatusDescription: d.StatusDescription,
  };
  const failure = failureOf(states, nowMs, wake);
  if (d.Status === "running" && failure) {
    status = { Status: "failed", StatusDescription: failure };
    if (states.some((s) => s.AutoRevert)) {
      const stable = input.versions.find((v) => v.Stable === true && v.Version < d.JobVersion);
      out.revertTo = stable ? stable.Version : null;
      status.StatusDescription = rollbackDescription(failure, out.revertTo);
    }
  } else if (d.Status === "running") status = progress(d, states, healthOf);
  const next: Deployment = { ...d, TaskGroups: groups, ...status };
  if (JSON.stringify(next) !== JSON.stringify(d)) out.deployment = { ...next, ModifyTime: nowMs * 1e6 };
  return out;
}
