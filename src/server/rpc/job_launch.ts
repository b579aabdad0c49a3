/**
 * Launching a parent's child on request: Nomad's Job.Dispatch (a parameterized job's child, with
 * the request's meta and payload) and Periodic.Force (a periodic job's child, now). Both write the
 * child in one transaction of the store, on whichever server took the request, and then ask for
 * the scheduler's pass, which a follower sends to the leader (scheduler_front.ts), as every job
 * write does. A forced launch goes through the periodic launch rule (server/periodic/launch.ts)
 * and records the launch, so the leader's dispatcher counts its next tick from it.
 */
import { BerthError, notFound, validationError } from "../../structs/errors.js";
import { newUuid } from "../../structs/ids.js";
import { NS_PER_MS, type Job } from "../../structs/job.js";
import { isObject, optString, optStringMap } from "../../structs/json_check.js";
import {
  checkDispatch,
  dispatchChildId,
  dispatchedJob,
  isParameterized,
} from "../../structs/parameterized.js";
import { isPeriodicActive } from "../../structs/periodic_decide.js";
import type { ServerDeps } from "../deps.js";
import { launchIn } from "../periodic/launch.js";

/** Nomad's JobDispatchResponse. */
export interface JobDispatchResponse {
  DispatchedJobID: string;
  EvalID: string;
  EvalCreateIndex: number;
  JobCreateIndex: number;
  Index: number;
}

/** Nomad's PeriodicForceResponse. */
export interface PeriodicForceResponse {
  EvalID: string;
  EvalCreateIndex: number;
  Index: number;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** An idempotency token is an identifier a client makes (a UUID, a request ID), not a document. */
const MAX_TOKEN_LENGTH = 256;

/** A request's `Payload`: base64 (Nomad's []byte in JSON); absent or null is empty. */
export function decodePayload(v: unknown): Buffer {
  if (v === undefined || v === null || v === "") return Buffer.alloc(0);
  if (typeof v !== "string" || v.length % 4 !== 0 || !BASE64.test(v))
    throw validationError("Payload", "must be base64-encoded bytes");
  return Buffer.from(v, "base64");
}

export class JobLaunchEndpoint {
  constructor(private readonly deps: ServerDeps) {}

  /**
   * `body` is Nomad's JobDispatchRequest: `{Payload?: base64, Meta?: {k: v}, IdempotencyToken?}`.
   * With a token, a child of the parent that carries it and is not yet collected is the answer (its
   * ID, no new eval): a retried dispatch runs once. Finding it reads the namespace's jobs, as
   * Nomad's prefix scan does; only token-bearing dispatches pay it.
   */
  async dispatch(namespace: string, id: string, body: unknown): Promise<JobDispatchResponse> {
    const req = isObject(body) ? body : {};
    const payload = decodePayload(req.Payload);
    const meta = optStringMap("Meta", req.Meta);
    const token = optString("IdempotencyToken", req.IdempotencyToken, "");
    if (token.length > MAX_TOKEN_LENGTH)
      throw validationError("IdempotencyToken", `must be at most ${MAX_TOKEN_LENGTH} characters`);
    let existing: Job | undefined;
    const child = await this.deps.store.txn((tx) => {
      existing = token
        ? tx.listJobs(namespace).find((j) => j.ParentID === id && j.DispatchIdempotencyToken === token)
        : undefined;
      if (existing) return existing;
      const parent = tx.getJob(namespace, id);
      if (!parent) throw notFound("parameterized job", id);
      if (!isParameterized(parent) || !parent.ParameterizedJob)
        throw validationError("JobID", `Specified job ${JSON.stringify(id)} is not a parameterized job`);
      if (parent.Stop) throw validationError("JobID", `Specified job ${JSON.stringify(id)} is stopped`);
      checkDispatch(parent.ParameterizedJob, payload, meta);
      const nowMs = Date.now();
      const childId = dispatchChildId(id, nowMs, newUuid());
      const job = dispatchedJob(parent, childId, payload, meta, nowMs * NS_PER_MS);
      if (token) job.DispatchIdempotencyToken = token;
      const stored = tx.putJob({ ...job, JobModifyIndex: tx.writeIndex });
      // A periodic parameterized job's child is itself periodic (Nomad): launched by ticks.
      if (isPeriodicActive(stored)) {
        tx.putPeriodicLaunch({
          ID: childId,
          Namespace: namespace,
          Launch: stored.SubmitTime,
          CreateIndex: 0,
          ModifyIndex: 0,
        });
      }
      return stored;
    });
    if (existing || isPeriodicActive(child)) {
      const index = this.deps.store.index();
      return {
        DispatchedJobID: child.ID,
        EvalID: "",
        EvalCreateIndex: 0,
        JobCreateIndex: child.CreateIndex,
        Index: index,
      };
    }
    const result = await this.deps.scheduler.evaluate(namespace, child.ID, "job-register");
    return {
      DispatchedJobID: child.ID,
      EvalID: result.evalId,
      EvalCreateIndex: Math.max(result.index, child.CreateIndex),
      JobCreateIndex: child.CreateIndex,
      Index: this.deps.store.index(),
    };
  }

  /** Launches the periodic job's child now, whatever its schedule and overlap (Nomad's ForceEval). */
  async periodicForce(namespace: string, id: string): Promise<PeriodicForceResponse> {
    const attempt = () =>
      this.deps.store.txn((tx) => {
        const job = tx.getJob(namespace, id);
        if (!job) throw notFound("job", id);
        if (!job.Periodic) throw validationError("JobID", "can't force launch non-periodic job");
        return launchIn(tx, namespace, id, "force", Date.now());
      });
    let out = await attempt();
    // A child is named by the second: one launched this second (a tick) is waited out once.
    if (!out.decision.launch && out.decision.reason === "already-launched") {
      await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
      out = await attempt();
    }
    if (!out.decision.launch) {
      if (out.decision.reason === "already-launched")
        throw new BerthError(
          "ERR_CONFLICT",
          `force launch for job ${JSON.stringify(id)} failed: ${JSON.stringify(out.childId)} already exists`,
        );
      throw validationError(
        "JobID",
        `force launch for job ${JSON.stringify(id)} failed: can't force run non-tracked job ${JSON.stringify(id)}`,
      );
    }
    const result = await this.deps.scheduler.evaluate(namespace, out.childId, "periodic-job");
    return { EvalID: result.evalId, EvalCreateIndex: result.index, Index: this.deps.store.index() };
  }
}
