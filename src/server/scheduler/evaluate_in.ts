/**
 * One transaction of a scheduling pass (Scheduler.pass runs one per batch): plan (or take the plan
 * made ahead), apply it, and on the pass's last batch refresh the job's status and record the eval.
 */
import { performance } from "node:perf_hooks";
import type { EvalTrigger, Evaluation } from "../../structs/eval.js";
import { NS_PER_MS, type Job } from "../../structs/job.js";
import { isLaunchParent, parentStatus } from "../../structs/periodic_decide.js";
import type { StateWriter } from "../state/store.js";
import { IN_TXN_PLAN_MS, type Batching } from "./batches.js";
import { cancelBlocked, cancelLive, recordPass } from "./evals.js";
import { refreshJobStatus } from "./job_status.js";
import { computePlan } from "./plan.js";
import type { PlacementFailure, Plan } from "./plan_types.js";
import type { PlannedAhead } from "./plan_ahead.js";

export interface EvalResult {
  placed: number;
  stopped: number;
  failures: PlacementFailure[];
  index: number;
  /** The eval that records this pass ("" when none was: the job is gone, or a quiet pass did nothing). */
  evalId: string;
  /** The job's blocked eval, "" when every alloc has a node. */
  blockedEvalId: string;
  /** Delayed evals the pass created, with when each is due (unix ns). */
  followups: { evalId: string; waitUntil: number }[];
  /** Slots left empty until a single-writer volume is free (plan.ts heldSlots). */
  heldSlots: number;
}

/** One batch's result: `more` when allocs are left for the next batch. */
export interface BatchResult extends EvalResult {
  more: boolean;
  /** The batch applied the plan made ahead (nothing it relied on was written since it was made). */
  usedAhead: boolean;
  /** The allocs this batch placed. */
  placedIds: string[];
  /**
   * The store index the batch's plan read (the plan made ahead's readIndex, else the transaction's
   * own): its failures and held slots are known to hold there, not necessarily after.
   */
  snapshotIndex: number;
}

/** How a pass is recorded. */
export interface EvalOptions {
  /** Record an eval only when the pass placed, stopped or failed to place something. */
  quiet?: boolean;
  /** Run this pending follow-up eval (a no-op when it is no longer pending). */
  followupEvalId?: string;
}

/** The result of a batch that did nothing, at store index `index`. */
function nothingDone(index: number, snapshotIndex: number): BatchResult {
  return {
    placed: 0,
    stopped: 0,
    failures: [],
    index,
    evalId: "",
    blockedEvalId: "",
    followups: [],
    heldSlots: 0,
    more: false,
    placedIds: [],
    usedAhead: false,
    snapshotIndex,
  };
}

/**
 * The plan made here (the plan made ahead is stale): a batch bounded in time, not in count, so this
 * transaction holds the loop for about IN_TXN_PLAN_MS at most, however big the job.
 */
function planInTxn(tx: StateWriter, job: Job, nowNs: number, runningId: string, batch?: Batching): Plan {
  const started = performance.now();
  return computePlan(tx, job, nowNs, runningId, {
    maxPlace: batch ? (n: number) => n > 0 && performance.now() - started >= IN_TXN_PLAN_MS : undefined,
    listNodes: batch?.cachedNodes ? () => batch.cachedNodes?.() ?? tx.listNodes() : undefined,
  });
}

/** Writes the plan's deployments and allocs (stops, reschedule links, placements). */
function applyPlan(tx: StateWriter, plan: Plan, nowNs: number): void {
  for (const d of plan.cancelDeployments) tx.putDeployment(d);
  if (plan.newDeployment) tx.putDeployment(plan.newDeployment);
  for (const { alloc, description } of plan.stop) {
    tx.putAlloc({ ...alloc, DesiredStatus: "stop", DesiredDescription: description, ModifyTime: nowNs });
  }
  // Reschedule links only: the failed alloc's ModifyTime (its failure time) is left as it is.
  for (const alloc of plan.update) tx.putAlloc(alloc);
  for (const alloc of plan.place) tx.putAlloc(alloc);
}

/** What the last batch of a pass needs to record it. */
interface LastBatch {
  job: Job;
  plan: Plan;
  nowNs: number;
  before: number;
  running: Evaluation | undefined;
  placedIds: string[];
  usedAhead: boolean;
  snapshotIndex: number;
}

