/**
 * csi-hostpath's NodeGetVolumeStats and VOLUME_CONDITION through berth's own CSI client against a
 * real plugin server with real bind mounts: 5 MiB written through the published target shows as
 * 5 MiB more used (and less available under the recorded capacity); the volume's directory removed
 * behind the plugin's back turns it abnormal; a path where the volume is not published is
 * NOT_FOUND. ControllerGetVolume answers the same condition on the controller side. Cleans up and
 * asserts nothing is left mounted.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { BerthError } from "../../../src/structs/errors.js";
import { nullLogger } from "../../../src/internal/log.js";
import { createCsiClient } from "../../../src/csi/client.js";
import { startHostpathServer, type HostpathServer } from "../../../src/csi/hostpath/index.js";
import type { CsiClient, CsiVolumeCapability } from "../../../src/csi/types.js";
import { mountsUnder } from "../../helpers/mounts.js";

const MiB = 1 << 20;
const cap: CsiVolumeCapability = {
  accessMode: "single-node-writer",
  access: { type: "mount", fsType: "", mountFlags: [] },
};

void describe("csi-hostpath volume stats and condition", () => {
  let dir: string;
  let server: HostpathServer;
  let client: CsiClient;

  void before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "berth-hpstats-"));
    server = await startHostpathServer(
      {
        socketPath: path.join(dir, "csi.sock"),
        nodeId: "node-1",
        stateDir: path.join(dir, "state"),
        maxVolumes: 16,
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
    const left = await mountsUnder(dir);
    await fs.rm(dir, { recursive: true, force: true });
    assert.deepEqual(left, []);
  });

  void it("advertises GET_VOLUME_STATS and VOLUME_CONDITION", async () => {
    const caps = await client.nodeGetCapabilities();
    assert.deepEqual([caps.getVolumeStats, caps.volumeCondition], [true, true]);
  });

  void it("ControllerGetVolume: advertised, healthy, abnormal once the directory is gone, NOT_FOUND for an unknown volume", async () => {
    const caps = await client.controllerGetCapabilities();
    assert.deepEqual([caps.getVolume, caps.volumeCondition], [true, true]);
    const vol = await client.createVolume({
      name: "ctl-condition",
      capacityRange: null,
      volumeCapabilities: [cap],
      parameters: {},
      secrets: {},
      contentSource: null,
      accessibilityRequirements: null,
    });
    const healthy = await client.controllerGetVolume({ volumeId: vol.volumeId });
    assert.equal(healthy.volume.volumeId, vol.volumeId);
    assert.deepEqual(healthy.publishedNodeIds, []);
    assert.deepEqual(healthy.condition, { abnormal: false, message: "volume directory is present" });
    await fs.rm(path.join(dir, "state", "volumes", vol.volumeId), { recursive: true, force: true });
    const gone = await client.controllerGetVolume({ volumeId: vol.volumeId });
    assert.equal(gone.condition?.abnormal, true);
    assert.match(gone.condition?.message ?? "", /^volume directory .* is missing$/);
    await assert.rejects(
      client.controllerGetVolume({ volumeId: "no-such-volume" }),
      (e: BerthError) => e.code === "ERR_CSI_NOT_FOUND",
    );
    await client.deleteVolume({ volumeId: vol.volumeId, secrets: {} });
  });

  void it("reports the directory's own usage, growing with a 5 MiB write, and abnormal once it is removed", async () => {
    const vol = await client.createVolume({
      name: "stats",
      capacityRange: { requiredBytes: 64 * MiB, limitBytes: 0 },
      volumeCapabilities: [cap],
      parameters: {},
      secrets: {},
      contentSource: null,
      accessibilityRequirements: null,
    });
    const staging = path.join(dir, "plugin", "staging", vol.volumeId);
    const target = path.join(dir, "plugin", "per-alloc", "a1", vol.volumeId);
    const req = { volumeId: vol.volumeId, volumePath: target, stagingTargetPath: staging };
    await assert.rejects(client.nodeGetVolumeStats(req), (e: BerthError) => e.code === "ERR_CSI_NOT_FOUND");
    const node = {
      volumeId: vol.volumeId,
      publishContext: {},
      volumeCapability: cap,
      secrets: {},
      volumeContext: {},
    };
    try {
      await client.nodeStageVolume({ ...node, stagingTargetPath: staging });
      await client.nodePublishVolume({
        ...node,
        stagingTargetPath: staging,
        targetPath: target,
        readonly: false,
      });

      const before = await client.nodeGetVolumeStats(req);
      assert.equal(before.bytes!.total, 64 * MiB, "total is the recorded capacity");
      assert.equal(before.bytes!.available, 64 * MiB - before.bytes!.used);
      assert.equal(before.inodes!.used, 1, "the empty volume is its root directory");
      assert.ok(before.inodes!.total > 0);
      assert.deepEqual(before.condition, { abnormal: false, message: "volume directory is present" });

      // Random bytes: nothing a filesystem could compress or leave sparse.
      await fs.writeFile(path.join(target, "blob"), randomBytes(5 * MiB));
      await fs.mkdir(path.join(target, "sub"));
      await fs.writeFile(path.join(target, "sub", "small"), "x");
      const after = await client.nodeGetVolumeStats(req);
      const grown = after.bytes!.used - before.bytes!.used;
      assert.ok(grown >= 5 * MiB && grown < 6 * MiB, `used grew by 5 MiB (grew ${grown})`);
      assert.equal(after.bytes!.available, 64 * MiB - after.bytes!.used);
      assert.equal(after.inodes!.used, 4);

      // The directory removed behind the plugin's back: still mounted, but abnormal.
      await fs.rm(path.join(dir, "state", "volumes", vol.volumeId), { recursive: true, force: true });
      const gone = await client.nodeGetVolumeStats(req);
      assert.equal(gone.condition!.abnormal, true);
      assert.match(gone.condition!.message, /volume directory .* is missing/);
      assert.ok(gone.bytes!.used < before.bytes!.used + MiB, "its files went with it");

      await client.nodeUnpublishVolume({ volumeId: vol.volumeId, targetPath: target });
      await client.nodeUnstageVolume({ volumeId: vol.volumeId, stagingTargetPath: staging });
    } finally {
      for (const m of (await mountsUnder(dir)).reverse()) execFileSync("umount", ["-l", m]);
    }
    assert.deepEqual(await mountsUnder(dir), [], "nothing left mounted");
  });
});
