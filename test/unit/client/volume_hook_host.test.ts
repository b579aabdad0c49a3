import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AllocHookResources } from "../../../src/client/allocrunner/hook_resources.js";
import { VolumeHook } from "../../../src/client/allocrunner/taskrunner/volume_hook.js";
import type { VolumeRequest } from "../../../src/structs/job.js";
import { FakeDriver } from "../../fakes/driver.js";
import { makeTask } from "../../builders/task_runner.js";

const hostVol = (source: string, readOnly = false): VolumeRequest => ({
  Name: source,
  Type: "host",
  Source: source,
  ReadOnly: readOnly,
  AccessMode: "",
  AttachmentMode: "",
  MountOptions: null,
  PerAlloc: false,
});

describe("volume_hook: host volumes", () => {
  const task = makeTask({
    VolumeMounts: [
      { Volume: "rw", Destination: "/srv/${meta.rack}", ReadOnly: false, PropagationMode: "private" },
      { Volume: "ro", Destination: "/ro", ReadOnly: false, PropagationMode: "private" },
      { Volume: "asked-ro", Destination: "/asked", ReadOnly: false, PropagationMode: "private" },
    ],
  });
  const group = {
    Name: "g",
    Count: 1,
    Tasks: [task],
    RestartPolicy: null,
    Volumes: { rw: hostVol("data"), ro: hostVol("cfg", true), "asked-ro": hostVol("data", true) },
  };
  const nodeVolumes = {
    data: { Name: "data", Path: "/host/data", ReadOnly: false },
    cfg: { Name: "cfg", Path: "/host/cfg", ReadOnly: true },
  };
  const interp = (t: string) => t.replace("${meta.rack}", "r1");

  it("binds the node's host volume path at the interpolated destination, read-only when anyone says so", async () => {
    const hook = new VolumeHook(task, group, new FakeDriver(), new AllocHookResources(), nodeVolumes, interp);
    const out = await hook.prestart();
    assert.deepEqual(out?.mounts, [
      { hostPath: "/host/data", taskPath: "/srv/r1", readOnly: false, propagation: "private" },
      { hostPath: "/host/cfg", taskPath: "/ro", readOnly: true, propagation: "private" },
      { hostPath: "/host/data", taskPath: "/asked", readOnly: true, propagation: "private" },
    ]);
  });

  it("fails clearly when the node lacks the volume or it is read-only and the job wants to write", async () => {
    const only = (v: VolumeRequest) => ({ ...group, Volumes: { rw: v } });
    const t = makeTask({ VolumeMounts: [task.VolumeMounts[0]!] });
    await assert.rejects(
      new VolumeHook(
        t,
        only(hostVol("nope")),
        new FakeDriver(),
        new AllocHookResources(),
        nodeVolumes,
      ).prestart(),
      /host volume "nope" \(volume "rw"\) is not configured on this node/,
    );
    // A source named like an Object.prototype member is not "configured" by inheritance.
    for (const name of ["constructor", "__proto__", "toString"]) {
      await assert.rejects(
        new VolumeHook(
          t,
          only(hostVol(name)),
          new FakeDriver(),
          new AllocHookResources(),
          nodeVolumes,
        ).prestart(),
        /is not configured on this node/,
      );
    }
    await assert.rejects(
      new VolumeHook(
        t,
        only(hostVol("cfg")),
        new FakeDriver(),
        new AllocHookResources(),
        nodeVolumes,
      ).prestart(),
      /host volume "cfg" is read-only on this node, but volume "rw" asks for read-write/,
    );
  });
});
