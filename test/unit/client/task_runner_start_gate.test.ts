/**
 * The task runner's side of the start gate (src/client/drivers/shared/start_gate.ts): the handle is
 * in the state DB before the driver lets the task run, and a persisted handle whose process never
 * ran the task (held when the last agent died) is started afresh — once, without counting an exit
 * or a restart.
 */
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { TaskRunner } from "../../../src/client/allocrunner/taskrunner/task_runner.js";
import type {
  BeforeRun,
  ExitResult,
  TaskHandle,
  TaskStartConfig,
} from "../../../src/client/drivers/driver.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import type { TaskState } from "../../../src/structs/alloc.js";
import { FakeDriver } from "../../fakes/driver.js";
import { eventTypes, makeTask, runnerConfig, tempDataDir } from "../../builders/task_runner.js";

const tick = () => new Promise((r) => setTimeout(r, 5));

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !cond(); i++) await tick();
  assert.ok(cond(), what);
}

/** A FakeDriver that calls beforeRun as the real drivers do, and knows handles whose process was held. */
class GatedDriver extends FakeDriver {
  /** For each start: whether the state DB held the handle when the task was let run. */
  readonly persistedAtGo: boolean[] = [];
  /** Pids of processes held at start when their agent died: never ran, no longer there. */
  readonly held = new Set<number>();

  constructor(private readonly handles: StateDB) {
    super();
  }

  override async start(cfg: TaskStartConfig, beforeRun?: BeforeRun): Promise<TaskHandle> {
    const handle = await super.start(cfg);
    await beforeRun?.(handle);
    this.persistedAtGo.push(this.handles.getTaskHandle(cfg.allocId, cfg.taskName)?.pid === handle.pid);
    return handle;
  }

  override async recover(handle: TaskHandle): Promise<boolean> {
    return !this.held.has(handle.pid) && super.recover(handle);
  }

  override wait(handle: TaskHandle): Promise<ExitResult> {
    if (this.held.has(handle.pid)) return Promise.resolve({ exitCode: -1, signal: null, notStarted: true });
    return super.wait(handle);
  }
}

describe("TaskRunner start gate", () => {
  let dataDir: string;
  before(async () => {
    dataDir = await tempDataDir("berth-trsg-");
  });
  after(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it("persists the handle before the driver lets the task run", async () => {
    const handles = StateDB.open(":memory:");
    const driver = new GatedDriver(handles);
    const tr = new TaskRunner(runnerConfig(dataDir, makeTask(), driver, { jobType: "service", handles }));
    const done = tr.run();
    await until("the task runs", () => tr.state().State === "running");
    assert.deepEqual(driver.persistedAtGo, [true]);
    await tr.kill("done");
    await done;
  });

  it("a persisted handle of a process that never ran: started once, no exit or restart recorded", async () => {
    const handles = StateDB.open(":memory:");
    const driver = new GatedDriver(handles);
    const held: TaskHandle = { driver: driver.name, pid: 99, startedAt: Date.now(), state: {} };
    driver.held.add(held.pid);
    handles.putTaskHandle("alloc-1", "web", held);
    const restoredState: TaskState = {
      State: "pending",
      Failed: false,
      Restarts: 0,
      StartedAt: null,
      FinishedAt: null,
      Events: [{ Type: "Received", Time: 1, DisplayMessage: "Task received by client", Details: {} }],
    };
    const tr = new TaskRunner(
      runnerConfig(dataDir, makeTask(), driver, { jobType: "service", handles, restoredState }),
    );
    const done = tr.run();
    await until("the task runs", () => tr.state().State === "running");
    assert.equal(driver.starts.length, 1, "started once");
    assert.equal(eventTypes(tr.state()).at(-1), "Started");
    assert.ok(!eventTypes(tr.state()).includes("Terminated"), "no exit recorded");
    assert.ok(!eventTypes(tr.state()).includes("Restarting"), "no restart recorded");
    assert.equal(tr.state().Restarts, 0);
    assert.notEqual(
      handles.getTaskHandle("alloc-1", "web")?.pid,
      held.pid,
      "the new start's handle is persisted",
    );
    await tr.kill("done");
    await done;
  });
});
