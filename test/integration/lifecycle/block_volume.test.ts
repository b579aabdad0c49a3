/**
 * A block volume end to end: csi-hostpath (raw_exec plugin task) serves `attachment_mode =
 * "block-device"` as a loop device; an exec task gets the device at its volume_mount destination,
 * writes bytes to it and reads them back. After the job, the bytes are in the volume's image, no
 * loop device over the image is left, and `volume delete` removes the image.
 *
 * exec refuses `user = "root"` by default (Nomad's user.denylist); a loop device node is root's, so
 * this agent's client options empty the denylist.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { eventually } from "../../helpers/agent_process.js";
import { blockImageOf, loopDevicesOf } from "../../../src/csi/hostpath/block.js";
import { claimCount, type VolumeView } from "../restart/restart_fixtures.js";
import { UpdateRig } from "./plugin_update_fixtures.js";

const SLEEP = 86_413;
const TEXT = "berth-block-volume";

const VOLUME_SPEC = `id = "blk"
name = "blk"
type = "csi"
plugin_id = "hostpath"
capacity_min = "16MiB"
capability {
  access_mode = "single-node-writer"
  attachment_mode = "block-device"
}
`;

// Writes TEXT at offset 4096 of the device, syncs, reads it back into the alloc dir.
const SCRIPT = [
  `printf ${TEXT} | dd of=/srv/blk bs=4096 seek=1 conv=notrunc,fsync 2>/dev/null`,
  `dd if=/srv/blk bs=4096 skip=1 count=1 2>/dev/null | head -c ${TEXT.length} > /alloc/readback`,
  `[ -b /srv/blk ] && echo block >> /alloc/readback-kind`,
].join(" && ");

const JOB = `job "b" {
  type = "batch"
  group "g" {
    volume "data" {
      type            = "csi"
      source          = "blk"
      access_mode     = "single-node-writer"
      attachment_mode = "block-device"
    }
    task "t" {
      driver = "exec"
      user   = "root"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(SCRIPT)}]
      }
      volume_mount {
        volume      = "data"
        destination = "/srv/blk"
      }
    }
  }
}
`;

test("an exec task writes to and reads back a block volume at its volume_mount destination", async () => {
  const rig = new UpdateRig("block-volume", "raw_exec");
  let image = "";
  let passed = false;
  try {
    const config = rig.write("client.hcl", 'client {\n  options {\n    "user.denylist" = ""\n  }\n}\n');
    await rig.start(["-config", config]);
    await rig.runPlugin(0);
    await rig.cli.run(["volume", "create", rig.write("blk.hcl", VOLUME_SPEC)]);
    const vol = (await rig.cli.get<VolumeView>("/v1/volume/csi/blk"))!;
    image = blockImageOf(rig.storage, vol.ExternalID);

    await rig.cli.run(["job", "run", rig.write("b.hcl", JOB)]);
    const alloc = await rig.allocOf("b", "complete", 120_000);
    const allocDir = path.join(rig.dataDir, "alloc", alloc.ID, "alloc");
    assert.equal(
      fs.readFileSync(path.join(allocDir, "readback"), "utf8"),
      TEXT,
      "the task read its bytes back",
    );
    assert.equal(fs.readFileSync(path.join(allocDir, "readback-kind"), "utf8"), "block\n", "a device node");

    await eventually(
      "the claim to be released",
      async () => {
        const v = await rig.cli.get<VolumeView>("/v1/volume/csi/blk?claims=true");
        return v && claimCount(v) === 0 ? true : undefined;
      },
      90_000,
    );
    const bytes = fs
      .readFileSync(image)
      .subarray(4096, 4096 + TEXT.length)
      .toString();
    assert.equal(bytes, TEXT, "the bytes are in the volume's image");
    assert.deepEqual(await loopDevicesOf(image), [], "unstage detached the loop device");

    await rig.cli.run(["volume", "delete", "blk"]);
    assert.equal(fs.existsSync(image), false, "volume delete removed the image");
    await rig.stopAll();
    passed = true;
  } finally {
    // Never leak a loop device, whatever failed (the rig's cleanup unmounts and removes the dir).
    const left = image && fs.existsSync(image) ? await loopDevicesOf(image) : [];
    for (const d of left) execFileSync("losetup", ["-d", d]);
    await rig.cleanUp(passed, SLEEP);
  }
});
