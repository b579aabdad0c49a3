/**
 * Periodic jobs' pure parts (structs/periodic.ts, periodic_decide.ts): Nomad's cron forms (5, 6
 * with a year, 7 with seconds, shorthands), next launches in a time zone across DST, the config's
 * canonical form and refusals, the children's IDs, and the launch rule that keeps one launch per
 * due tick across leaders (catch-up once, never twice) and honours prohibit_overlap.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  launchTimeOfChild,
  nextLaunch,
  periodicChildId,
  rfc3339In,
  validatePeriodic,
} from "../../../src/structs/periodic.js";
import { decideLaunch, isLaunchParent, isPeriodicActive } from "../../../src/structs/periodic_decide.js";
import type { PeriodicConfig } from "../../../src/structs/job_stanzas.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { Job } from "../../../src/structs/job.js";

const cfg = (over: Partial<PeriodicConfig>): PeriodicConfig => ({
  Enabled: true,
  Spec: "",
  Specs: [],
  SpecType: "cron",
  ProhibitOverlap: false,
  TimeZone: "UTC",
  ...over,
});
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const at = (s: string) => Date.parse(s);

describe("next launch", () => {
  it("takes 5-field crons at second 0, strictly after the given instant", () => {
    const c = cfg({ Spec: "*/15 * * * *" });
    assert.equal(iso(nextLaunch(c, at("2024-05-01T10:07:30Z"))), "2024-05-01T10:15:00.000Z");
    assert.equal(iso(nextLaunch(c, at("2024-05-01T10:15:00Z"))), "2024-05-01T10:30:00.000Z");
  });

  it("takes Nomad's 7-field crons with seconds, and 6 fields as a year", () => {
    assert.equal(
      iso(nextLaunch(cfg({ Spec: "*/5 * * * * * *" }), at("2024-05-01T10:00:01Z"))),
      "2024-05-01T10:00:05.000Z",
    );
    assert.equal(
      iso(nextLaunch(cfg({ Spec: "0 12 1 1 * 2030" }), at("2024-05-01T10:00:00Z"))),
      "2030-01-01T12:00:00.000Z",
    );
    assert.equal(nextLaunch(cfg({ Spec: "0 12 1 1 * 2020" }), at("2024-05-01T10:00:00Z")), null);
  });

  it("takes the earliest of several crons, and the shorthands", () => {
    const c = cfg({ Specs: ["0 18 * * *", "30 9 * * *"] });
    assert.equal(iso(nextLaunch(c, at("2024-05-01T10:00:00Z"))), "2024-05-01T18:00:00.000Z");
    assert.equal(iso(nextLaunch(c, at("2024-05-01T08:00:00Z"))), "2024-05-01T09:30:00.000Z");
    assert.equal(
      iso(nextLaunch(cfg({ Spec: "@daily" }), at("2024-05-01T08:00:00Z"))),
      "2024-05-02T00:00:00.000Z",
    );
  });

  it("reads the cron in the job's time zone, across DST", () => {
    const berlin = cfg({ Spec: "0 9 * * *", TimeZone: "Europe/Berlin" });
    // CET (UTC+1) before 31 March 2024, CEST (UTC+2) from then on.
    assert.equal(iso(nextLaunch(berlin, at("2024-03-30T00:00:00Z"))), "2024-03-30T08:00:00.000Z");
    assert.equal(iso(nextLaunch(berlin, at("2024-03-30T12:00:00Z"))), "2024-03-31T07:00:00.000Z");
    // 02:30 does not exist in New York on 10 March 2024: the clock jumps to 03:30 EDT.
    const ny = cfg({ Spec: "30 2 * * *", TimeZone: "America/New_York" });
    assert.equal(iso(nextLaunch(ny, at("2024-03-09T12:00:00Z"))), "2024-03-10T07:30:00.000Z");
    assert.equal(iso(nextLaunch(ny, at("2024-03-10T12:00:00Z"))), "2024-03-11T06:30:00.000Z");
  });

  it("is null for a disabled config", () => {
    assert.equal(nextLaunch(cfg({ Spec: "* * * * *", Enabled: false }), Date.now()), null);
  });

  it("writes the instant as Go's time.Time in the zone", () => {
    const t = Date.UTC(2024, 6, 1, 12, 0, 5);
    assert.equal(rfc3339In(t, "Europe/Berlin"), "2024-07-01T14:00:05+02:00");
    assert.equal(rfc3339In(t, "UTC"), "2024-07-01T12:00:05Z");
    assert.equal(rfc3339In(t, "Asia/Kolkata"), "2024-07-01T17:30:05+05:30");
  });
});

