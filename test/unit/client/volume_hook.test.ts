import assert from "node:assert/strict";
import fs from "node:fs/promises";
import { after, before, describe, it } from "node:test";
import { TaskRunner } from "../../../src/client/allocrunner/taskrunner/task_runner.js";
import { VolumeHook } from "../../../src/client/allocrunner/taskrunner/volume_hook.js";
import { AllocHookResources } from "../../../src/client/allocrunner/hook_resources.js";
import type { VolumeRequest } from "../../../src/structs/job.js";
import { FakeDriver } from "../../fakes/driver.js";
import { eventTypes, makeTask, runnerConfig, tempDataDir } from "../../builders/task_runner.js";

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

describe("volume_hook", () => {
  let dataDir: string;
  before(async () => {
    dataDir = await tempDataDir("berth-vh-");
  });
  after(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  const task = makeTask({
    VolumeMounts: [
      { Volume: "data", Destination: "/srv/data", ReadOnly: false, PropagationMode: "private" },
      { Volume: "ro", Destination: "/srv/ro", ReadOnly: false, PropagationMode: "host-to-task" },
    ],
  });
  const group = {
    Name: "g",
    Count: 1,
    Tasks: [task],
    RestartPolicy: null,
    Volumes: { data: vol(), ro: vol({ Source: "vol2", ReadOnly: true }) },
  };

  it("maps published CSI mounts to driver mounts at each destination", async () => {
    const res = new AllocHookResources();
    res.setCsiMounts(
      new Map([
        ["data", { source: "/host/pub/data", readOnly: false, volumeId: "vol1" }],
        ["ro", { source: "/host/pub/ro", readOnly: false, volumeId: "vol2" }],
      ]),
    );
    const out = await new VolumeHook(task, group, new FakeDriver(), res).prestart();
    assert.deepEqual(out?.mounts, [
      { hostPath: "/host/pub/data", taskPath: "/srv/data", readOnly: false, propagation: "private" },
      { hostPath: "/host/pub/ro", taskPath: "/srv/ro", readOnly: true, propagation: "host-to-task" },
    ]);
  });

  it("reports a missing published mount clearly", async () => {
    await assert.rejects(new VolumeHook(task, group, new FakeDriver(), new AllocHookResources()).prestart(), {
      message: 'task "web": CSI volume "data" (source "vol1") has no published mount on this node',
    });
  });

  it("fails the task with a user-facing message when the driver cannot mount", async () => {
    const driver = new FakeDriver("raw_exec", false);
    const cfg = runnerConfig(dataDir, task, driver, { group: { Volumes: group.Volumes } });
    const tr = new TaskRunner(cfg);
    await tr.run();
    const st = tr.state();
    assert.equal(driver.starts.length, 0);
    assert.equal(st.Failed, true);
    assert.deepEqual(eventTypes(st), ["Received", "Task Setup", "Setup Failure", "Not Restarting"]);
    assert.equal(
      st.Events[2]!.DisplayMessage,
      'prestart hook "volumes" failed: task "web" uses driver "raw_exec", which does not support volume mounts, so volume "data" cannot be mounted; use a driver that supports mounts (e.g. exec)',
    );
  });
});
