/**
 * "A task never receives a path that is not its volume", end to end: csi-hostpath runs with a
 * `noop` fault, so NodePublishVolume answers success without mounting. The alloc's task does not
 * start; a "Volume Mount Retry" task event (shown by `berth alloc status`) names the plugin and the
 * host path; nothing the job would write reaches the disk. Once the fault is lifted the retried
 * mount succeeds and the same alloc runs, writing into the volume. Ends with no claim, nothing
 * mounted and no process left.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { eventually, findFiles } from "../../helpers/agent_process.js";
import { claimCount, type AllocView, type VolumeView } from "../restart/restart_fixtures.js";
import { UpdateRig, VOLUME } from "./plugin_update_fixtures.js";

const SLEEP = 86_419;

test("a plugin that reports NodePublish success without mounting: the task never starts, the event names plugin and path", async () => {
  const rig = new UpdateRig("publish-unmounted", "raw_exec");
  let passed = false;
  try {
    await rig.start();
    const faults = rig.write(
      "faults.json",
      JSON.stringify({ NodePublishVolume: { noop: true, times: 1e6 } }),
    );
    await rig.runPlugin(0, { faults });
    const vol = await rig.createVolume("single-node-writer");
    const script = "echo leaked > /data/leak.txt";
    await rig.cli.run(["job", "run", rig.userJob("victim", "batch", script, "single-node-writer")]);

    const alloc = await eventually("a Volume Mount Retry event", async () => {
      const a = (await rig.cli.get<AllocView[]>("/v1/job/victim/allocations"))?.[0];
      return a?.TaskStates.t?.Events.some((e) => e.Type === "Volume Mount Retry") ? a : undefined;
    });
    const target = path.join(
      rig.dataDir,
      "client/csi/monolith/hostpath/per-alloc",
      alloc.ID,
      VOLUME,
      "rw-file-system-single-node-writer",
    );
    const event = alloc.TaskStates.t!.Events.find((e) => e.Type === "Volume Mount Retry")!;
    assert.equal(
      event.DisplayMessage,
      `volume "data" (${VOLUME}): CSI plugin "hostpath" reported NodePublishVolume success but ${target} is not a mount point; the task waits and the mount is retried`,
    );
    const status = await rig.cli.run(["alloc", "status", alloc.ID]);
    assert.match(status, /Volume Mount Retry/);
    assert.ok(status.includes(target), "alloc status shows the path");
    assert.equal(alloc.ClientStatus, "pending");
    assert.equal(alloc.TaskStates.t!.State, "pending", "the task did not start");
    assert.ok(!alloc.TaskStates.t!.Events.some((e) => e.Type === "Started"));
    assert.deepEqual(findFiles(rig.dir, "leak.txt"), [], "nothing was written anywhere");

    // The fault lifted, the retried mount succeeds: the same alloc runs, into the volume.
    fs.writeFileSync(faults, "{}");
    await rig.allocOf("victim", "complete", 90_000);
    const volDir = rig.volumeDir(vol);
    assert.equal(fs.readFileSync(path.join(volDir, "leak.txt"), "utf8"), "leaked\n");
    // The batch alloc's release (unpublish, unstage) runs after it completes; until the stage mount
    // is gone the walk would also see the volume's own file through it (same inode, not a leak).
    await eventually("the completed alloc's claim to be released", async () => {
      const v = await rig.cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
      return v && claimCount(v) === 0 ? v : undefined;
    });
    assert.deepEqual(findFiles(rig.dir, "leak.txt"), [path.join(volDir, "leak.txt")], "only in the volume");
    assert.equal((await rig.cli.get<AllocView[]>("/v1/job/victim/allocations"))?.length, 1, "one alloc");

    await rig.cli.run(["job", "stop", "victim"]);
    await eventually("the claim to be released", async () => {
      const v = await rig.cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
      return v && claimCount(v) === 0 ? v : undefined;
    });
    await rig.cli.run(["volume", "delete", VOLUME]);
    await rig.stopAll();
    passed = true;
  } finally {
    await rig.cleanUp(passed, SLEEP);
  }
});
