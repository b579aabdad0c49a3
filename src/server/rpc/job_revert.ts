/**
 * Nomad's Job.Revert (`PUT /v1/job/:id/revert`): registers a kept version of the job again as its
 * next version (deploymentwatcher/watcher.ts revertJob, which auto_revert uses too) and evaluates
 * it (TriggeredBy `job-register`, as Nomad's revert is a register). Refusals as Nomad's: the
 * current version ("can't revert to current version"), a version not kept, and EnforcePriorVersion
 * that is not the current version.
 */
import { BerthError, notFound, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import type { ServerDeps } from "../deps.js";
import { revertJob } from "../deploymentwatcher/watcher.js";

/** Nomad's JobRegisterResponse, as revert and scale answer it (job.ts's without NextPeriodicLaunch). */
export interface JobWriteResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Warnings: string;
  Index: number;
}

/** Nomad's JobRevertRequest, as read from the body. */
export interface RevertRequest {
  version: number;
  /** Revert only if the current version is this one. */
  enforcePriorVersion?: number;
}

const isVersion = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;

export function revertRequestOf(body: unknown, jobId: string): RevertRequest {
  if (!isObject(body)) throw validationError("body", "must be a JSON object");
  if (body.JobID !== undefined && body.JobID !== "" && body.JobID !== jobId)
    throw validationError("JobID", "does not match the job in the URL");
  if (!isVersion(body.JobVersion)) throw validationError("JobVersion", "must be a non-negative integer");
  const out: RevertRequest = { version: body.JobVersion };
  const prior = body.EnforcePriorVersion;
  if (prior !== undefined && prior !== null) {
    if (!isVersion(prior)) throw validationError("EnforcePriorVersion", "must be a non-negative integer");
    out.enforcePriorVersion = prior;
  }
  return out;
}

export async function revertJobVersion(
  deps: Pick<ServerDeps, "store" | "scheduler">,
  namespace: string,
  jobId: string,
  req: RevertRequest,
): Promise<JobWriteResponse> {
  const job = await deps.store.txn((tx) => {
    const cur = tx.getJob(namespace, jobId);
    if (!cur) throw notFound("job", jobId);
    if (req.enforcePriorVersion !== undefined && req.enforcePriorVersion !== cur.Version)
      throw new BerthError(
        "ERR_CONFLICT",
        `Current job has version ${cur.Version}; enforcing version ${req.enforcePriorVersion}`,
      );
    if (req.version === cur.Version) throw validationError("JobVersion", "can't revert to current version");
    if (!tx.jobVersions(namespace, jobId).some((v) => v.Version === req.version))
      throw new BerthError(
        "ERR_NOT_FOUND",
        `job ${JSON.stringify(jobId)} in namespace ${JSON.stringify(namespace)} at version ${req.version} not found`,
      );
    revertJob(tx, namespace, jobId, req.version, Date.now());
    return tx.getJob(namespace, jobId)!;
  });
  const r = await deps.scheduler.evaluate(job.Namespace, job.ID, "job-register");
  return {
    EvalID: r.evalId,
    EvalCreateIndex: Math.max(r.index, job.JobModifyIndex),
    JobModifyIndex: job.JobModifyIndex,
    Warnings: "",
    Index: deps.store.index(),
  };
}
