/**
 * Job endpoints. Register stores the job (a new version only when the spec changed) and runs the
 * scheduler; stop marks it stopped and lets the scheduler stop its allocs. Purge deletes the job
 * record but keeps its allocs, marked to stop: their claims stay attached to allocs the server still
 * knows, so the clients release them and nothing loses track of a claim (GC removes allocs later).
 * A job registered again under a purged job's ID is a new job (a new CreateIndex, Version 0): the
 * purged job's allocs are not its allocs (plan.ts isAllocOfJob), as Nomad's AllocsByJob answers.
 */
import type { Allocation } from "../../structs/alloc.js";
import { isAllocTerminal } from "../../structs/alloc.js";
import { BerthError, notFound } from "../../structs/errors.js";
import { NS_PER_MS, type Job } from "../../structs/job.js";
import { validateJob } from "../../structs/job_validate.js";
import { registerWarnings } from "../job_register_warnings.js";
import { checkJobDrivers, requireJobNamespace } from "../../structs/namespace.js";
import { nextLaunch, rfc3339In, zoneOf } from "../../structs/periodic.js";
import { isLaunchParent, isPeriodicActive, parentStatus } from "../../structs/periodic_decide.js";
import { isAllocOfJob } from "../scheduler/plan.js";
import type { StateWriter } from "../state/store.js";
import { quarantinedJob, stopQuarantinedJobAllocs } from "../state/quarantine/jobs.js";
import type { ServerDeps } from "../deps.js";
import { revertJobVersion, type RevertRequest } from "./job_revert.js";
import { scaleJob, scaleStatus, type JobScaleStatusResponse, type ScaleRequest } from "./job_scale.js";

export interface JobRegisterResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Warnings: string;
  Index: number;
  /**
   * berth's addition: an active periodic job's next launch, Go's time.Time JSON in the job's zone
   * (as Nomad's plan answers it); absent otherwise. `job run` prints it as Nomad's CLI does.
   */
  NextPeriodicLaunch?: string;
}

export interface JobDeregisterResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Index: number;
}

/** The spec part of a job: what an operator can change. Equal specs mean no new version. */
export function specOf(job: Job): string {
  return JSON.stringify({
    ...job,
    Status: "",
    Version: 0,
    Stable: undefined,
    SubmitTime: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
  });
}

/** Nomad's check-index refusals, word for word. */
function checkEnforcedIndex(want: number, current: number | undefined): void {
  const prefix = `Enforcing job modify index ${want}`;
  if (want === 0 && current !== undefined)
    throw new BerthError("ERR_CONFLICT", `${prefix}: job already exists`);
  if (want !== 0 && current === undefined)
    throw new BerthError("ERR_CONFLICT", `${prefix}: job does not exist`);
  if (want !== 0 && current !== want) {
    throw new BerthError(
      "ERR_CONFLICT",
      `${prefix}: job exists with conflicting job modify index: ${current}`,
    );
  }
}

/**
 * Nomad's FSM records a periodic job's insert time as its launch when it has none yet, so a tick
 * that falls due before any launch, while no leader runs, is caught up by the next leader.
 */
function recordFirstLaunch(tx: StateWriter, job: Job): void {
  if (!isPeriodicActive(job) || tx.getPeriodicLaunch(job.Namespace, job.ID)) return;
  tx.putPeriodicLaunch({
    ID: job.ID,
    Namespace: job.Namespace,
    Launch: job.SubmitTime,
    CreateIndex: 0,
    ModifyIndex: 0,
  });
}

export class JobEndpoint {
  constructor(private readonly deps: ServerDeps) {}

  /**
   * `input` is the body's `Job` value, validated here. `enforceIndex` (Nomad's EnforceIndex with
   * JobModifyIndex, `job run -check-index`): register only if the stored job's JobModifyIndex is
   * that (0: only if there is no such job), so a plan's result is what gets run.
   */
  async register(input: unknown, enforceIndex?: number): Promise<JobRegisterResponse> {
    const spec = validateJob(input);
    const job = await this.deps.store.txn((tx) => {
      // In the write's own transaction, so a namespace deleted meanwhile is seen (namespace.ts).
      checkJobDrivers(requireJobNamespace(tx.getNamespace(spec.Namespace), spec), spec);
      const prev = tx.getJob(spec.Namespace, spec.ID);
      if (enforceIndex !== undefined) checkEnforcedIndex(enforceIndex, prev?.JobModifyIndex);
      if (prev && specOf(prev) === specOf({ ...spec, Status: prev.Status })) return prev;
      const stored = tx.putJob({
        ...spec,
        Status: isLaunchParent(spec) ? parentStatus(spec) : (prev?.Status ?? "pending"),
        Version: prev ? prev.Version + 1 : 0,
        SubmitTime: Date.now() * NS_PER_MS,
        JobModifyIndex: tx.writeIndex,
      });
      recordFirstLaunch(tx, stored);
      return stored;
    });
    const warnings = registerWarnings(this.deps.store, spec);
    // A periodic or parameterized job places nothing itself: no evaluation (Nomad's EvalID "").
    if (isLaunchParent(job)) {
      const next = job.Periodic && isPeriodicActive(job) ? nextLaunch(job.Periodic, Date.now()) : null;
      return {
        EvalID: "",
        EvalCreateIndex: 0,
        JobModifyIndex: job.JobModifyIndex,
        Warnings: warnings,
        Index: this.deps.store.index(),
        NextPeriodicLaunch: next !== null && job.Periodic ? rfc3339In(next, zoneOf(job.Periodic)) : undefined,
      };
    }
    const result = await this.deps.scheduler.evaluate(job.Namespace, job.ID, "job-register");
    return {
      EvalID: result.evalId,
      EvalCreateIndex: Math.max(result.index, job.JobModifyIndex),
      JobModifyIndex: job.JobModifyIndex,
      Warnings: warnings,
      Index: this.deps.store.index(),
    };
  }

