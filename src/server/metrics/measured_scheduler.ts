/**
 * The scheduler with its passes measured, without touching the scheduler's own files: every pass
 * (an RPC's, a blocked job's retry, a delayed reschedule, the start-up pass) goes through
 * `evaluate`, which this subclass times.
 *
 *   berth.server.scheduler.eval                {trigger, outcome}  timer: planning + the pass's commit
 *   berth.server.scheduler.allocs_placed       {trigger}           counter: allocs placed by passes
 *   berth.server.scheduler.placement_failures  {trigger}           counter: task groups with allocs
 *                                                                    that found no node
 * `outcome` is `placed` (the pass placed or stopped allocs), `blocked` (some alloc found no node),
 * `noop` or `error`. With several servers only the leader runs passes (leader/scheduler_front.ts),
 * so these count on the leader; a follower's stay at what it ran while it led.
 */
import type { EvalTrigger } from "../../structs/eval.js";
import type { Logger } from "../../internal/log.js";
import type { CounterMetric, Telemetry, TimerMetric } from "../../internal/metrics/telemetry.js";
import type { StateStore } from "../state/store.js";
import type { EvalOptions, EvalResult } from "../scheduler/evaluate_in.js";
import { Scheduler } from "../scheduler/scheduler.js";

export class MeasuredScheduler extends Scheduler {
  private readonly timing: TimerMetric<"trigger" | "outcome">;
  private readonly placed: CounterMetric<"trigger">;
  private readonly failures: CounterMetric<"trigger">;

  constructor(store: StateStore, log: Logger, t: Telemetry) {
    super(store, log);
    this.timing = t.timer(
      ["server", "scheduler", "eval"],
      "Time a scheduler pass took (planning and its commit), by trigger and outcome.",
      ["trigger", "outcome"],
    );
    this.placed = t.counter(
      ["server", "scheduler", "allocs_placed"],
      "Allocations the scheduler placed, by trigger.",
      ["trigger"],
    );
    this.failures = t.counter(
      ["server", "scheduler", "placement_failures"],
      "Task groups whose allocations found no node in a pass, by trigger.",
      ["trigger"],
    );
  }

  override async evaluate(
    namespace: string,
    id: string,
    trigger: EvalTrigger = "job-register",
    opts: EvalOptions = {},
  ): Promise<EvalResult> {
    const started = performance.now();
    let outcome = "error";
    try {
      const r = await super.evaluate(namespace, id, trigger, opts);
      outcome = r.failures.length > 0 ? "blocked" : r.placed + r.stopped > 0 ? "placed" : "noop";
      if (r.placed > 0) this.placed.inc({ trigger }, r.placed);
      if (r.failures.length > 0) this.failures.inc({ trigger }, r.failures.length);
      return r;
    } finally {
      this.timing.observe({ trigger, outcome }, performance.now() - started);
    }
  }
}
