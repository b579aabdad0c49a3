import assert from "node:assert/strict";
import fs from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { TaskRunner } from "../../../src/client/allocrunner/taskrunner/task_runner.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import type { TaskState } from "../../../src/structs/alloc.js";
import { FakeDriver } from "../../fakes/driver.js";
import { eventTypes, makeTask, runnerConfig, tempDataDir } from "../../builders/task_runner.js";

const tick = () => new Promise((r) => setTimeout(r, 5));

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !cond(); i++) await tick();
  assert.ok(cond(), what);
}

describe("TaskRunner restore", () => {
  let dataDir: string;
  before(async () => {
    dataDir = await tempDataDir("berth-trr-");
  });
  after(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  /** Starts a service task that keeps running, as the agent before the restart did. */
  async function runningTask(driver: FakeDriver, handles: StateDB) {
    const cfg = runnerConfig(dataDir, makeTask(), driver, { jobType: "service", handles });
    const first = new TaskRunner(cfg);
    void first.run();
    await until("the task starts", () => first.state().State === "running");
    first.shutdown();
    const handle = handles.getTaskHandle("alloc-1", "web");
    assert.ok(handle, "the handle is persisted at start");
    return { handle, state: first.state() };
  }

  it("re-attaches to a live task: no second start; a kill stops it and forgets the handle", async () => {
    const driver = new FakeDriver();
    const handles = StateDB.open(":memory:");
    const { handle, state } = await runningTask(driver, handles);
    const cfg = runnerConfig(dataDir, makeTask(), driver, {
      jobType: "service",
      handles,
      restoredState: state,
    });
    const restored = new TaskRunner(cfg);
    const done = restored.run();
    await until("the restored task runs", () => restored.state().State === "running");
    assert.equal(driver.starts.length, 1, "not started again");
    assert.equal(restored.state().StartedAt, new Date(handle.startedAt).toISOString());
    assert.deepEqual(eventTypes(restored.state()), eventTypes(state), "the persisted events are kept");
    await restored.kill("stopped");
    await done;
    assert.equal(driver.stops, 1);
    assert.equal(restored.state().State, "dead");
    assert.equal(handles.getTaskHandle("alloc-1", "web"), undefined, "the handle is gone with the task");
  });

  it("a task that exited while the agent was away counts as an exit: the restart policy starts it again", async () => {
    const driver = new FakeDriver();
    const handles = StateDB.open(":memory:");
    const { handle, state } = await runningTask(driver, handles);
    driver.exit(handle.pid, 3);
    await tick();
    const restored = new TaskRunner(
      runnerConfig(dataDir, makeTask(), driver, { jobType: "service", handles, restoredState: state }),
    );
    const done = restored.run();
    await until("the task is started again", () => driver.starts.length === 2);
    await until("the task runs again", () => restored.state().State === "running");
    const st = restored.state();
    const since = eventTypes(st).slice(state.Events.length);
    assert.deepEqual(since.slice(0, 2), ["Terminated", "Restarting"]);
    assert.equal(since.at(-1), "Started");
    assert.equal(st.Events.find((e) => e.Type === "Terminated")?.Details.exit_code, "3");
    assert.notEqual(handles.getTaskHandle("alloc-1", "web")?.pid, handle.pid, "the new handle is persisted");
    await restored.kill("done");
    await done;
  });

  it("a task restored as dead is final: run() does nothing", async () => {
    const driver = new FakeDriver();
    const dead: TaskState = {
      State: "dead",
      Failed: false,
      Restarts: 0,
      StartedAt: new Date().toISOString(),
      FinishedAt: new Date().toISOString(),
      Events: [],
    };
    const states: TaskState[] = [];
    const tr = new TaskRunner(
      runnerConfig(dataDir, makeTask(), driver, {
        handles: StateDB.open(":memory:"),
        restoredState: dead,
        onStateChange: (s) => states.push(s),
      }),
    );
    await tr.run();
    assert.equal(driver.starts.length, 0);
    assert.equal(tr.state().State, "dead");
    assert.deepEqual(states, [], "nothing is reported again");
  });

  it("shutdown leaves the task running and its handle persisted", async () => {
    const driver = new FakeDriver();
    const handles = StateDB.open(":memory:");
    const { handle } = await runningTask(driver, handles);
    await tick();
    assert.equal(driver.stops, 0, "the task was not stopped");
    assert.equal(await driver.recover(handle), true);
    assert.deepEqual(handles.getTaskHandle("alloc-1", "web"), handle);
  });
});