describe("the periodic block", () => {
  it("is canonicalized as Nomad's api does", () => {
    assert.deepEqual(validatePeriodic("P", { Specs: ["@daily"] }), {
      Enabled: true,
      Spec: "",
      Specs: ["@daily"],
      SpecType: "cron",
      ProhibitOverlap: false,
      TimeZone: "UTC",
    });
  });

  it("refuses what Nomad refuses, naming the field", () => {
    assert.throws(() => validatePeriodic("P", {}), /P\.Spec: Must specify a spec/);
    assert.throws(() => validatePeriodic("P", { Spec: "61 * * * *" }), /P\.Spec: Invalid cron spec/);
    assert.throws(() => validatePeriodic("P", { Specs: ["* * *"] }), /P\.Specs\[0\]: Invalid cron spec/);
    assert.throws(
      () => validatePeriodic("P", { Spec: "@daily", TimeZone: "Mars/Olympus" }),
      /P\.TimeZone: Invalid time zone/,
    );
    assert.throws(() => validatePeriodic("P", { Spec: "@daily", Specs: ["@daily"] }), /Only cron or crons/);
    assert.throws(() => validatePeriodic("P", { Spec: "@daily", Foo: 1 }), /P\.Foo: unknown field/);
    // Disabled: not checked further, as Nomad's Validate.
    assert.equal(validatePeriodic("P", { Enabled: false }).Enabled, false);
  });

  it("is for batch jobs only", () => {
    const job = (Type: string) => ({
      ID: "j",
      Type,
      Periodic: { Spec: "@daily" },
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }],
    });
    assert.equal(validateJob(job("batch")).Periodic?.Spec, "@daily");
    assert.throws(() => validateJob(job("service")), /Job\.Periodic: Periodic can only be used with "batch"/);
  });
});

describe("children", () => {
  it("are named as Nomad names them, and the name gives the launch time back", () => {
    const id = periodicChildId("nightly", at("2024-05-01T10:00:00.750Z"));
    assert.equal(id, "nightly/periodic-1714557600");
    assert.equal(launchTimeOfChild(id), at("2024-05-01T10:00:00Z"));
    assert.equal(launchTimeOfChild("nightly"), undefined);
  });
});

const periodicJob = (over: Partial<Job> = {}, p: Partial<PeriodicConfig> = {}): Job =>
  ({
    ID: "p",
    Namespace: "default",
    Stop: false,
    Periodic: cfg({ Spec: "0 * * * *", ...p }),
    ...over,
  }) as Job;

describe("the launch rule", () => {
  const T = at("2024-05-01T10:00:00Z");
  const base = { kind: "scheduled" as const, childRunning: false, childExists: false };

  it("launches a due tick once: a second leader asking for the same tick sees the launch", () => {
    assert.deepEqual(decideLaunch({ ...base, job: periodicJob(), atMs: T, lastMs: T - 3_600_000 }), {
      launch: true,
    });
    assert.deepEqual(decideLaunch({ ...base, job: periodicJob(), atMs: T, lastMs: T }), {
      launch: false,
      reason: "already-launched",
    });
    assert.deepEqual(
      decideLaunch({ ...base, job: periodicJob(), atMs: T, lastMs: T - 3_600_000, childExists: true }),
      {
        launch: false,
        reason: "already-launched",
      },
    );
  });

  it("catches up missed ticks with one launch, and not at all once that tick was launched", () => {
    const now = T + 5 * 60_000;
    // Ticks at T-1h and T were missed while no leader ran: one catch-up launch now.
    assert.deepEqual(decideLaunch({ ...base, job: periodicJob(), atMs: now, lastMs: T - 2 * 3_600_000 }), {
      launch: true,
    });
    // After it (or after the old leader's launch of T): nothing is due before T+1h.
    for (const last of [now, T]) {
      assert.equal(decideLaunch({ ...base, job: periodicJob(), atMs: now, lastMs: last }).launch, false);
    }
    assert.deepEqual(decideLaunch({ ...base, job: periodicJob(), atMs: now, lastMs: T }), {
      launch: false,
      reason: "not-due",
    });
  });

  it("skips while a child runs under prohibit_overlap; a forced launch does not", () => {
    const job = periodicJob({}, { ProhibitOverlap: true });
    const facts = { ...base, job, atMs: T, lastMs: T - 3_600_000, childRunning: true };
    assert.deepEqual(decideLaunch(facts), { launch: false, reason: "overlap" });
    assert.deepEqual(decideLaunch({ ...facts, childRunning: false }), { launch: true });
    assert.deepEqual(decideLaunch({ ...facts, kind: "force", lastMs: T }), { launch: true });
    assert.deepEqual(decideLaunch({ ...facts, job: periodicJob(), childRunning: true }), { launch: true });
  });

  it("launches nothing for a stopped, disabled or parameterized job", () => {
    const facts = { ...base, atMs: T, lastMs: T - 3_600_000 };
    for (const job of [
      periodicJob({ Stop: true }),
      periodicJob({}, { Enabled: false }),
      periodicJob({ ParameterizedJob: { Payload: "optional", MetaRequired: [], MetaOptional: [] } }),
    ]) {
      assert.equal(isPeriodicActive(job), false);
      assert.deepEqual(decideLaunch({ ...facts, job }), { launch: false, reason: "inactive" });
    }
    assert.equal(isLaunchParent(periodicJob()), true);
    assert.equal(isLaunchParent(periodicJob({ Periodic: null })), false);
  });
});
