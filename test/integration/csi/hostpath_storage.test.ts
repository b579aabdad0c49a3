/**
 * csi-hostpath snapshots, restore, clone, expansion, ListVolumes and GetCapacity, through berth's
 * own CSI client (so the client methods and conversions are exercised too) against a real plugin
 * server on real directories. NodeExpandVolume needs a real published mount; the test cleans up
 * and asserts nothing is left mounted.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { BerthError } from "../../../src/structs/errors.js";
import { nullLogger } from "../../../src/internal/log.js";
import { createCsiClient } from "../../../src/csi/client.js";
import { startHostpathServer, type HostpathServer } from "../../../src/csi/hostpath/index.js";
import { readCallLog } from "../../../src/csi/hostpath/call_log.js";
import type { CsiClient, CsiVolumeCapability, CreateVolumeRequest } from "../../../src/csi/types.js";
import { mountsUnder } from "../../helpers/mounts.js";

const cap: CsiVolumeCapability = {
  accessMode: "single-node-writer",
  access: { type: "mount", fsType: "", mountFlags: [] },
};
const code = (c: string) => (e: BerthError) => e.code === c;
const MiB = 1 << 20;

function createReq(name: string, extra: Partial<CreateVolumeRequest> = {}): CreateVolumeRequest {
  return {
    name,
    capacityRange: { requiredBytes: MiB, limitBytes: 0 },
    volumeCapabilities: [cap],
    parameters: {},
    secrets: {},
    contentSource: null,
    accessibilityRequirements: null,
    ...extra,
  };
}

async function start(dir: string, attachRequired: boolean): Promise<HostpathServer> {
  return startHostpathServer(
    {
      socketPath: path.join(dir, attachRequired ? "attach.sock" : "csi.sock"),
      nodeId: "node-1",
      stateDir: path.join(dir, attachRequired ? "attach-state" : "state"),
      maxVolumes: 16,
      topology: { "berth.io/hostname": "node-1" },
      callLog: path.join(dir, "calls.jsonl"),
      mode: "monolith",
      attachRequired,
    },
    nullLogger,
  );
}

void describe("csi-hostpath snapshots, clone, expansion, ListVolumes, GetCapacity", () => {
  let dir: string;
  let server: HostpathServer;
  let client: CsiClient;
  const volDir = (id: string) => path.join(dir, "state", "volumes", id);

  void before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "berth-hps-"));
    server = await start(dir, false);
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

  void it("advertises the capabilities it serves", async () => {
    const c = await client.controllerGetCapabilities();
    for (const k of [
      "createDeleteSnapshot",
      "listSnapshots",
      "cloneVolume",
      "expandVolume",
      "listVolumes",
      "getCapacity",
    ] as const) {
      assert.equal(c[k], true, k);
    }
    assert.equal(c.listVolumesPublishedNodes, false, "only --attach-required knows published nodes");
    assert.equal((await client.nodeGetCapabilities()).expandVolume, true);
    assert.equal((await client.getPluginCapabilities()).onlineExpansion, true);
  });

  void it("snapshots copy a volume, idempotently by name; restore and clone copy the content", async () => {
    const src = await client.createVolume(createReq("src"));
    await fs.writeFile(path.join(volDir(src.volumeId), "data.txt"), "v1");
    await fs.mkdir(path.join(volDir(src.volumeId), "sub"));
    await fs.writeFile(path.join(volDir(src.volumeId), "sub", "deep.txt"), "deep");

    const snap = await client.createSnapshot({
      sourceVolumeId: src.volumeId,
      name: "s1",
      secrets: {},
      parameters: {},
    });
    assert.match(snap.snapshotId, /^snap-[0-9a-f]{24}$/);
    assert.equal(snap.sourceVolumeId, src.volumeId);
    assert.equal(snap.sizeBytes, MiB);
    assert.equal(snap.readyToUse, true);
    assert.ok(Math.abs(snap.creationTime - Date.now()) < 60_000, "creation time is now (ms)");
    const again = await client.createSnapshot({
      sourceVolumeId: src.volumeId,
      name: "s1",
      secrets: {},
      parameters: {},
    });
    assert.deepEqual(again, snap, "same name and source: the same snapshot");
    const other = await client.createVolume(createReq("other"));
    await assert.rejects(
      client.createSnapshot({ sourceVolumeId: other.volumeId, name: "s1", secrets: {}, parameters: {} }),
      code("ERR_CSI_ALREADY_EXISTS"),
    );
    await assert.rejects(
      client.createSnapshot({
        sourceVolumeId: "hp-000000000000000000000000",
        name: "s2",
        secrets: {},
        parameters: {},
      }),
      code("ERR_CSI_NOT_FOUND"),
    );
    const snapDir = path.join(dir, "state", "snapshots", snap.snapshotId);
    assert.equal(await fs.readFile(path.join(snapDir, "sub", "deep.txt"), "utf8"), "deep");

    // The source changes after the snapshot: a restore gets the old content, a clone the new.
    await fs.writeFile(path.join(volDir(src.volumeId), "data.txt"), "v2");
    const restored = await client.createVolume(
      createReq("restored", { capacityRange: null, contentSource: { snapshotId: snap.snapshotId } }),
    );
    assert.deepEqual(restored.contentSource, { snapshotId: snap.snapshotId });
    assert.equal(restored.capacityBytes, MiB, "a restored volume is at least its snapshot's size");
    assert.equal(await fs.readFile(path.join(volDir(restored.volumeId), "data.txt"), "utf8"), "v1");
    assert.equal(await fs.readFile(path.join(volDir(restored.volumeId), "sub", "deep.txt"), "utf8"), "deep");
    assert.deepEqual(
      await client.createVolume(
        createReq("restored", { capacityRange: null, contentSource: { snapshotId: snap.snapshotId } }),
      ),
      restored,
      "CreateVolume from a snapshot is idempotent",
    );
    await assert.rejects(
      client.createVolume(createReq("restored", { capacityRange: null })),
      code("ERR_CSI_ALREADY_EXISTS"),
      "the same name without the source is another volume",
    );

    const clone = await client.createVolume(
      createReq("clone", { contentSource: { volumeId: src.volumeId } }),
    );
    assert.deepEqual(clone.contentSource, { volumeId: src.volumeId });
    assert.equal(await fs.readFile(path.join(volDir(clone.volumeId), "data.txt"), "utf8"), "v2");
    await assert.rejects(
      client.createVolume(
        createReq("bad", { contentSource: { snapshotId: "snap-000000000000000000000000" } }),
      ),
      code("ERR_CSI_NOT_FOUND"),
    );
    await assert.rejects(
      client.createVolume(
        createReq("small", {
          capacityRange: { requiredBytes: 0, limitBytes: 1024 },
          contentSource: { snapshotId: snap.snapshotId },
        }),
      ),
      code("ERR_CSI_OUT_OF_RANGE"),
      "a limit below the snapshot's size",
    );

    // Listing, filtering and paging.
    const s2 = await client.createSnapshot({
      sourceVolumeId: other.volumeId,
      name: "s2",
      secrets: {},
      parameters: {},
    });
    const list = { maxEntries: 0, startingToken: "", sourceVolumeId: "", snapshotId: "", secrets: {} };
    const all = await client.listSnapshots(list);
    assert.deepEqual(all.entries.map((s) => s.snapshotId).sort(), [snap.snapshotId, s2.snapshotId].sort());
    assert.equal(all.nextToken, "");
    const first = await client.listSnapshots({ ...list, maxEntries: 1 });
    assert.equal(first.entries.length, 1);
    assert.equal(first.nextToken, "1");
    const second = await client.listSnapshots({ ...list, maxEntries: 1, startingToken: first.nextToken });
    assert.notEqual(second.entries[0]!.snapshotId, first.entries[0]!.snapshotId);
    assert.deepEqual(
      (await client.listSnapshots({ ...list, sourceVolumeId: other.volumeId })).entries.map(
        (s) => s.snapshotId,
      ),
      [s2.snapshotId],
    );
    assert.deepEqual((await client.listSnapshots({ ...list, snapshotId: "snap-nope" })).entries, []);
    await assert.rejects(client.listSnapshots({ ...list, startingToken: "x" }), code("ERR_CSI_ABORTED"));

    await client.deleteSnapshot({ snapshotId: s2.snapshotId, secrets: {} });
    await client.deleteSnapshot({ snapshotId: s2.snapshotId, secrets: {} });
    await assert.rejects(fs.stat(path.join(dir, "state", "snapshots", s2.snapshotId)), /ENOENT/);
    assert.deepEqual(
      (await client.listSnapshots(list)).entries.map((s) => s.snapshotId),
      [snap.snapshotId],
    );
  });

  void it("expansion raises the recorded capacity, never lowers it; NodeExpandVolume needs the mount", async () => {
    const vol = await client.createVolume(createReq("grow"));
    const grown = await client.controllerExpandVolume({
      volumeId: vol.volumeId,
      capacityRange: { requiredBytes: 4 * MiB, limitBytes: 0 },
      secrets: {},
      volumeCapability: cap,
    });
    assert.deepEqual(grown, { capacityBytes: 4 * MiB, nodeExpansionRequired: true });
    assert.equal(
      (
        await client.controllerExpandVolume({
          volumeId: vol.volumeId,
          capacityRange: { requiredBytes: 2 * MiB, limitBytes: 0 },
          secrets: {},
          volumeCapability: null,
        })
      ).capacityBytes,
      4 * MiB,
      "a smaller request keeps the capacity",
    );
    await assert.rejects(
      client.controllerExpandVolume({
        volumeId: vol.volumeId,
        capacityRange: { requiredBytes: 0, limitBytes: 2 * MiB },
        secrets: {},
        volumeCapability: null,
      }),
      code("ERR_CSI_OUT_OF_RANGE"),
    );
    await assert.rejects(
      client.controllerExpandVolume({
        volumeId: "hp-000000000000000000000000",
        capacityRange: { requiredBytes: MiB, limitBytes: 0 },
        secrets: {},
        volumeCapability: null,
      }),
      code("ERR_CSI_NOT_FOUND"),
    );
    const listed = await client.listVolumes({ maxEntries: 0, startingToken: "" });
    assert.equal(
      listed.entries.find((e) => e.volume.volumeId === vol.volumeId)?.volume.capacityBytes,
      4 * MiB,
    );

    const staging = path.join(dir, "plugin", "staging", vol.volumeId);
    const target = path.join(dir, "plugin", "per-alloc", "a1", vol.volumeId);
    const node = {
      volumeId: vol.volumeId,
      publishContext: {},
      volumeCapability: cap,
      secrets: {},
      volumeContext: {},
    };
    const expand = {
      volumeId: vol.volumeId,
      stagingTargetPath: staging,
      capacityRange: { requiredBytes: 4 * MiB, limitBytes: 0 },
      volumeCapability: cap,
      secrets: {},
    };
    await assert.rejects(
      client.nodeExpandVolume({ ...expand, volumePath: target }),
      code("ERR_CSI_NOT_FOUND"),
    );
    try {
      await client.nodeStageVolume({ ...node, stagingTargetPath: staging });
      await client.nodePublishVolume({
        ...node,
        stagingTargetPath: staging,
        targetPath: target,
        readonly: false,
      });
      assert.deepEqual(await client.nodeExpandVolume({ ...expand, volumePath: target }), {
        capacityBytes: 4 * MiB,
      });
      await client.nodeUnpublishVolume({ volumeId: vol.volumeId, targetPath: target });
      await client.nodeUnstageVolume({ volumeId: vol.volumeId, stagingTargetPath: staging });
    } finally {
      for (const m of (await mountsUnder(dir)).reverse()) execFileSync("umount", ["-l", m]);
    }
    assert.deepEqual(await mountsUnder(dir), [], "nothing left mounted");
    const calls = readCallLog(path.join(dir, "calls.jsonl"))
      .filter((c) => c.volume_id === vol.volumeId && /Expand/.test(c.method))
      .map((c) => `${c.method}:${c.code}`);
    assert.deepEqual(calls, [
      "ControllerExpandVolume:OK",
      "ControllerExpandVolume:OK",
      "ControllerExpandVolume:OUT_OF_RANGE",
      "NodeExpandVolume:NOT_FOUND",
      "NodeExpandVolume:OK",
    ]);
  });

  void it("ListVolumes pages through every volume; GetCapacity reports free space", async () => {
    const all = await client.listVolumes({ maxEntries: 0, startingToken: "" });
    assert.ok(all.entries.length >= 5);
    assert.ok(all.entries.every((e) => e.publishedNodeIds.length === 0 && e.condition === null));
    let token = "";
    const seen: string[] = [];
    do {
      const p = await client.listVolumes({ maxEntries: 2, startingToken: token });
      assert.ok(p.entries.length <= 2);
      seen.push(...p.entries.map((e) => e.volume.volumeId));
      token = p.nextToken;
    } while (token !== "");
    assert.deepEqual(
      seen,
      all.entries.map((e) => e.volume.volumeId),
    );
    await assert.rejects(client.listVolumes({ maxEntries: 0, startingToken: "99" }), code("ERR_CSI_ABORTED"));
    const capacity = await client.getCapacity({
      volumeCapabilities: [cap],
      parameters: {},
      accessibleTopology: null,
    });
    assert.ok(capacity.availableCapacity > 0);
    assert.equal(capacity.maximumVolumeSize, null);
  });

  void it("in --attach-required mode ListVolumes names the nodes a volume is published to", async () => {
    const attach = await start(dir, true);
    const c = createCsiClient(attach.endpoint, { log: nullLogger });
    try {
      assert.equal((await c.controllerGetCapabilities()).listVolumesPublishedNodes, true);
      const vol = await c.createVolume(createReq("published"));
      await c.controllerPublishVolume({
        volumeId: vol.volumeId,
        nodeId: "node-x",
        volumeCapability: cap,
        readonly: false,
        secrets: {},
        volumeContext: {},
      });
      const listed = await c.listVolumes({ maxEntries: 0, startingToken: "" });
      assert.deepEqual(listed.entries.find((e) => e.volume.volumeId === vol.volumeId)?.publishedNodeIds, [
        "node-x",
      ]);
    } finally {
      c.close();
      await attach.stop();
    }
  });
});
