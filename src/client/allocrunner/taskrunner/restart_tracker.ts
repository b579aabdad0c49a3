/**
 * The restart policy, as Nomad's client applies it (client/allocrunner/taskrunner/restarts): at
 * most `Attempts` restarts within `Interval` (the window opens at the first restart and a new one
 * at the first failure after it ends), each after `Delay` plus up to 25% jitter. When attempts run
 * out, mode "fail" gives up and mode "delay" waits for the window to end and starts over. A policy
 * with 0 attempts never restarts. A batch task that exits 0 is complete; a service task that exits
 * 0 is restarted like a failed one (Nomad restarts non-batch tasks on success) — except lifecycle
 * tasks: a prestart or poststart task is restarted on success only when it is a sidecar, a
 * poststop task never (Nomad's NewRestartTracker).
 *
 * Each decision carries the task event Nomad records: "Restarting" with "Task restarting in 16.2s"
 * (prefixed by the reason when it is not "Restart within policy") and the delay in
 * Details.start_delay, or "Not Restarting" with the reason.
 */
import type { JobType, RestartPolicy } from "../../../structs/job.js";
import type { TaskLifecycle } from "../../../structs/job_stanzas.js";
import { NS_PER_MS, runsToCompletion } from "../../../structs/job.js";
import { goDuration } from "../../../structs/reschedule.js";

const MINUTE_NS = 60_000 * NS_PER_MS;
/** Nomad's restart jitter: up to this fraction of the delay is added. */
const JITTER = 0.25;

export const REASON_WITHIN_POLICY = "Restart within policy";
export const REASON_NO_RESTARTS = "Policy allows no restarts";
export const REASON_DELAY = "Exceeded allowed attempts, applying a delay";
export const REASON_SUCCESS = "Restart unnecessary as task terminated successfully";
export const REASON_USER = "User requested restart";

export const DEFAULT_BATCH_RESTART: RestartPolicy = {
  Attempts: 3,
  Interval: 24 * 60 * MINUTE_NS,
  Delay: 15_000 * NS_PER_MS,
  Mode: "fail",
};

export const DEFAULT_SERVICE_RESTART: RestartPolicy = {
  Attempts: 2,
  Interval: 30 * MINUTE_NS,
  Delay: 15_000 * NS_PER_MS,
  Mode: "fail",
};

export type RestartDecision =
  | { restart: true; delayMs: number; reason: string; message: string }
  | { restart: false; failed: boolean; reason: string };

export class RestartTracker {
  private windowStart = 0;
  private count = 0;
  private readonly onSuccess: boolean;
  private userRequested = false;

  /** `rand` in [0, 1) draws the jitter (Nomad's rand.Int63n); `lifecycle`: the task's, if any. */
  constructor(
    private readonly policy: RestartPolicy,
    jobType: JobType,
    private readonly rand: () => number = Math.random,
    lifecycle: TaskLifecycle | null = null,
  ) {
    this.onSuccess = RestartTracker.restartsOnSuccess(jobType, lifecycle);
  }

  /** Whether a task that exited 0 is started again. */
  static restartsOnSuccess(jobType: JobType, lifecycle: TaskLifecycle | null): boolean {
    if (lifecycle?.Hook === "prestart" || lifecycle?.Hook === "poststart") return lifecycle.Sidecar;
    if (lifecycle?.Hook === "poststop") return false;
    return !runsToCompletion(jobType);
  }

  /**
   * The task's effective policy: the task's own (the server merged it over the group's), else the
   * group's, else the job type's default.
   */
  static policyFor(jobType: JobType, task: RestartPolicy | null, group: RestartPolicy | null): RestartPolicy {
    return task ?? group ?? (runsToCompletion(jobType) ? DEFAULT_BATCH_RESTART : DEFAULT_SERVICE_RESTART);
  }

  /**
   * The next exit is an operator's `alloc restart` (Nomad's non-failure restart): the task starts
   * again at once, and the restart counts against no attempt.
   */
  requestRestart(): void {
    this.userRequested = true;
  }

  /** `success`: the task exited 0 on its own (not a setup failure, not a hook-requested restart). */
  next(success: boolean, nowMs = Date.now()): RestartDecision {
    if (this.userRequested) {
      this.userRequested = false;
      // The runner prefixes the reason it stopped the task for (REASON_USER) to the message.
      return {
        restart: true,
        delayMs: 0,
        reason: REASON_USER,
        message: `Task restarting in ${goDuration(0)}`,
      };
    }
    const onSuccess = this.onSuccess;
    if (this.policy.Attempts === 0) {
      if (success && !onSuccess) return { restart: false, failed: false, reason: REASON_SUCCESS };
      return { restart: false, failed: true, reason: REASON_NO_RESTARTS };
    }
    const intervalMs = this.policy.Interval / NS_PER_MS;
    if (this.count === 0 || nowMs > this.windowStart + intervalMs) {
      this.windowStart = nowMs;
      this.count = 0;
    }
    this.count++;
    if (success && !onSuccess) return { restart: false, failed: false, reason: REASON_SUCCESS };
    if (this.count > this.policy.Attempts) {
      if (this.policy.Mode === "fail") {
        return {
          restart: false,
          failed: true,
          reason: `Exceeded allowed attempts ${this.policy.Attempts} in interval ${goDuration(this.policy.Interval)} and mode is "fail"`,
        };
      }
      // Wait for the window to end; the next failure after it opens a new one.
      const delayMs = Math.max(0, this.windowStart + intervalMs - nowMs);
      this.count = 0;
      return restarting(REASON_DELAY, delayMs);
    }
    const d = Math.max(this.policy.Delay, 1);
    return restarting(REASON_WITHIN_POLICY, (d + Math.floor(this.rand() * d) * JITTER) / NS_PER_MS);
  }
}

/** Nomad's "Restarting" DisplayMessage: the reason is shown unless it is the ordinary one. */
function restarting(reason: string, delayMs: number): RestartDecision {
  const inText = `Task restarting in ${goDuration(Math.round(delayMs * NS_PER_MS))}`;
  return {
    restart: true,
    delayMs,
    reason,
    message: reason === REASON_WITHIN_POLICY ? inText : `${reason} - ${inText}`,
  };
}

export function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  return `${ms / 1000}s`;
}
