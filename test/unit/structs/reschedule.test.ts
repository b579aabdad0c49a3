import { test } from "node:test";
import assert from "node:assert/strict";
import type { Allocation } from "../../../src/structs/alloc.js";
import type { JobType } from "../../../src/structs/job.js";
import {
  batchFollowups,
  defaultReschedulePolicy,
  goDuration,
  nextDelay,
  nextReschedule,
  rescheduleDecision,
  reschedulePolicyProblems,
  trackerForReplacement,
  type ReschedulePolicy,
  type RescheduleEvent,
} from "../../../src/structs/reschedule.js";
import { groupReschedulePolicy } from "../../../src/structs/policy_validate.js";

const S = 1_000_000_000;
const T0 = 1_700_000_000 * S;

function policy(p: Partial<ReschedulePolicy>): ReschedulePolicy {
  return {
    Attempts: 0,
    Interval: 0,
    Delay: 5 * S,
    DelayFunction: "constant",
    MaxDelay: 0,
    Unlimited: true,
    ...p,
  };
}

/** A failed alloc of a group with `p`, failed at `failAt`, with these earlier reschedules. */
function failed(
  p: ReschedulePolicy | null,
  failAt: number,
  events: RescheduleEvent[] = [],
  type: JobType = "service",
) {
  return {
    ID: "a2",
    NodeID: "n1",
    ClientStatus: "failed",
    DesiredStatus: "run",
    TaskGroup: "g",
    TaskStates: {},
    ModifyTime: failAt,
    FollowupEvalID: "",
    RescheduleTracker: events.length ? { Events: events } : null,
    Job: { Type: type, TaskGroups: [{ Name: "g", ReschedulePolicy: p }] },
  } as unknown as Allocation;
}

const ev = (at: number, delay: number): RescheduleEvent => ({
  RescheduleTime: at,
  PrevAllocID: "x",
  PrevNodeID: "n",
  Delay: delay,
});

test("defaults per job type are Nomad's: service unlimited exponential 30s..1h, batch 1 in 24h at 5s, system none", () => {
  assert.deepEqual(defaultReschedulePolicy("service"), {
    Attempts: 0,
    Interval: 0,
    Delay: 30 * S,
    DelayFunction: "exponential",
    MaxDelay: 3600 * S,
    Unlimited: true,
  });
  assert.deepEqual(defaultReschedulePolicy("batch"), {
    Attempts: 1,
    Interval: 24 * 3600 * S,
    Delay: 5 * S,
    DelayFunction: "constant",
    MaxDelay: 0,
    Unlimited: false,
  });
  assert.equal(defaultReschedulePolicy("system"), null);
  // Both defaults pass Nomad's own validation.
  assert.deepEqual(reschedulePolicyProblems(defaultReschedulePolicy("service")!), []);
  assert.deepEqual(reschedulePolicyProblems(defaultReschedulePolicy("batch")!), []);
});

test("delay functions: constant stays, exponential doubles, fibonacci adds the last two; all capped at max_delay", () => {
  const c = policy({ DelayFunction: "constant", Delay: 5 * S });
  assert.equal(nextDelay(failed(c, T0), c), 5 * S);
  assert.equal(nextDelay(failed(c, T0, [ev(T0 - 10 * S, 5 * S)]), c), 5 * S);

  const e = policy({ DelayFunction: "exponential", Delay: 5 * S, MaxDelay: 30 * S });
  const expSeries = [5, 10, 20, 30, 30];
  const evs: RescheduleEvent[] = [];
  for (const want of expSeries) {
    // Failing right after each reschedule keeps the series going (no reset).
    const at = T0 + evs.length * S;
    assert.equal(nextDelay(failed(e, at, evs), e), want * S);
    evs.push(ev(at, want * S));
  }

  const f = policy({ DelayFunction: "fibonacci", Delay: 5 * S, MaxDelay: 50 * S });
  const fibSeries = [5, 5, 10, 15, 25, 40, 50];
  const fevs: RescheduleEvent[] = [];
  for (const want of fibSeries) {
    const at = T0 + fevs.length * S;
    assert.equal(nextDelay(failed(f, at, fevs), f), want * S);
    fevs.push(ev(at, want * S));
  }
});

test("a capped series starts again at delay when the alloc ran longer than max_delay since the last reschedule", () => {
  const e = policy({ DelayFunction: "exponential", Delay: 5 * S, MaxDelay: 20 * S });
  const history = [ev(T0, 20 * S)];
  assert.equal(nextDelay(failed(e, T0 + 5 * S, history), e), 20 * S, "failed soon: stays at the cap");
  assert.equal(nextDelay(failed(e, T0 + 600 * S, history), e), 5 * S, "ran 10 minutes: reset");
});

test("attempts within interval: limited policies stop, older attempts fall out of the window, unlimited never stops", () => {
  const p = policy({ Unlimited: false, Attempts: 2, Interval: 3600 * S, Delay: 5 * S });
  assert.equal(nextReschedule(failed(p, T0))!.eligible, true);
  const one = [ev(T0 - 60 * S, 5 * S)];
  const r1 = nextReschedule(failed(p, T0, one))!;
  assert.deepEqual([r1.eligible, r1.attempt, r1.attempts, r1.time], [true, 2, 2, T0 + 5 * S]);
  const two = [ev(T0 - 120 * S, 5 * S), ev(T0 - 60 * S, 5 * S)];
  assert.equal(nextReschedule(failed(p, T0, two))!.eligible, false, "2 of 2 used in the last hour");
  const old = [ev(T0 - 7200 * S, 5 * S), ev(T0 - 60 * S, 5 * S)];
  assert.equal(nextReschedule(failed(p, T0, old))!.eligible, true, "one attempt is older than the interval");

  const u = policy({ Unlimited: true, DelayFunction: "exponential", Delay: 5 * S, MaxDelay: 60 * S });
  const many = Array.from({ length: 20 }, (_, i) => ev(T0 - (20 - i) * S, 60 * S));
  assert.equal(nextReschedule(failed(u, T0, many))!.eligible, true);

  const off = policy({ Unlimited: false, Attempts: 0 });
  assert.equal(nextReschedule(failed(off, T0)), null, "attempts 0 and not unlimited: disabled");
  assert.equal(nextReschedule(failed(null, T0)), null, "no policy (system job)");
});