/** The last batch: records the pass's eval, refreshes the job's status, and answers the result. */
function recordLast(
  tx: StateWriter,
  b: LastBatch,
  trigger: EvalTrigger,
  opts: EvalOptions,
  batch: Batching | undefined,
): BatchResult {
  const { job, plan, before } = b;
  const placed = [...(batch?.placedBefore ?? []), ...b.placedIds];
  const outcome = { placed, stopped: plan.stop.length, failures: plan.failures, followups: plan.followups };
  const recorded = recordPass(tx, job, outcome, trigger, b.nowNs, opts.quiet, b.running);
  const recordedEval = recorded.evalId ? tx.getEval(recorded.evalId) : undefined;
  // Only on an eval this pass created: a pass that changes nothing (a blocked eval run again)
  // must write nothing.
  if (
    recordedEval &&
    plan.deploymentId &&
    recordedEval.CreateIndex === tx.writeIndex &&
    recordedEval.DeploymentID !== plan.deploymentId
  ) {
    tx.putEval({ ...recordedEval, DeploymentID: plan.deploymentId });
  }
  refreshJobStatus(tx, job, plan.place);
  const evalIndex = recorded.evalId ? (tx.getEval(recorded.evalId)?.ModifyIndex ?? before) : before;
  return {
    placed: placed.length,
    stopped: outcome.stopped,
    failures: outcome.failures,
    index: placed.length + outcome.stopped > 0 || plan.newDeployment ? tx.writeIndex : evalIndex,
    ...recorded,
    followups: plan.followups.map((f) => ({ evalId: f.evalId, waitUntil: f.waitUntil })),
    heldSlots: plan.heldSlots,
    more: false,
    placedIds: b.placedIds,
    usedAhead: b.usedAhead,
    snapshotIndex: b.snapshotIndex,
  };
}

/**
 * The transaction body: plan, apply, refresh the job's status and record the eval. `ahead` is the
 * plan made before the transaction (plan_ahead.ts): used when the store is still at the index it
 * was made at, or when `batch.stillValid` finds that the writes since only freed what it relies on
 * (rebase.ts); otherwise the plan is made here.
 */
export function evaluateIn(
  tx: StateWriter,
  namespace: string,
  id: string,
  trigger: EvalTrigger = "job-register",
  opts: EvalOptions = {},
  ahead?: PlannedAhead,
  batch?: Batching,
): BatchResult {
  const before = tx.index();
  const fresh =
    ahead !== undefined && (ahead.index === before || batch?.stillValid?.(ahead.index) === true)
      ? ahead
      : undefined;
  const nowNs = fresh?.nowNs ?? Date.now() * NS_PER_MS;
  const none = nothingDone(before, fresh?.readIndex ?? before);
  const running = opts.followupEvalId ? tx.getEval(opts.followupEvalId) : undefined;
  // A follow-up that was cancelled (job stopped or purged) or already ran has nothing to do.
  if (opts.followupEvalId && running?.Status !== "pending") return none;
  const job = tx.getJob(namespace, id);
  if (!job) {
    cancelBlocked(tx, namespace, id, nowNs);
    return none;
  }
  if (job.Stop) cancelLive(tx, namespace, id, `job ${JSON.stringify(id)} is stopped`, nowNs);
  // A periodic or parameterized parent places nothing: its children run (server/periodic/,
  // rpc/job_launch.ts). It is running while registered and not stopped, as Nomad shows it.
  if (isLaunchParent(job)) {
    if (job.Status !== parentStatus(job)) tx.putJob({ ...job, Status: parentStatus(job) });
    return none;
  }
  const plan = fresh?.plan ?? planInTxn(tx, job, nowNs, running?.ID ?? "", batch);
  applyPlan(tx, plan, nowNs);
  const placedIds = plan.place.map((a) => a.ID);
  const usedAhead = fresh !== undefined;
  // A batch that leaves allocs to place writes only its placements (plan.ts: such a plan has
  // nothing else to write but its deployment); the eval and the job's status wait for the last.
  if (plan.more)
    return { ...none, placed: placedIds.length, index: tx.writeIndex, more: true, placedIds, usedAhead };
  const last = { job, plan, nowNs, before, running, placedIds, usedAhead, snapshotIndex: none.snapshotIndex };
  return recordLast(tx, last, trigger, opts, batch);
}