  /**
   * Stops the job (and with `purge`, deletes its record). Unknown jobs are not found; a job whose
   * record is quarantined is stopped through its allocs (state/quarantine_jobs.ts).
   */
  async deregister(namespace: string, id: string, purge: boolean): Promise<JobDeregisterResponse> {
    if (!this.deps.store.getJob(namespace, id) && quarantinedJob(this.deps.store, namespace, id))
      return this.deregisterQuarantined(namespace, id, purge);
    const job = this.get(namespace, id);
    let jobModifyIndex = job.JobModifyIndex;
    // A purge records no eval (there is no job left to evaluate), so its EvalID is "".
    let evalId = "";
    if (purge) {
      await this.deps.store.txn((tx) => {
        const nowNs = Date.now() * NS_PER_MS;
        for (const a of tx.allocsByJob(namespace, id)) {
          if (a.DesiredStatus === "run" && !isAllocTerminal(a)) {
            tx.putAlloc({
              ...a,
              DesiredStatus: "stop",
              DesiredDescription: "alloc not needed as job is purged",
              ModifyTime: nowNs,
            });
          }
        }
        tx.deleteJob(namespace, id);
        tx.deletePeriodicLaunch(namespace, id);
      });
      // No job left to evaluate: this only cancels its blocked eval and forgets it as blocked.
      await this.deps.scheduler.evaluate(namespace, id, "job-deregister");
    } else {
      const stored = await this.deps.store.txn((tx) => {
        const cur = tx.getJob(namespace, id);
        if (!cur) throw notFound("job", id);
        return cur.Stop ? cur : tx.putJob({ ...cur, Stop: true, JobModifyIndex: tx.writeIndex });
      });
      jobModifyIndex = stored.JobModifyIndex;
      evalId = (await this.deps.scheduler.evaluate(namespace, id, "job-deregister")).evalId;
    }
    const index = this.deps.store.index();
    return { EvalID: evalId, EvalCreateIndex: index, JobModifyIndex: jobModifyIndex, Index: index };
  }

  /**
   * `job stop` of a quarantined job: its allocs told to stop; with purge, the quarantined record
   * dropped too (the job is gone for good, as a purge leaves it). No eval: there is no job to
   * evaluate, only its blocked eval to cancel.
   */
  private async deregisterQuarantined(
    namespace: string,
    id: string,
    purge: boolean,
  ): Promise<JobDeregisterResponse> {
    await stopQuarantinedJobAllocs(this.deps.store, namespace, id);
    if (purge) await this.deps.store.dropQuarantined("jobs", namespace, id);
    await this.deps.scheduler.evaluate(namespace, id, "job-deregister");
    const index = this.deps.store.index();
    return { EvalID: "", EvalCreateIndex: index, JobModifyIndex: 0, Index: index };
  }

  list(namespace?: string): Job[] {
    return this.deps.store.listJobs(namespace);
  }

  get(namespace: string, id: string): Job {
    const job = this.deps.store.getJob(namespace, id);
    if (!job) throw notFound("job", id);
    return job;
  }

  /** The job's allocs; with `all`, also those of purged jobs that had the same ID (Nomad's `?all=true`). */
  allocations(namespace: string, id: string, all = false): Allocation[] {
    const job = this.get(namespace, id);
    const allocs = this.deps.store.allocsByJob(namespace, id);
    return all ? allocs : allocs.filter((a) => isAllocOfJob(a, job));
  }

  /** Nomad's Job.Revert (job_revert.ts). */
  revert(namespace: string, id: string, req: RevertRequest): Promise<JobRegisterResponse> {
    return revertJobVersion(this.deps, namespace, id, req);
  }

  /** Nomad's Job.Scale and Job.ScaleStatus (job_scale.ts). */
  scale(namespace: string, id: string, req: ScaleRequest): Promise<JobRegisterResponse> {
    return scaleJob(this.deps, namespace, id, req);
  }

  scaleStatus(namespace: string, id: string): JobScaleStatusResponse {
    return scaleStatus(this.deps.store, namespace, id);
  }
}