test("decision: now inside the 1s window or for its own follow-up eval, later before, never when exhausted", () => {
  const p = policy({ Unlimited: false, Attempts: 1, Interval: 3600 * S, Delay: 10 * S });
  const a = failed(p, T0);
  assert.deepEqual(rescheduleDecision(a, T0, ""), { kind: "later", time: T0 + 10 * S, delay: 10 * S });
  assert.deepEqual(rescheduleDecision(a, T0 + 9.5 * S, ""), { kind: "now", delay: 10 * S });
  assert.deepEqual(rescheduleDecision({ ...a, FollowupEvalID: "f1" }, T0 + 2 * S, "f1"), {
    kind: "now",
    delay: 10 * S,
  });
  assert.deepEqual(rescheduleDecision({ ...a, FollowupEvalID: "f1" }, T0 + 2 * S, "other").kind, "later");
  assert.deepEqual(rescheduleDecision(failed(p, T0, [ev(T0 - S, 10 * S)]), T0 + 60 * S, "").kind, "no");
  assert.equal(rescheduleDecision({ ...a, DesiredStatus: "stop" }, T0 + 60 * S, "").kind, "no");
});

test("the replacement's tracker: events within the interval (limited) or the last five (unlimited), plus this one", () => {
  const lim = policy({ Unlimited: false, Attempts: 3, Interval: 600 * S, Delay: 5 * S });
  const t = trackerForReplacement(
    failed(lim, T0, [ev(T0 - 900 * S, 5 * S), ev(T0 - 60 * S, 5 * S)]),
    T0 + 5 * S,
  );
  assert.deepEqual(
    t.Events.map((e) => [e.RescheduleTime, e.PrevAllocID, e.Delay]),
    [
      [T0 - 60 * S, "x", 5 * S],
      [T0 + 5 * S, "a2", 5 * S],
    ],
  );
  const unl = policy({ Unlimited: true, DelayFunction: "exponential", Delay: 5 * S, MaxDelay: 3600 * S });
  const eight = Array.from({ length: 8 }, (_, i) => ev(T0 - (8 - i) * S, 5 * S));
  const u = trackerForReplacement(failed(unl, T0, eight), T0);
  assert.equal(u.Events.length, 6);
  assert.equal(u.Events.at(-1)!.Delay, 10 * S);
});

test("follow-ups: due times within 5s share one eval that waits until the first", () => {
  const b = batchFollowups([{ time: 12 * S }, { time: 10 * S }, { time: 14 * S }, { time: 16 * S }]);
  assert.deepEqual(
    b.map((x) => [x.waitUntil, x.items.length]),
    [
      [10 * S, 3],
      [16 * S, 1],
    ],
  );
});

test("validation: Nomad's rules and words; a group block merges over the job's and the type's defaults", () => {
  assert.match(
    reschedulePolicyProblems(policy({ Delay: 1 * S })).join(),
    /Delay cannot be less than 5s \(got 1s\)/,
  );
  assert.match(
    reschedulePolicyProblems(policy({ DelayFunction: "exponential", Delay: 10 * S, MaxDelay: 6 * S })).join(),
    /Max Delay cannot be less than Delay 10s \(got 6s\)/,
  );
  assert.match(
    reschedulePolicyProblems(
      policy({ Unlimited: false, Attempts: 5, Interval: 20 * S, Delay: 5 * S }),
    ).join(),
    /can only make 5 attempts in 20s/,
  );
  assert.match(
    reschedulePolicyProblems(policy({ Unlimited: true, Attempts: 2, Interval: 60 * S })).join(),
    /Unlimited/,
  );
  assert.deepEqual(
    reschedulePolicyProblems(policy({ Unlimited: false, Attempts: 0, Delay: 0 })),
    [],
    "disabled",
  );

  const merged = groupReschedulePolicy(
    "batch",
    { Attempts: 3, Interval: 3600 * S },
    "Job.TaskGroups[0].ReschedulePolicy",
    {
      Delay: 10 * S,
    },
  );
  assert.deepEqual(merged, {
    Attempts: 3,
    Interval: 3600 * S,
    Delay: 10 * S,
    DelayFunction: "constant",
    MaxDelay: 0,
    Unlimited: false,
  });
  assert.throws(
    () =>
      groupReschedulePolicy("service", undefined, "Job.TaskGroups[0].ReschedulePolicy", {
        DelayFunction: "linear",
      }),
    /Job\.TaskGroups\[0\]\.ReschedulePolicy\.DelayFunction: unknown delay function "linear"/,
  );
  assert.throws(
    () => groupReschedulePolicy("system", undefined, "G", { Attempts: 1 }),
    /G: System or sysbatch jobs should not have a reschedule policy/,
  );
  assert.equal(groupReschedulePolicy("system", undefined, "G", undefined), null);
});

test("goDuration prints as Go's time.Duration", () => {
  assert.deepEqual([5 * S, 90 * S, 24 * 3600 * S, 1800 * S, 1.5 * S, 250_000_000, 0].map(goDuration), [
    "5s",
    "1m30s",
    "24h0m0s",
    "30m0s",
    "1.5s",
    "250ms",
    "0s",
  ]);
});
