/**
 * Issue 8, item 10 (last): an exec plugin whose `stage_publish_base_dir` differs from its
 * `mount_dir` (Nomad's default is /local/csi) is handed staging and publish paths under the base
 * dir. The plugin dir is bound bidirectionally there too (as Nomad's csi_plugin_supervisor_hook
 * does), so its mounts reach the host: a job writes through the volume into the plugin's storage,
 * and nothing lands in berth's per-alloc dirs. Ends with no claim, nothing mounted, no process left.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { eventually, findFiles } from "../../helpers/agent_process.js";
import { claimCount, type VolumeView } from "../restart/restart_fixtures.js";
import { UpdateRig, VOLUME } from "./plugin_update_fixtures.js";

const SLEEP = 86_421;

test("exec plugin with stage_publish_base_dir = /local/csi: its mounts reach the host and the job writes into the volume", async () => {
  const rig = new UpdateRig("stage-base", "exec");
  let passed = false;
  try {
    await rig.start();
    await rig.runPlugin(0, { stagePublishBaseDir: "/local/csi" });
    const vol = await rig.createVolume("single-node-writer");
    const script = "echo through-base-dir > /data/out.txt";
    await rig.cli.run(["job", "run", rig.userJob("writer", "batch", script, "single-node-writer")]);
    await rig.allocOf("writer", "complete", 90_000);
    const out = path.join(rig.volumeDir(vol), "out.txt");
    assert.equal(fs.readFileSync(out, "utf8"), "through-base-dir\n");

    await rig.cli.run(["job", "stop", "writer"]);
    await eventually("the claim to be released", async () => {
      const v = await rig.cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
      return v && claimCount(v) === 0 ? v : undefined;
    });
    assert.deepEqual(await rig.filesUnderPerAlloc(), []);
    assert.deepEqual(findFiles(rig.dir, "out.txt"), [out], "written only into the volume");
    await rig.cli.run(["volume", "delete", VOLUME]);
    await rig.stopAll();
    passed = true;
  } finally {
    await rig.cleanUp(passed, SLEEP);
  }
});
