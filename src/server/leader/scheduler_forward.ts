/**
 * Scheduler calls sent to the leader over the server↔server channel (peer_http.ts: same listener,
 * same cluster secret and TLS peer rules, refused with 403 before the body is read):
 *
 *   POST /v1/internal/scheduler
 *   {"Op": "evaluate", "Namespace": "default", "JobID": "web", "Trigger": "job-register",
 *    "Options": {"Quiet": false, "FollowupEvalID": ""}, "MinIndex": 42}
 *     → 200 {"Result": EvalResult}
 *   {"Op": "retry-blocked", "MinIndex": 42}
 *     → 200 {} once the leader has started the retry (it runs on without the caller)
 *
 * MinIndex is the sender's state index when it sent: the leader first waits until its own replica
 * has applied it (the job just registered, the node just registered), so the pass decides from
 * what the sender saw. A server that is not the leader answers 503 ERR_NO_LEADER and the sender
 * asks again whoever leads then (scheduler_front.ts); the receiver only ever runs the call on its
 * own scheduler, so a forwarded call is never forwarded again.
 */
import type http from "node:http";
import type { EvalTrigger } from "../../structs/eval.js";
import { BerthError, isBerthError, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import type { Logger } from "../../internal/log.js";
import type { ServerTls } from "../../internal/tls.js";
import type { JobScheduler } from "../deps.js";
import { readJson, sendError } from "../wire/http_io.js";
import type { EvalOptions, EvalResult } from "../scheduler/evaluate_in.js";
import { awaitIndex, type IndexedStore } from "./await_index.js";
import { peerRefusal, postToPeer } from "./peer_http.js";

export const SCHEDULER_PATH = "/v1/internal/scheduler";

export type SchedulerCall =
  | {
      Op: "evaluate";
      Namespace: string;
      JobID: string;
      Trigger: EvalTrigger;
      Options: { Quiet?: boolean; FollowupEvalID?: string };
      MinIndex: number;
    }
  | { Op: "retry-blocked"; MinIndex: number };

/** Every trigger, so a new EvalTrigger that is not listed here does not compile. */
const TRIGGERS: Record<EvalTrigger, true> = {
  "job-register": true,
  "job-deregister": true,
  "node-update": true,
  "node-drain": true,
  "alloc-stop": true,
  "alloc-failure": true,
  "queued-allocs": true,
  "deployment-watcher": true,
  "max-disconnect-timeout": true,
  reconnect: true,
  "periodic-job": true,
  "job-scaling": true,
};

/** How long the leader waits for its state to reach a call's MinIndex. */
const CATCH_UP_MS = 5_000;
/** How long a forwarded pass may take (a pass over a very large job takes seconds). */
export const EVALUATE_TIMEOUT_MS = 60_000;
const RETRY_TIMEOUT_MS = CATCH_UP_MS + 5_000;

/** The wire form of a pass's options. */
export function wireOptions(o: EvalOptions): { Quiet?: boolean; FollowupEvalID?: string } {
  return {
    Quiet: o.quiet,
    FollowupEvalID: o.followupEvalId,
  };
}

/** Checks a received call field by field; each problem is an ERR_VALIDATION naming its field. */
export function parseSchedulerCall(body: unknown): SchedulerCall {
  if (!isObject(body)) throw validationError("body", "must be a JSON object");
  const { Op, MinIndex } = body;
  if (typeof MinIndex !== "number" || !Number.isSafeInteger(MinIndex) || MinIndex < 0) {
    throw validationError("MinIndex", "must be a non-negative integer");
  }
  if (Op === "retry-blocked") return { Op, MinIndex };
  if (Op !== "evaluate") {
    throw validationError("Op", `${JSON.stringify(Op)} is not "evaluate" or "retry-blocked"`);
  }
  const { Namespace, JobID, Trigger, Options } = body;
  if (typeof Namespace !== "string" || Namespace === "")
    throw validationError("Namespace", "must be a namespace name");
  if (typeof JobID !== "string" || JobID === "") throw validationError("JobID", "must be a job ID");
  if (typeof Trigger !== "string" || !Object.hasOwn(TRIGGERS, Trigger)) {
    throw validationError("Trigger", `${JSON.stringify(Trigger)} is not an eval trigger`);
  }
  const opts = Options ?? {};
  if (!isObject(opts)) throw validationError("Options", "must be a JSON object");
  const { Quiet, FollowupEvalID } = opts;
  if (Quiet !== undefined && typeof Quiet !== "boolean")
    throw validationError("Options.Quiet", "must be a boolean");
  if (FollowupEvalID !== undefined && typeof FollowupEvalID !== "string") {
    throw validationError("Options.FollowupEvalID", "must be an eval ID");
  }
  return {
    Op,
    Namespace,
    JobID,
    Trigger: Trigger as EvalTrigger,
    Options: {
      Quiet,
      FollowupEvalID: FollowupEvalID || undefined,
    },
    MinIndex,
  };
}

/** The receiving end, on every server's listener; only the leader runs what it receives. */
export class SchedulerForwardServer {
  constructor(
    private readonly secret: () => string,
    private readonly tls: ServerTls | undefined,
    private readonly isLeader: () => boolean,
    private readonly local: JobScheduler,
    private readonly store: IndexedStore,
    private readonly log: Logger,
  ) {}

  /** Takes the request when it is a scheduler call (answering it); false leaves it to others. */
  handle(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    if ((req.url ?? "").split("?")[0] !== SCHEDULER_PATH) return false;
    void this.serve(req, res).catch((err: unknown) => sendError(res, err));
    return true;
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method !== "POST") {
      throw new BerthError("ERR_METHOD_NOT_ALLOWED", `no route for ${req.method ?? "?"} ${SCHEDULER_PATH}`);
    }
    const why = peerRefusal(req, this.tls, this.secret(), "scheduler call");
    if (why !== undefined) {
      this.log.warn("refused a forwarded scheduler call", { client: req.socket.remoteAddress, reason: why });
      req.resume();
      throw new BerthError("ERR_PERMISSION_DENIED", `Permission denied: ${why}`);
    }
    const call = parseSchedulerCall(await readJson(req));
    this.mustLead();
    if (!(await awaitIndex(this.store, call.MinIndex, CATCH_UP_MS))) {
      throw new BerthError(
        "ERR_STATE_UNAVAILABLE",
        `the leader's state has not reached index ${call.MinIndex} within ${CATCH_UP_MS} ms`,
      );
    }
    // Leadership may have moved while this server caught up.
    this.mustLead();
    if (call.Op === "retry-blocked") {
      void this.local.retryBlocked();
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end("{}");
      return;
    }
    const opts: EvalOptions = {
      quiet: call.Options.Quiet,
      followupEvalId: call.Options.FollowupEvalID || undefined,
    };
    const result = await this.local.evaluate(call.Namespace, call.JobID, call.Trigger, opts);
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ Result: result }));
  }

  private mustLead(): void {
    if (!this.isLeader()) throw new BerthError("ERR_NO_LEADER", "this server is not the cluster leader");
  }
}

