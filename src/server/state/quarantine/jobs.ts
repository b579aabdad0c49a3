/**
 * A quarantined job's allocs (quarantine.ts moves a job record that cannot be loaded out of the
 * jobs table, but its allocs keep their own copy of the job and stay placed). With no job record
 * nothing would ever stop them, and `job stop`/`job purge` would answer 404. So: at each leader's
 * start-up pass the allocs of every quarantined job are told to stop (scheduler.evaluateAll), and
 * the job endpoint's deregister of a job that is not stored but quarantined stops them too and,
 * with purge, drops the quarantined record (rpc/job.ts). A job registered again under the ID is
 * a new job: its allocs are not touched (only allocs older than that job's CreateIndex are).
 */
import { isAllocTerminal } from "../../../structs/alloc.js";
import { NS_PER_MS } from "../../../structs/job.js";
import type { Logger } from "../../../internal/log.js";
import type { QuarantinedRecord, StateStore } from "../store.js";

/** Why the allocs were stopped, shown as their DesiredDescription. */
export const QUARANTINED_JOB_STOP = "alloc not needed as its job record is quarantined";

/** The quarantined record of the job `namespace/id`, if there is one. */
export function quarantinedJob(
  store: StateStore,
  namespace: string,
  id: string,
): QuarantinedRecord | undefined {
  return store.quarantined().find((q) => q.table === "jobs" && q.namespace === namespace && q.key === id);
}

/**
 * Sets DesiredStatus "stop" on every alloc of the job `namespace/id` that is to run and not
 * terminal, in one write; returns how many. Allocs of a job stored now under that ID are left to
 * that job's own passes.
 */
export async function stopQuarantinedJobAllocs(
  store: StateStore,
  namespace: string,
  id: string,
  description = QUARANTINED_JOB_STOP,
): Promise<number> {
  return store.txn((tx) => {
    const current = tx.getJob(namespace, id);
    const nowNs = Date.now() * NS_PER_MS;
    let stopped = 0;
    for (const a of tx.allocsByJob(namespace, id)) {
      if (a.DesiredStatus !== "run" || isAllocTerminal(a)) continue;
      if (current && a.CreateIndex >= current.CreateIndex) continue;
      tx.putAlloc({ ...a, DesiredStatus: "stop", DesiredDescription: description, ModifyTime: nowNs });
      stopped++;
    }
    return stopped;
  });
}

/** The start-up sweep: the allocs of every quarantined job told to stop; returns how many. */
export async function stopAllQuarantinedJobAllocs(store: StateStore): Promise<number> {
  let stopped = 0;
  for (const q of store.quarantined()) {
    if (q.table === "jobs") stopped += await stopQuarantinedJobAllocs(store, q.namespace, q.key);
  }
  return stopped;
}

/** The sweep at a leader's start, logged; never throws (a failure is logged and left for the next). */
export async function sweepQuarantinedJobAllocs(store: StateStore, log: Logger): Promise<void> {
  await stopAllQuarantinedJobAllocs(store).then(
    (n) => n > 0 && log.warn("stopped the allocs of quarantined jobs", { allocs: n }),
    (err: unknown) => log.error("stopping the allocs of quarantined jobs failed", { error: err }),
  );
}
