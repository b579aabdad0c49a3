/**
 * csi-hostpath's block volumes over real gRPC, real loop devices and real bind mounts: the device
 * appears at the target path, bytes written there are read back, and every call is idempotent;
 * unstage detaches the loop device, delete removes the image, and no loop device over the image is
 * ever left behind (also when the test fails: the cleanup detaches what it finds).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { BerthError } from "../../../src/structs/errors.js";
import { nullLogger } from "../../../src/internal/log.js";
import { createCsiClient } from "../../../src/csi/client.js";
import { startHostpathServer, type HostpathServer } from "../../../src/csi/hostpath/index.js";
import { blockImageOf, loopDevicesOf } from "../../../src/csi/hostpath/block.js";
import type { CsiClient, CsiVolumeCapability } from "../../../src/csi/types.js";
import { mountsUnder } from "../../helpers/mounts.js";

const block: CsiVolumeCapability = { accessMode: "single-node-writer", access: { type: "block" } };
const code = (c: string) => (e: BerthError) => e.code === c;

void describe("csi-hostpath block volumes (loop devices)", () => {
  let dir: string;
  let server: HostpathServer;
  let client: CsiClient;
  const images: string[] = [];

  void before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-hp-block-"));
    server = await startHostpathServer(
      {
        socketPath: path.join(dir, "csi.sock"),
        nodeId: "node-1",
        stateDir: path.join(dir, "state"),
        maxVolumes: 4,
        topology: { "berth.io/hostname": "node-1" },
        callLog: null,
        mode: "monolith",
        attachRequired: false,
      },
      nullLogger,
    );
    client = createCsiClient(server.endpoint, { log: nullLogger });
  });

  void after(async () => {
    client.close();
    await server.stop();
    for (const m of (await mountsUnder(dir)).reverse()) execFileSync("umount", ["-l", m]);
    const leftMounts = await mountsUnder(dir);
    const leftLoops: string[] = [];
    for (const image of images) {
      for (const d of await loopDevicesOf(image)) {
        leftLoops.push(d);
        execFileSync("losetup", ["-d", d]);
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(leftMounts, []);
    assert.deepEqual(leftLoops, [], "no loop device left over a volume image");
  });

  void it("create → stage → publish → write and read the device → unpublish → unstage → delete", async () => {
    const vol = await client.createVolume({
      name: "blk",
      capacityRange: { requiredBytes: 8 << 20, limitBytes: 0 },
      volumeCapabilities: [block],
      parameters: {},
      secrets: {},
      contentSource: null,
      accessibilityRequirements: null,
    });
    const image = blockImageOf(path.join(dir, "state"), vol.volumeId);
    images.push(image);
    const staging = path.join(dir, "staging", "blk");
    const target = path.join(dir, "per-alloc", "a1", "blk");
    fs.mkdirSync(staging, { recursive: true });
    const stageReq = {
      volumeId: vol.volumeId,
      publishContext: {},
      stagingTargetPath: staging,
      volumeCapability: block,
      secrets: {},
      volumeContext: {},
    };
    const publishReq = { ...stageReq, targetPath: target, readonly: false };

    await assert.rejects(client.nodePublishVolume(publishReq), code("ERR_CSI_FAILED_PRECONDITION"));
    await client.nodeStageVolume(stageReq);
    await client.nodeStageVolume(stageReq);
    const loops = await loopDevicesOf(image);
    assert.equal(loops.length, 1, "one loop device, also after a repeated stage");
    assert.equal(fs.statSync(image).size, 8 << 20);

    await client.nodePublishVolume(publishReq);
    await client.nodePublishVolume(publishReq);
    const st = fs.statSync(target);
    assert.ok(st.isBlockDevice(), "the target is the device");
    assert.equal(st.rdev, fs.statSync(loops[0]!).rdev);

    const payload = Buffer.from("berth block volume\n");
    const fd = fs.openSync(target, "r+");
    try {
      fs.writeSync(fd, payload, 0, payload.length, 4096);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    const back = Buffer.alloc(payload.length);
    const rd = fs.openSync(target, "r");
    try {
      fs.readSync(rd, back, 0, back.length, 4096);
    } finally {
      fs.closeSync(rd);
    }
    assert.equal(back.toString(), payload.toString());

    // A read-only publish: its own read-only device; reads work, writes are refused.
    const roTarget = path.join(dir, "per-alloc", "a2", "blk");
    const roReq = { ...publishReq, targetPath: roTarget, readonly: true };
    await client.nodePublishVolume(roReq);
    await client.nodePublishVolume(roReq);
    assert.equal(
      fs
        .readFileSync(roTarget)
        .subarray(4096, 4096 + payload.length)
        .toString(),
      payload.toString(),
    );
    assert.throws(
      () => {
        const w = fs.openSync(roTarget, "r+");
        try {
          fs.writeSync(w, payload, 0, payload.length, 0);
          fs.fsyncSync(w);
        } finally {
          fs.closeSync(w);
        }
      },
      /EROFS|EACCES|EPERM/,
      "a read-only publish cannot be written",
    );
    assert.equal((await loopDevicesOf(image)).length, 2, "the staged device and the read-only one");
    await client.nodeUnpublishVolume({ volumeId: vol.volumeId, targetPath: roTarget });
    assert.deepEqual(await loopDevicesOf(image), loops, "unpublish detached the read-only device");

    await assert.rejects(
      client.deleteVolume({ volumeId: vol.volumeId, secrets: {} }),
      code("ERR_CSI_FAILED_PRECONDITION"),
      "a volume whose device is mounted is not deleted",
    );
    await client.nodeUnpublishVolume({ volumeId: vol.volumeId, targetPath: target });
    await client.nodeUnpublishVolume({ volumeId: vol.volumeId, targetPath: target });
    assert.equal(fs.existsSync(target), false);
    await client.nodeUnstageVolume({ volumeId: vol.volumeId, stagingTargetPath: staging });
    await client.nodeUnstageVolume({ volumeId: vol.volumeId, stagingTargetPath: staging });
    assert.deepEqual(await loopDevicesOf(image), [], "unstage detached the loop device");
    assert.deepEqual(await mountsUnder(dir), []);

    // The bytes are the volume's: a second stage sees them through a new loop device.
    await client.nodeStageVolume(stageReq);
    const again = fs.readFileSync(path.join(staging, "device")).subarray(4096, 4096 + payload.length);
    assert.equal(again.toString(), payload.toString());
    await client.nodeUnstageVolume({ volumeId: vol.volumeId, stagingTargetPath: staging });

    await client.deleteVolume({ volumeId: vol.volumeId, secrets: {} });
    assert.equal(fs.existsSync(image), false, "the image is gone");
    assert.deepEqual(await loopDevicesOf(image), []);
  });
});
