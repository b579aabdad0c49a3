import assert from "node:assert/strict";
import fs from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { TaskRunner } from "../../../src/client/allocrunner/taskrunner/task_runner.js";
import { RestartTracker } from "../../../src/client/allocrunner/taskrunner/restart_tracker.js";
import { FakeDriver } from "../../fakes/driver.js";
import { eventTypes, makeTask, runnerConfig, tempDataDir } from "../../builders/task_runner.js";

describe("TaskRunner", () => {
  let dataDir: string;
  before(async () => {
    dataDir = await tempDataDir("berth-tr-");
  });
  after(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it("runs a batch task to completion once, with interpolated config and NOMAD_* env (host paths)", async () => {
    const driver = new FakeDriver();
    driver.exitCodes = [0];
    const task = makeTask({
      Config: {
        command: "${NOMAD_TASK_DIR}/run",
        args: ["${node.unique.id}", "${NOMAD_ALLOC_INDEX}", "${nope}"],
      },
      Env: { X: "${NOMAD_JOB_NAME}-${node.unique.name}-${NOMAD_GROUP_NAME}" },
    });
    const cfg = runnerConfig(dataDir, task, driver);
    const tr = new TaskRunner(cfg);
    await tr.run();
    const st = tr.state();
    assert.deepEqual(eventTypes(st), ["Received", "Task Setup", "Started", "Terminated"]);
    assert.equal(st.State, "dead");
    assert.equal(st.Failed, false);
    assert.equal(st.Restarts, 0);
    assert.ok(st.StartedAt && st.FinishedAt);
    assert.ok(st.Events[0]!.Time > 1e18, "event time is in nanoseconds");
    assert.equal(cfg.states.at(-1)?.State, "dead");
    const s = driver.starts[0]!;
    assert.equal(s.command, `${cfg.allocDir.taskLocalDir("web")}/run`);
    assert.deepEqual(s.args, ["node-1", "2", "${nope}"]);
    assert.equal(s.env.X, "example-n1-g");
    assert.equal(s.env.NOMAD_ALLOC_ID, "alloc-1");
    assert.equal(s.env.NOMAD_TASK_NAME, "web");
    assert.equal(s.taskDir, cfg.allocDir.taskDir("web"));
    assert.match(s.stdoutPath, /logs\/web\.stdout\.0$/);
    await fs.access(cfg.allocDir.taskSecretsDir("web"));
  });

  it("gives paths in the task's view to the exec driver", async () => {
    const driver = new FakeDriver("exec");
    driver.exitCodes = [0];
    const tr = new TaskRunner(
      runnerConfig(dataDir, makeTask({ Config: { command: "${NOMAD_ALLOC_DIR}/x" } }), driver),
    );
    await tr.run();
    assert.equal(driver.starts[0]!.command, "/alloc/x");
    assert.equal(driver.starts[0]!.env.NOMAD_TASK_DIR, "/local");
    assert.equal(driver.starts[0]!.env.NOMAD_SECRETS_DIR, "/secrets");
  });

  it("restarts a failing task within its policy, then fails it", async () => {
    const driver = new FakeDriver();
    driver.exitCodes = [1, 2, 3];
    const tr = new TaskRunner(runnerConfig(dataDir, makeTask(), driver));
    await tr.run();
    const st = tr.state();
    assert.equal(driver.starts.length, 3);
    assert.equal(st.Restarts, 2);
    assert.equal(st.Failed, true);
    assert.deepEqual(eventTypes(st), [
      "Received",
      "Task Setup",
      "Started",
      "Terminated",
      "Restarting",
      "Started",
      "Terminated",
      "Restarting",
      "Started",
      "Terminated",
      "Not Restarting",
    ]);
    assert.equal(st.Events[3]!.Details.exit_code, "1");
  });

  it("restarts a service task that exits 0, and honours the group's policy", async () => {
    const driver = new FakeDriver();
    driver.exitCodes = [0, 0];
    const task = makeTask({ RestartPolicy: null });
    const tr = new TaskRunner(
      runnerConfig(dataDir, task, driver, {
        jobType: "service",
        group: { RestartPolicy: { Attempts: 1, Interval: 60e9, Delay: 1e6, Mode: "fail" } },
      }),
    );
    await tr.run();
    assert.equal(driver.starts.length, 2);
    assert.equal(tr.state().Failed, true);
  });

  it("kills a running task without restarting it; kill before run never starts it", async () => {
    const driver = new FakeDriver();
    const tr = new TaskRunner(runnerConfig(dataDir, makeTask(), driver));
    const running = tr.run();
    while (tr.state().State !== "running") await new Promise((r) => setTimeout(r, 5));
    await tr.kill("alloc stopped");
    await running;
    const st = tr.state();
    assert.equal(st.State, "dead");
    assert.equal(st.Failed, false);
    assert.equal(driver.stops, 1);
    assert.equal(driver.starts.length, 1);
    assert.deepEqual(eventTypes(st).slice(-3), ["Killing", "Terminated", "Killed"]);
    await tr.kill("again");

    const idle = new FakeDriver();
    const never = new TaskRunner(runnerConfig(dataDir, makeTask(), idle));
    await never.kill("before run");
    await never.run();
    assert.equal(idle.starts.length, 0);
    assert.equal(never.state().State, "dead");
  });

  it("reports a driver failure and retries it under the restart policy", async () => {
    const driver = new FakeDriver();
    driver.startError = new Error("boom");
    const tr = new TaskRunner(
      runnerConfig(
        dataDir,
        makeTask({ RestartPolicy: { Attempts: 1, Interval: 60e9, Delay: 1e6, Mode: "fail" } }),
        driver,
      ),
    );
    await tr.run();
    const types = eventTypes(tr.state());
    assert.deepEqual(types.filter((t) => t === "Driver Failure").length, 2);
    assert.equal(tr.state().Failed, true);
  });

  it("fails at once on a missing command", async () => {
    const driver = new FakeDriver();
    const tr = new TaskRunner(runnerConfig(dataDir, makeTask({ Config: {} }), driver));
    await tr.run();
    assert.equal(driver.starts.length, 0);
    const st = tr.state();
    assert.equal(st.Failed, true);
    assert.match(
      st.Events.find((e) => e.Type === "Setup Failure")!.DisplayMessage,
      /config\.command is required/,
    );
  });
});

describe("RestartTracker", () => {
  const noJitter = () => 0;

  it("applies delay mode after the attempts run out", () => {
    const t = new RestartTracker(
      { Attempts: 1, Interval: 10_000e6, Delay: 100e6, Mode: "delay" },
      "service",
      noJitter,
    );
    assert.deepEqual(t.next(false, 0), {
      restart: true,
      delayMs: 100,
      reason: "Restart within policy",
      message: "Task restarting in 100ms",
    });
    const d = t.next(false, 1000);
    assert.equal(d.restart, true);
    assert.equal(d.restart && d.delayMs, 9000);
    assert.equal(
      d.restart && d.message,
      "Exceeded allowed attempts, applying a delay - Task restarting in 9s",
    );
  });

  it("an operator's restart starts the task at once and uses up no attempt", () => {
    const t = new RestartTracker(
      { Attempts: 1, Interval: 10_000e6, Delay: 100e6, Mode: "fail" },
      "service",
      noJitter,
    );
    t.requestRestart();
    assert.deepEqual(t.next(false, 0), {
      restart: true,
      delayMs: 0,
      reason: "User requested restart",
      message: "Task restarting in 0s",
    });
    // The one attempt the policy allows is still there.
    assert.equal(t.next(false, 10).restart, true);
    assert.equal(t.next(false, 20).restart, false);
  });

  it("opens a new window after the interval", () => {
    const t = new RestartTracker(
      { Attempts: 1, Interval: 1000e6, Delay: 1e6, Mode: "fail" },
      "batch",
      noJitter,
    );
    assert.equal(t.next(false, 0).restart, true);
    assert.equal(t.next(false, 500).restart, false);
    assert.equal(t.next(false, 5000).restart, true);
    assert.deepEqual(t.next(true, 6000), {
      restart: false,
      failed: false,
      reason: "Restart unnecessary as task terminated successfully",
    });
  });

  it("gives up with Nomad's words, its Go-style interval, and adds up to 25% jitter to the delay", () => {
    const t = new RestartTracker(
      { Attempts: 2, Interval: 1800e9, Delay: 15e9, Mode: "fail" },
      "service",
      () => 0.5,
    );
    const first = t.next(false, 0);
    assert.equal(first.restart && first.delayMs, 15_000 + 1_875);
    assert.equal(first.restart && first.message, "Task restarting in 16.875s");
    t.next(false, 1);
    assert.deepEqual(t.next(false, 2), {
      restart: false,
      failed: true,
      reason: 'Exceeded allowed attempts 2 in interval 30m0s and mode is "fail"',
    });
  });

  it("a policy with 0 attempts never restarts, whatever the mode; a service task that exits 0 is restarted", () => {
    const none = new RestartTracker(
      { Attempts: 0, Interval: 60e9, Delay: 1e9, Mode: "delay" },
      "service",
      noJitter,
    );
    assert.deepEqual(none.next(false, 0), {
      restart: false,
      failed: true,
      reason: "Policy allows no restarts",
    });
    const svc = new RestartTracker(
      { Attempts: 1, Interval: 60e9, Delay: 1e9, Mode: "fail" },
      "service",
      noJitter,
    );
    assert.equal(svc.next(true, 0).restart, true);
  });

  it("uses Nomad's defaults by job type", () => {
    assert.equal(RestartTracker.policyFor("batch", null, null).Attempts, 3);
    assert.equal(RestartTracker.policyFor("service", null, null).Attempts, 2);
  });
});
