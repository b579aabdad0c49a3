/**
 * The deployment watcher (Nomad's nomad/deploymentwatcher): a leader loop that takes every active
 * deployment one step (decide.ts) — alloc health, counters, promotion, success or failure and
 * auto_revert — in one transaction per deployment, then evaluates the deployment's job so the
 * reconciler places the next batch.
 *
 * - Event-driven: blocks on the deployments/allocs table indexes and on the nearest time a
 *   decision depends on (MinHealthyTime, HealthyDeadline, a progress deadline); bursts coalesce.
 *   Not on volumes: every claim and release step writes a volume, and a pass (every active
 *   deployment's allocs read, its job evaluated) per burst of claims anywhere in the cluster cost
 *   the claim path ~40 % of the server's CPU (bench/claims.ts). A single-writer hand-over does not
 *   need it: a slot waiting for a volume's release is held by the scheduler, which re-evaluates
 *   the job when a claim is freed (Scheduler.retryBlocked, claim.ts), and the alloc it then
 *   places is an allocs write, which wakes this loop.
 * - Each pass evaluates the job of every active deployment, quietly (no eval recorded when the
 *   pass changes nothing), so a slot waiting for its volume is filled once the claim is gone.
 * - Resumable: everything lives in the store; a restarted server's first pass picks up.
 */
import { followTables } from "../follow_tables.js";
import type { Logger } from "../../internal/log.js";
import { DEPLOYMENT_DESC, isDeploymentActive } from "../../structs/deployment.js";
import { NS_PER_MS } from "../../structs/job.js";
import type { StateStore, StateWriter, Table } from "../state/store.js";
import { decideDeployment } from "./decide.js";
import { withDefaults } from "../../internal/with_defaults.js";

/** What the watcher needs of the scheduler. */
export interface DeploymentEvaluator {
  evaluate(
    namespace: string,
    id: string,
    trigger: "deployment-watcher",
    opts?: { quiet?: boolean },
  ): Promise<unknown>;
}

export interface DeploymentWatcherOptions {
  /** Least time between two passes (coalesces bursts of writes). */
  settleMs: number;
  /** Pause after a failed pass. */
  errorBackoffMs: number;
}

export const DEFAULT_DEPLOYMENT_WATCHER_OPTIONS: DeploymentWatcherOptions = {
  settleMs: 50,
  errorBackoffMs: 500,
};

const WATCHED: readonly Table[] = ["deployments", "allocs"];
/** Longest a blocking wait lasts before an unprompted pass (a safety net, not the mechanism). */
const MAX_WAIT_MS = 60_000;

/**
 * One step of deployment `id` inside `tx`: health marks, the deployment's new state, and the
 * rollback when auto_revert asks for one. Answers when to look again, and whether it wrote.
 */
export function stepDeployment(
  tx: StateWriter,
  id: string,
  nowMs: number,
): { wakeAtMs: number | null; changed: boolean; namespace: string; jobId: string } | null {
  const d = tx.getDeployment(id);
  if (!d || !isDeploymentActive(d)) return null;
  const current = tx.getJob(d.Namespace, d.JobID);
  if (!current || current.CreateIndex !== d.JobCreateIndex) {
    // The job was purged (and maybe registered again as a new job): nothing is left to roll out.
    tx.putDeployment({
      ...d,
      Status: "cancelled",
      StatusDescription: DEPLOYMENT_DESC.stoppedJob,
      ModifyTime: nowMs * NS_PER_MS,
    });
    return { wakeAtMs: null, changed: true, namespace: d.Namespace, jobId: d.JobID };
  }
  const allocs = tx.allocsByJob(d.Namespace, d.JobID).filter((a) => a.DeploymentID === d.ID);
  const decision = decideDeployment({
    deployment: d,
    allocs,
    versions: tx.jobVersions(d.Namespace, d.JobID),
    nowMs,
  });
  const stamp = new Date(nowMs).toISOString();
  for (const { alloc, healthy } of decision.health) {
    const cur = tx.getAlloc(alloc.ID);
    if (!cur) continue;
    tx.putAlloc({
      ...cur,
      DeploymentStatus: { Healthy: healthy, Canary: cur.DeploymentStatus?.Canary ?? false, Timestamp: stamp },
    });
  }
  const changed = decision.deployment !== d || decision.health.length > 0;
  if (decision.deployment !== d) tx.putDeployment(decision.deployment);
  const job = tx.getJob(d.Namespace, d.JobID);
  if (job && job.Version === d.JobVersion && decision.deployment.Status === "successful" && !job.Stable) {
    tx.putJob({ ...job, Stable: true });
  }
  if (job && decision.revertTo !== null) revertJob(tx, job.Namespace, job.ID, decision.revertTo, nowMs);
  return { wakeAtMs: decision.wakeAtMs, changed, namespace: d.Namespace, jobId: d.JobID };
}

/** Registers stored version `version` of the job again, as its next version (Nomad's revert). */
export function revertJob(
  tx: StateWriter,
  namespace: string,
  jobId: string,
  version: number,
  nowMs: number,
): void {
  const cur = tx.getJob(namespace, jobId);
  const target = tx.jobVersions(namespace, jobId).find((v) => v.Version === version);
  if (!cur || !target) return;
  tx.putJob({
    ...target,
    Stable: false,
    Stop: false,
    Status: cur.Status,
    Version: cur.Version + 1,
    SubmitTime: nowMs * NS_PER_MS,
    CreateIndex: cur.CreateIndex,
    JobModifyIndex: tx.writeIndex,
  });
}

export class DeploymentWatcher {
  private readonly opts: DeploymentWatcherOptions;
  private ctl = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly scheduler: DeploymentEvaluator,
    private readonly log: Logger,
    opts: Partial<DeploymentWatcherOptions> = {},
  ) {
    this.opts = withDefaults(DEFAULT_DEPLOYMENT_WATCHER_OPTIONS, opts);
  }

  start(): void {
    if (this.loop) return;
    this.ctl = new AbortController();
    this.loop = this.watch(this.ctl.signal);
  }

  /** Stops the loop and waits for the pass in flight; every deployment stays in the store. */
  async stop(): Promise<void> {
    this.ctl.abort();
    await this.loop;
    this.loop = undefined;
  }

  private watch(signal: AbortSignal): Promise<void> {
    return followTables(
      {
        store: this.store,
        tables: WATCHED,
        pass: (s) => this.pass(s),
        name: "deployment watcher",
        log: this.log,
        settleMs: this.opts.settleMs,
        errorBackoffMs: this.opts.errorBackoffMs,
        maxWaitMs: MAX_WAIT_MS,
      },
      signal,
    );
  }

  /** Steps every active deployment and evaluates its job; answers the nearest wake-up time. */
  private async pass(signal: AbortSignal): Promise<number | null> {
    let wakeAt: number | null = null;
    const active = this.store.listDeployments().filter(isDeploymentActive);
    for (const d of active) {
      if (signal.aborted) break;
      const step = await this.store.txn((tx) => stepDeployment(tx, d.ID, Date.now()));
      if (!step) continue;
      if (step.wakeAtMs !== null && (wakeAt === null || step.wakeAtMs < wakeAt)) wakeAt = step.wakeAtMs;
      if (signal.aborted) break;
      await this.scheduler.evaluate(step.namespace, step.jobId, "deployment-watcher", {
        quiet: !step.changed,
      });
    }
    return wakeAt;
  }
}