/** How the front reaches the leader (a fake in unit tests). */
export interface SchedulerPeer {
  /**
   * Sends `call` to the server at `addr` (its HTTPAddr): the pass's result for "evaluate", null
   * for "retry-blocked". A server that cannot be reached rejects with ERR_RPC_UNAVAILABLE; the
   * leader's own refusals keep their codes (ERR_NO_LEADER when it no longer leads).
   */
  send(addr: string, call: SchedulerCall, signal: AbortSignal): Promise<EvalResult | null>;
}

/** The sending end, over HTTP with the cluster secret (and TLS as configured). */
export class HttpSchedulerPeer implements SchedulerPeer {
  constructor(
    private readonly secret: () => string,
    private readonly tls: ServerTls | undefined,
  ) {}

  async send(addr: string, call: SchedulerCall, signal: AbortSignal): Promise<EvalResult | null> {
    let answer: unknown;
    try {
      answer = await postToPeer(addr, SCHEDULER_PATH, JSON.stringify(call), {
        secret: this.secret(),
        tls: this.tls,
        timeoutMs: call.Op === "evaluate" ? EVALUATE_TIMEOUT_MS : RETRY_TIMEOUT_MS,
        signal,
      });
    } catch (err) {
      if (isBerthError(err)) throw err;
      if (signal.aborted) throw new BerthError("ERR_ABORTED", "the server is stopping", { cause: err });
      throw new BerthError(
        "ERR_RPC_UNAVAILABLE",
        `the leader at ${addr} cannot be reached: ${(err as Error).message}`,
      );
    }
    if (call.Op === "retry-blocked") return null;
    const result = isObject(answer) ? answer.Result : undefined;
    if (!isObject(result) || typeof result.evalId !== "string" || typeof result.index !== "number") {
      throw new BerthError("ERR_INTERNAL", `the leader at ${addr} answered no pass result`);
    }
    return result as unknown as EvalResult;
  }
}
