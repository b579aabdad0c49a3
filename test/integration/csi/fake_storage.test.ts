/** The fake CSI plugin's default answers for expansion, snapshots and ListVolumes, via berth's client. */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { BerthError } from "../../../src/structs/errors.js";
import { nullLogger } from "../../../src/internal/log.js";
import { createCsiClient } from "../../../src/csi/client.js";
import { FakeCsiPlugin } from "../../../src/csi/fake/index.js";
import type { CsiClient, CsiVolumeCapability } from "../../../src/csi/types.js";

const cap: CsiVolumeCapability = {
  accessMode: "single-node-writer",
  access: { type: "mount", fsType: "", mountFlags: [] },
};
const code = (c: string) => (e: BerthError) => e.code === c;

void describe("FakeCsiPlugin storage defaults", () => {
  let dir: string;
  let plugin: FakeCsiPlugin;
  let client: CsiClient;

  void before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "berth-fakestore-"));
    plugin = await FakeCsiPlugin.start({
      socketPath: path.join(dir, "csi.sock"),
      controllerCapabilities: {
        expandVolume: true,
        createDeleteSnapshot: true,
        listSnapshots: true,
        listVolumes: true,
        listVolumesPublishedNodes: true,
      },
      nodeCapabilities: { expandVolume: true },
    });
    client = createCsiClient(plugin.endpoint, { log: nullLogger });
  });

  void after(async () => {
    client.close();
    await plugin.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  void it("expands, snapshots (idempotently by name) and lists", async () => {
    const vol = await client.createVolume({
      name: "v",
      capacityRange: { requiredBytes: 100, limitBytes: 0 },
      volumeCapabilities: [cap],
      parameters: {},
      secrets: {},
      contentSource: null,
      accessibilityRequirements: null,
    });
    const grown = await client.controllerExpandVolume({
      volumeId: vol.volumeId,
      capacityRange: { requiredBytes: 300, limitBytes: 0 },
      secrets: {},
      volumeCapability: null,
    });
    assert.deepEqual(grown, { capacityBytes: 300, nodeExpansionRequired: true });
    assert.deepEqual(
      await client.nodeExpandVolume({
        volumeId: vol.volumeId,
        volumePath: "/t",
        stagingTargetPath: "",
        capacityRange: null,
        volumeCapability: null,
        secrets: {},
      }),
      { capacityBytes: 300 },
    );
    const req = { sourceVolumeId: vol.volumeId, name: "s", secrets: {}, parameters: {} };
    const snap = await client.createSnapshot(req);
    assert.deepEqual(await client.createSnapshot(req), snap);
    assert.equal(snap.sizeBytes, 300);
    await assert.rejects(
      client.createSnapshot({ ...req, sourceVolumeId: "other" }),
      code("ERR_CSI_ALREADY_EXISTS"),
    );
    const list = { maxEntries: 0, startingToken: "", sourceVolumeId: "", snapshotId: "", secrets: {} };
    assert.deepEqual((await client.listSnapshots(list)).entries, [snap]);
    await client.deleteSnapshot({ snapshotId: snap.snapshotId, secrets: {} });
    assert.deepEqual((await client.listSnapshots(list)).entries, []);
    await client.controllerPublishVolume({
      volumeId: vol.volumeId,
      nodeId: "n1",
      volumeCapability: cap,
      readonly: false,
      secrets: {},
      volumeContext: {},
    });
    const volumes = await client.listVolumes({ maxEntries: 0, startingToken: "" });
    assert.deepEqual(
      volumes.entries.map((e) => [e.volume.volumeId, e.volume.capacityBytes, e.publishedNodeIds]),
      [[vol.volumeId, 300, ["n1"]]],
    );
    assert.deepEqual(
      plugin.calls.map((c) => c.method).filter((m) => /Expand|Snapshot/.test(m)),
      [
        "ControllerExpandVolume",
        "NodeExpandVolume",
        "CreateSnapshot",
        "CreateSnapshot",
        "CreateSnapshot",
        "ListSnapshots",
        "DeleteSnapshot",
        "ListSnapshots",
      ],
    );
  });
});
