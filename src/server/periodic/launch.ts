/**
 * A periodic launch as one transaction body: read the parent, its last launch and its children,
 * decide (structs/periodic_decide.ts), and write the child job with the new last launch — both in
 * the same transaction, as Nomad's FSM upserts the child and its PeriodicLaunch together, so a
 * launch is recorded exactly when its child exists. Runs under any StateWriter; re-runnable.
 */
import { BerthError } from "../../structs/errors.js";
import { NS_PER_MS, type Job } from "../../structs/job.js";
import { PERIODIC_LAUNCH_SUFFIX, periodicChildId } from "../../structs/periodic.js";
import { decideLaunch, type LaunchDecision, type LaunchKind } from "../../structs/periodic_decide.js";
import type { StateReader, StateWriter } from "../state/store.js";

export interface LaunchOutcome {
  decision: LaunchDecision;
  /** The child's ID (whether or not it was launched now). */
  childId: string;
}

/**
 * Nomad's RunningChildren: a periodic child of `parent` that is not finished (not dead, or with an
 * alloc still running). Reads the namespace's jobs: O(jobs in the namespace).
 */
export function hasRunningChild(state: StateReader, parent: Job): boolean {
  const prefix = parent.ID + PERIODIC_LAUNCH_SUFFIX;
  return state
    .listJobs(parent.Namespace)
    .some(
      (c) =>
        c.ParentID === parent.ID &&
        c.ID.startsWith(prefix) &&
        ((!c.Stop && c.Status !== "dead") || state.hasLiveAllocOfJob(c.Namespace, c.ID, c.CreateIndex)),
    );
}

/** The child Nomad's deriveJob makes: the parent's copy, ID and Name `<id>/periodic-<s>`, no schedule. */
export function periodicChild(parent: Job, id: string, nowNs: number): Job {
  return {
    ...parent,
    ID: id,
    Name: id,
    ParentID: parent.ID,
    Periodic: null,
    Status: "pending",
    Stable: undefined,
    Version: 0,
    SubmitTime: nowNs,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
  };
}

/**
 * Decides and, when it launches, writes the child and the launch record. `allowed` is checked
 * first, inside the transaction: a leader's launch passes its term's check, so a term that ended
 * before the write ran writes nothing (ERR_FENCED).
 */
export function launchIn(
  tx: StateWriter,
  namespace: string,
  parentId: string,
  kind: LaunchKind,
  atMs: number,
  allowed?: () => string | undefined,
): LaunchOutcome {
  const refusal = allowed?.();
  if (refusal !== undefined) throw new BerthError("ERR_FENCED", `periodic launch not written: ${refusal}`);
  const childId = periodicChildId(parentId, atMs);
  const job = tx.getJob(namespace, parentId);
  if (!job) return { decision: { launch: false, reason: "inactive" }, childId };
  const record = tx.getPeriodicLaunch(namespace, parentId);
  const lastNs = record?.Launch ?? job.SubmitTime;
  const decision = decideLaunch({
    job,
    kind,
    atMs,
    lastMs: lastNs > 0 ? Math.floor(lastNs / NS_PER_MS) : undefined,
    childRunning: job.Periodic?.ProhibitOverlap === true && hasRunningChild(tx, job),
    childExists: tx.getJob(namespace, childId) !== undefined,
  });
  if (!decision.launch) return { decision, childId };
  const nowNs = Date.now() * NS_PER_MS;
  tx.putJob({ ...periodicChild(job, childId, nowNs), JobModifyIndex: tx.writeIndex });
  tx.putPeriodicLaunch({
    ID: parentId,
    Namespace: namespace,
    Launch: atMs * NS_PER_MS,
    CreateIndex: 0,
    ModifyIndex: 0,
  });
  return { decision, childId };
}
