import assert from "node:assert/strict";
import fs from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { TaskRunner } from "../../../src/client/allocrunner/taskrunner/task_runner.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import type { TaskState } from "../../../src/structs/alloc.js";
import { BerthError } from "../../../src/structs/errors.js";
import type { VolumeRequest } from "../../../src/structs/job.js";
import { FakeDriver } from "../../fakes/driver.js";
import { eventTypes, makeTask, runnerConfig, tempDataDir } from "../../builders/task_runner.js";

const tick = () => new Promise((r) => setTimeout(r, 5));

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !cond(); i++) await tick();
  assert.ok(cond(), what);
}

const vol = (over: Partial<VolumeRequest> = {}): VolumeRequest => ({
  Name: "data",
  Type: "csi",
  Source: "vol1",
  ReadOnly: false,
  AccessMode: "single-node-writer",
  AttachmentMode: "file-system",
  MountOptions: null,
  PerAlloc: false,
  ...over,
});

const DATA = "/host/plugin/per-alloc/alloc-1/vol1/rw";
const LOGS = "/host/plugin/per-alloc/alloc-1/vol2/rw";

describe("TaskRunner.refreshMounts", () => {
  let dataDir: string;
  before(async () => {
    dataDir = await tempDataDir("berth-trm-");
  });
  after(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const task = makeTask({
    VolumeMounts: [
      { Volume: "data", Destination: "/data", ReadOnly: false, PropagationMode: "private" },
      { Volume: "data", Destination: "/srv/data", ReadOnly: true, PropagationMode: "private" },
      { Volume: "logs", Destination: "/logs", ReadOnly: false, PropagationMode: "host-to-task" },
    ],
  });
  const group = { Volumes: { data: vol(), logs: vol({ Name: "logs", Source: "vol2" }) } };

  function runner(driver: FakeDriver, handles?: StateDB, restoredState?: TaskState) {
    const cfg = runnerConfig(dataDir, task, driver, {
      jobType: "service",
      group,
      ...(handles ? { handles } : {}),
      ...(restoredState ? { restoredState } : {}),
    });
    cfg.resources.setCsiMounts(
      new Map([
        ["data", { source: DATA, readOnly: false, volumeId: "vol1" }],
        ["logs", { source: LOGS, readOnly: false, volumeId: "vol2" }],
      ]),
    );
    return new TaskRunner(cfg);
  }

  it("re-binds every mount of the remounted target in the running task, and nothing else", async () => {
    const driver = new FakeDriver("exec");
    const tr = runner(driver);
    await tr.refreshMounts(DATA);
    assert.equal(driver.refreshes.length, 0, "not started yet: its start binds the current mount");
    const done = tr.run();
    await until("the task runs", () => tr.state().State === "running");
    const pid = 1000;

    await tr.refreshMounts(DATA);
    assert.deepEqual(driver.refreshes, [
      { pid, mount: { hostPath: DATA, taskPath: "/data", readOnly: false, propagation: "private" } },
      { pid, mount: { hostPath: DATA, taskPath: "/srv/data", readOnly: true, propagation: "private" } },
    ]);
    await tr.refreshMounts("/host/elsewhere");
    assert.equal(driver.refreshes.length, 2, "a target the task does not mount: nothing to do");
    await tr.refreshMounts(LOGS);
    assert.equal(driver.refreshes.at(-1)?.mount.taskPath, "/logs");
    assert.ok(!eventTypes(tr.state()).includes("Volume Refresh Failed"));

    await tr.kill("done");
    await done;
    await tr.refreshMounts(DATA);
    assert.equal(driver.refreshes.length, 3, "a dead task has nothing to refresh");
  });

  it("reports a failed refresh as a task event and keeps the task running", async () => {
    const driver = new FakeDriver("exec");
    driver.refreshError = new BerthError(
      "ERR_DRIVER",
      "exec driver: cannot refresh the mount at /logs: boom",
    );
    const tr = runner(driver);
    const done = tr.run();
    await until("the task runs", () => tr.state().State === "running");
    await tr.refreshMounts(LOGS);
    const failed = tr.state().Events.filter((e) => e.Type === "Volume Refresh Failed");
    assert.equal(failed.length, 1);
    assert.equal(
      failed[0]!.DisplayMessage,
      "the volume mounted at /logs was mounted again on the host, but the running task still has the old mount: exec driver: cannot refresh the mount at /logs: boom; restart the task to get the new one",
    );
    assert.deepEqual(failed[0]!.Details, {
      mount: "/logs",
      error: "exec driver: cannot refresh the mount at /logs: boom",
    });
    assert.equal(tr.state().State, "running");
    assert.equal(driver.starts.length, 1, "not restarted");
    await tr.kill("done");
    await done;
  });

  it("says so when the driver cannot refresh mounts", async () => {
    const driver = new FakeDriver("exec");
    (driver as { refreshMount?: unknown }).refreshMount = undefined;
    const tr = runner(driver);
    const done = tr.run();
    await until("the task runs", () => tr.state().State === "running");
    await tr.refreshMounts(DATA);
    const failed = tr.state().Events.filter((e) => e.Type === "Volume Refresh Failed");
    assert.equal(failed.length, 2, "one per destination");
    assert.match(failed[0]!.DisplayMessage, /driver "exec" cannot refresh the mounts of a running task/);
    await tr.kill("done");
    await done;
  });

  it("a task recovered after an agent restart refreshes its volume mounts as published", async () => {
    const driver = new FakeDriver("exec");
    const handles = StateDB.open(":memory:");
    const first = runner(driver, handles);
    void first.run();
    await until("the task runs", () => first.state().State === "running");
    first.shutdown();

    const restored = runner(driver, handles, first.state());
    const done = restored.run();
    await until("the restored task runs", () => restored.state().State === "running");
    assert.equal(driver.starts.length, 1, "re-attached, not started again");
    await restored.refreshMounts(LOGS);
    assert.deepEqual(driver.refreshes, [
      {
        pid: 1000,
        mount: { hostPath: LOGS, taskPath: "/logs", readOnly: false, propagation: "host-to-task" },
      },
    ]);
    await restored.kill("done");
    await done;
  });
});
