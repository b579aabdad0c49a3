/**
 * The transaction half of Node.UpdateAllocs (node.ts): applies a node's reports of its allocs and
 * says what the endpoint must do after the commit (which jobs to evaluate, which volumes were
 * freed). An alloc of another node is refused; a report older than the one applied is skipped.
 */
import { isClientTerminal, type Allocation } from "../../structs/alloc.js";
import { withClientStatusState } from "../../structs/disconnect.js";
import { BerthError } from "../../structs/errors.js";
import { NS_PER_MS, runsOnEveryNode } from "../../structs/job.js";
import type { AllocUpdate, validateAllocUpdates } from "../../structs/node_alloc_validate.js";
import { isStaleReport } from "../../structs/node_report.js";
import { allocVolumeWakes, type Wake } from "../scheduler/blocked_wait.js";
import { refreshJobStatus } from "../scheduler/job_status.js";
import type { StateWriter } from "../state/store.js";

type AllocReports = ReturnType<typeof validateAllocUpdates>;

/** A job one of whose allocs ended with this report. */
export interface EndedJob {
  namespace: string;
  id: string;
  /** One of its allocs failed (not only completed). */
  failed: boolean;
  /** A system or sysbatch job. */
  everyNode: boolean;
}

export interface AppliedReports {
  endedJobs: EndedJob[];
  /** Jobs an alloc of which reconnected (unknown → the node's word), by `namespace/id`. */
  reconnects: Map<string, { namespace: string; id: string }>;
  /** The volumes of allocs that ended: their proposed (or held) claims are gone. */
  freedVolumes: Wake[];
  /** Reports refused as older than the ones applied. */
  stale: number;
}

/** The stored alloc after one report (the alloc as stored before: `alloc`). */
function reported(alloc: Allocation, u: AllocUpdate, req: AllocReports, nowNs: number): Allocation {
  // Lost is final (node_loss.ts): a node that comes back reports what it still runs until it has
  // stopped it, and that must not bring an alloc the scheduler has replaced back to life.
  const keepLost = alloc.ClientStatus === "lost" && u.ClientStatus !== "lost";
  // Unknown is the server's guess while the node was silent: the node's word replaces it, and the
  // job is evaluated so a replacement placed meanwhile is reconciled (Nomad's reconnect).
  const reconnected = alloc.ClientStatus === "unknown" && u.ClientStatus !== "unknown";
  return {
    ...alloc,
    ClientStatus: keepLost ? "lost" : u.ClientStatus,
    ClientDescription: keepLost ? alloc.ClientDescription : u.ClientDescription,
    TaskStates: u.TaskStates ?? alloc.TaskStates,
    ModifyTime: nowNs,
    ...(reconnected ? { AllocStates: withClientStatusState(alloc, u.ClientStatus, nowNs / NS_PER_MS) } : {}),
    ...(req.ReportOrder ? { ReportOrder: req.ReportOrder } : {}),
  };
}

/** Notes what follows from one applied report: a reconnect, or an alloc that just ended. */
function noteOutcome(
  out: AppliedReports,
  ended: Map<string, EndedJob>,
  before: Allocation,
  next: Allocation,
): void {
  const k = `${next.Namespace}/${next.JobID}`;
  if (before.ClientStatus === "unknown" && next.ClientStatus !== "unknown")
    out.reconnects.set(k, { namespace: next.Namespace, id: next.JobID });
  if (isClientTerminal(next.ClientStatus) && !isClientTerminal(before.ClientStatus)) {
    const failed = next.ClientStatus === "failed" || ended.get(k)?.failed === true;
    ended.set(k, {
      namespace: next.Namespace,
      id: next.JobID,
      failed,
      everyNode: runsOnEveryNode(next.Job.Type),
    });
    out.freedVolumes.push(...allocVolumeWakes(next));
  }
}

/** Applies the reports in `tx` and refreshes the status of every job they touched. */
export function applyAllocReports(tx: StateWriter, req: AllocReports): AppliedReports {
  const out: AppliedReports = { endedJobs: [], reconnects: new Map(), freedVolumes: [], stale: 0 };
  const ended = new Map<string, EndedJob>();
  const nowNs = Date.now() * NS_PER_MS;
  const touched: Allocation[] = [];
  for (const u of req.Allocs) {
    const alloc = tx.getAlloc(u.ID);
    if (!alloc) continue;
    if (alloc.NodeID !== req.NodeID) {
      throw new BerthError("ERR_PERMISSION_DENIED", `allocation ${u.ID} does not run on node ${req.NodeID}`);
    }
    // A report that waited in a hung server while a newer one was applied: the newer stays.
    if (isStaleReport(alloc.ReportOrder, req.ReportOrder)) {
      out.stale++;
      continue;
    }
    const next = tx.putAlloc(reported(alloc, u, req, nowNs), { fromClient: true });
    touched.push(next);
    noteOutcome(out, ended, alloc, next);
  }
  const seen = new Set<string>();
  for (const a of touched) {
    const k = `${a.Namespace}/${a.JobID}`;
    if (seen.has(k)) continue;
    seen.add(k);
    const job = tx.getJob(a.Namespace, a.JobID);
    if (job) refreshJobStatus(tx, job, touched);
  }
  out.endedJobs = [...ended.values()];
  return out;
}
