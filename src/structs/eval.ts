/**
 * Evaluations: Nomad's record of one scheduler pass over a job, with the placement metrics
 * (AllocMetric) that say why allocs found no node. Pure.
 *
 * Status follows Nomad. The pass that a trigger starts (a job registered, a node lost, ...) ends
 * `complete`; when some allocs found no node it carries FailedTGAllocs and names in BlockedEval a
 * second eval, `blocked`, TriggeredBy `queued-allocs`, that stands for the work still queued (at
 * most one per job: a newer one cancels the older). The scheduler re-runs the blocked eval itself
 * when capacity may have appeared: it stays `blocked` (its FailedTGAllocs refreshed) until
 * everything is placed, then turns `complete`; a later trigger that places everything cancels it.
 */
import type { Job, JobType } from "./job.js";
import type { Node } from "./node.js";

/**
 * Nomad's statuses. A pass runs to its end in one txn, so the only `pending` evals are delayed
 * follow-ups (WaitUntil set, TriggeredBy `alloc-failure`) that replace failed allocs when their
 * reschedule delay ends; berth records no `failed` evals.
 */
export type EvalStatus = "pending" | "blocked" | "complete" | "failed" | "cancelled";

/** Nomad's EvalTrigger values that berth's callers use. */
export type EvalTrigger =
  | "job-register"
  | "job-deregister"
  | "node-update"
  | "node-drain"
  | "alloc-stop"
  | "alloc-failure"
  | "queued-allocs"
  | "deployment-watcher"
  | "max-disconnect-timeout"
  | "reconnect"
  | "periodic-job"
  | "job-scaling";

/** Nomad's AllocMetric for one task group's placement attempt. */
export interface AllocMetric {
  /** Nodes placement tried (ready, eligible, in one of the job's datacenters). */
  NodesEvaluated: number;
  NodesFiltered: number;
  /** Ready, eligible nodes per datacenter the job may use; 0 for a named datacenter without one. */
  NodesAvailable: Record<string, number>;
  /** Filtered nodes by node class (nodes without a class are not counted here). */
  ClassFiltered: Record<string, number>;
  /** Filtered nodes by reason: a constraint (`${node.class} = fast`) or a feasibility check's words. */
  ConstraintFiltered: Record<string, number>;
  /** Feasible nodes without room for the alloc (CPU, memory or cores), by class and dimension. */
  NodesExhausted: number;
  ClassExhausted: Record<string, number>;
  DimensionExhausted: Record<string, number>;
  QuotaExhausted: string[];
  /** Further allocs of the group that found no node; the metrics are the first one's. */
  CoalescedFailures: number;
}

export interface Evaluation {
  ID: string;
  Namespace: string;
  Priority: number;
  /** The job's type. */
  Type: JobType;
  TriggeredBy: EvalTrigger;
  JobID: string;
  JobModifyIndex: number;
  /** Set by Nomad for node-update evals of system jobs; always "" here. */
  NodeID: string;
  Status: EvalStatus;
  StatusDescription: string;
  /** The eval this one follows (a blocked eval names the eval that created it). */
  PreviousEval: string;
  NextEval: string;
  /** The blocked eval this one created for the allocs it could not place. */
  BlockedEval: string;
  /** Per task group whose allocs found no node; null when none failed. */
  FailedTGAllocs: Record<string, AllocMetric> | null;
  /** Per task group, allocs still waiting for a node (0 for every placed group). */
  QueuedAllocations: Record<string, number>;
  /** The state index the pass read. */
  SnapshotIndex: number;
  /** The deployment the pass worked for (Nomad's DeploymentID); absent when none. */
  DeploymentID?: string;
  /**
   * A delayed eval runs at this time (RFC 3339, as Nomad's JSON gives time.Time); Nomad's zero time
   * otherwise. Absent on evals stored before follow-up evals existed.
   */
  WaitUntil?: string;
  /**
   * The allocs this eval's passes placed. Server bookkeeping, left out of API answers: it serves
   * /v1/evaluation/:id/allocations, which Nomad answers from each alloc's EvalID.
   */
  PlacedAllocIDs: string[];
  CreateIndex: number;
  ModifyIndex: number;
  /** Unix nanoseconds. */
  CreateTime: number;
  ModifyTime: number;
}

/** Nomad's words for a blocked eval, and for an older blocked eval a newer one replaces. */
export const BLOCKED_DESCRIPTION = "created to place remaining allocations";
/** Nomad's reschedulingFollowupEvalDesc. */
export const FOLLOWUP_DESCRIPTION = "created for delayed rescheduling";
/** Go's zero time.Time in JSON: what Nomad shows for an eval that waits for nothing. */
export const ZERO_TIME = "0001-01-01T00:00:00Z";
export const blockedDuplicateDescription = (jobId: string) =>
  `existing blocked evaluation exists for job ${JSON.stringify(jobId)}`;
export const blockedUnneededDescription = (evalId: string) =>
  `evaluation ${JSON.stringify(evalId)} placed the remaining allocations`;

/** How many evals of one job are kept (a blocked one is always kept on top). */
export const EVALS_KEPT_PER_JOB = 10;

