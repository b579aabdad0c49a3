/**
 * The restart policy, as Nomad applies it: at most `Attempts` restarts within `Interval` (the window
 * opens at the first restart), `Delay` between them; when attempts run out, mode "fail" gives up and
 * mode "delay" waits for the window to end and starts over. A batch task that exits 0 is complete.
 */
import type { JobType, RestartPolicy } from "../../../structs/job.js";
import { NS_PER_MS } from "../../../structs/job.js";

const MINUTE_NS = 60_000 * NS_PER_MS;

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
  { restart: true; delayMs: number; reason: string } | { restart: false; failed: boolean; reason: string };

export class RestartTracker {
  private windowStart = 0;
  private count = 0;

  constructor(
    private readonly policy: RestartPolicy,
    private readonly jobType: JobType,
  ) {}

  static policyFor(jobType: JobType, task: RestartPolicy | null, group: RestartPolicy | null): RestartPolicy {
    return task ?? group ?? (jobType === "batch" ? DEFAULT_BATCH_RESTART : DEFAULT_SERVICE_RESTART);
  }

  /** `success`: the task exited 0 on its own (not a setup failure, not a hook-requested restart). */
  next(success: boolean, nowMs = Date.now()): RestartDecision {
    if (success && this.jobType === "batch") {
      return { restart: false, failed: false, reason: "Task completed successfully" };
    }
    const intervalMs = this.policy.Interval / NS_PER_MS;
    const delayMs = this.policy.Delay / NS_PER_MS;
    if (this.count === 0 || nowMs - this.windowStart > intervalMs) {
      this.windowStart = nowMs;
      this.count = 0;
    }
    this.count++;
    if (this.count <= this.policy.Attempts) {
      return { restart: true, delayMs, reason: success ? "Task exited" : "Restart within policy" };
    }
    if (this.policy.Mode === "delay") {
      const waitMs = Math.max(delayMs, this.windowStart + intervalMs - nowMs);
      this.count = 0;
      return { restart: true, delayMs: waitMs, reason: "Exceeded allowed attempts, applying a delay" };
    }
    return {
      restart: false,
      failed: true,
      reason: `Exceeded allowed attempts ${this.policy.Attempts} in interval ${formatMs(intervalMs)} and mode is "fail"`,
    };
  }
}

export function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  return `${ms / 1000}s`;
}
