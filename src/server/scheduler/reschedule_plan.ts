/**
 * The reconciler's part for failed allocs (Nomad's filterByRescheduleable): for each alloc slot
 * whose newest alloc failed, the slot is replaced now, later (a delayed follow-up eval) or never,
 * as the alloc's reschedule policy (structs/reschedule.ts) says. Pure over a StateReader.
 */
import { isClientTerminal, type Allocation } from "../../structs/alloc.js";
import { newUuid } from "../../structs/ids.js";
import type { Job } from "../../structs/job.js";
import { batchFollowups, rescheduleDecision } from "../../structs/reschedule.js";
import type { StateReader } from "../state/store.js";

export interface FollowupPlan {
  evalId: string;
  /** Unix nanoseconds. */
  waitUntil: number;
  allocIds: string[];
}

export interface ReschedulePlan {
  /** Slots that wait for a follow-up eval or stay failed: nothing is placed for them in this pass. */
  hold: Set<string>;
  /** Slots to place now, each as the replacement of this failed alloc. */
  replace: Map<string, Allocation>;
  /** New delayed evals; `update` names each alloc's FollowupEvalID. */
  followups: FollowupPlan[];
  /** Failed allocs that now name their follow-up eval. */
  update: Allocation[];
}

/**
 * `mine`: the job's allocs of its current incarnation; `open`: the slot names that have no
 * running (or, batch, completed) alloc. `runningEvalId` is the follow-up eval this pass runs, if any:
 * the allocs waiting for it are due now whatever the clock says (Nomad's FollowupEvalID match).
 */
export function planReschedules(
  state: StateReader,
  job: Job,
  mine: Allocation[],
  open: Iterable<string>,
  nowNs: number,
  runningEvalId: string,
): ReschedulePlan {
  const out: ReschedulePlan = { hold: new Set(), replace: new Map(), followups: [], update: [] };
  const newest = new Map<string, Allocation>();
  for (const a of mine) {
    // Older versions' terminal allocs do not count (Nomad's filterOldTerminalAllocs); an alloc
    // already replaced is history.
    if (a.DesiredStatus !== "run" || !isClientTerminal(a.ClientStatus)) continue;
    if (a.Job.Version !== job.Version || a.NextAllocation) continue;
    const cur = newest.get(a.Name);
    if (!cur || a.CreateIndex > cur.CreateIndex) newest.set(a.Name, a);
  }
  const later: { alloc: Allocation; time: number }[] = [];
  for (const name of open) {
    const a = newest.get(name);
    if (!a || a.ClientStatus !== "failed") continue;
    const d = rescheduleDecision(a, nowNs, runningEvalId);
    if (d.kind === "now") {
      out.replace.set(name, a);
      continue;
    }
    out.hold.add(name);
    if (d.kind === "later") later.push({ alloc: a, time: d.time });
  }
  const f = followupsFor(state, later);
  out.followups = f.followups;
  out.update = f.update;
  return out;
}

/**
 * The delayed evals that place failed allocs' slots again at their times, batched as Nomad batches
 * them; `update` is each alloc naming its eval. An alloc already waiting for a pending eval gets
 * none (a cancelled or pruned one is replaced).
 */
export function followupsFor(
  state: StateReader,
  later: readonly { alloc: Allocation; time: number }[],
): { followups: FollowupPlan[]; update: Allocation[] } {
  const out: { followups: FollowupPlan[]; update: Allocation[] } = { followups: [], update: [] };
  const due = later.filter((l) => !waitsForPendingEval(state, l.alloc));
  for (const batch of batchFollowups(due)) {
    const evalId = newUuid();
    out.followups.push({ evalId, waitUntil: batch.waitUntil, allocIds: batch.items.map((i) => i.alloc.ID) });
    for (const { alloc } of batch.items) out.update.push({ ...alloc, FollowupEvalID: evalId });
  }
  return out;
}

/** The alloc already has a follow-up eval that has not run. */
function waitsForPendingEval(state: StateReader, a: Allocation): boolean {
  if (!a.FollowupEvalID) return false;
  return state.getEval(a.FollowupEvalID)?.Status === "pending";
}