export function newAllocMetric(available: Record<string, number>): AllocMetric {
  return {
    NodesEvaluated: 0,
    NodesFiltered: 0,
    NodesAvailable: { ...available },
    ClassFiltered: {},
    ConstraintFiltered: {},
    NodesExhausted: 0,
    ClassExhausted: {},
    DimensionExhausted: {},
    QuotaExhausted: [],
    CoalescedFailures: 0,
  };
}

/** Records one node tried: refused for `reason`, or feasible when `reason` is null. */
export function recordNode(m: AllocMetric, node: Pick<Node, "NodeClass">, reason: string | null): void {
  m.NodesEvaluated++;
  if (reason === null) return;
  m.NodesFiltered++;
  if (node.NodeClass !== "") m.ClassFiltered[node.NodeClass] = (m.ClassFiltered[node.NodeClass] ?? 0) + 1;
  m.ConstraintFiltered[reason] = (m.ConstraintFiltered[reason] ?? 0) + 1;
}

/**
 * Records a feasible node without room for the alloc (Nomad's ExhaustedNode): `dimension` is the
 * resource that ran out ("cpu", "memory", "cores"), as DimensionExhausted keys it.
 */
export function recordExhausted(m: AllocMetric, node: Pick<Node, "NodeClass">, dimension: string): void {
  m.NodesExhausted++;
  if (node.NodeClass !== "") m.ClassExhausted[node.NodeClass] = (m.ClassExhausted[node.NodeClass] ?? 0) + 1;
  if (dimension !== "") m.DimensionExhausted[dimension] = (m.DimensionExhausted[dimension] ?? 0) + 1;
}

/** A fresh eval of `job` (not yet stored: the store stamps its indexes). */
export function newEval(
  job: Pick<Job, "ID" | "Namespace" | "Priority" | "Type" | "JobModifyIndex">,
  id: string,
  trigger: EvalTrigger,
  nowNs: number,
  snapshotIndex: number,
): Evaluation {
  return {
    ID: id,
    Namespace: job.Namespace,
    Priority: job.Priority,
    Type: job.Type,
    TriggeredBy: trigger,
    JobID: job.ID,
    JobModifyIndex: job.JobModifyIndex,
    NodeID: "",
    Status: "complete",
    StatusDescription: "",
    PreviousEval: "",
    NextEval: "",
    BlockedEval: "",
    FailedTGAllocs: null,
    QueuedAllocations: {},
    SnapshotIndex: snapshotIndex,
    WaitUntil: ZERO_TIME,
    PlacedAllocIDs: [],
    CreateIndex: 0,
    ModifyIndex: 0,
    CreateTime: nowNs,
    ModifyTime: nowNs,
  };
}

/** The blocked eval `parent` creates for its unplaced allocs (Nomad's CreateBlockedEval). */
export function blockedEvalFor(parent: Evaluation, id: string): Evaluation {
  return {
    ...parent,
    ID: id,
    TriggeredBy: "queued-allocs",
    Status: "blocked",
    StatusDescription: BLOCKED_DESCRIPTION,
    PreviousEval: parent.ID,
    BlockedEval: "",
    PlacedAllocIDs: [],
  };
}

/**
 * The delayed eval that replaces failed allocs at `waitUntilNs` (Nomad's rescheduleLater evals);
 * `parent` is the eval of the pass that created it.
 */
export function followupEvalFor(parent: Evaluation, id: string, waitUntilNs: number): Evaluation {
  return {
    ...parent,
    ID: id,
    TriggeredBy: "alloc-failure",
    Status: "pending",
    StatusDescription: FOLLOWUP_DESCRIPTION,
    PreviousEval: parent.ID,
    NextEval: "",
    BlockedEval: "",
    FailedTGAllocs: null,
    QueuedAllocations: {},
    WaitUntil: new Date(Math.floor(waitUntilNs / 1_000_000)).toISOString(),
    PlacedAllocIDs: [],
  };
}

/** When a pending follow-up eval is due, unix ms; null for an eval that waits for nothing. */
export function waitUntilMs(e: Pick<Evaluation, "WaitUntil">): number | null {
  if (!e.WaitUntil || e.WaitUntil === ZERO_TIME) return null;
  const ms = Date.parse(e.WaitUntil);
  return Number.isFinite(ms) ? ms : null;
}

/** Work still to do: a blocked eval, or a delayed one that has not run yet. */
export function isEvalLive(e: Pick<Evaluation, "Status">): boolean {
  return e.Status === "blocked" || e.Status === "pending";
}

/**
 * The evals of one job to delete so that at most `keep` remain: the oldest by CreateIndex, `evals`
 * being oldest first (as the store lists them) for evals made together. A blocked or pending eval
 * is live work and is never among them.
 */
export function evalsToPrune(evals: Evaluation[], keep = EVALS_KEPT_PER_JOB): string[] {
  const newestFirst = [...evals].reverse().sort((a, b) => b.CreateIndex - a.CreateIndex);
  let kept = 0;
  const out: string[] = [];
  for (const e of newestFirst) {
    if (isEvalLive(e) || kept < keep) kept++;
    else out.push(e.ID);
  }
  return out;
}
