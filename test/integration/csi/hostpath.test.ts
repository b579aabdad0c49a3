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
import type { CsiClient, CsiVolumeCapability } from "../../../src/csi/types.js";
import { mountsUnder } from "../../helpers/mounts.js";

const cap: CsiVolumeCapability = {
  accessMode: "single-node-writer",
  access: { type: "mount", fsType: "", mountFlags: [] },
};
const code = (c: string) => (e: BerthError) => e.code === c;

void describe("csi-hostpath conformance (real bind mounts)", () => {
  let dir: string;
  let server: HostpathServer;
  let client: CsiClient;

  void before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "berth-hp-"));
    server = await startHostpathServer(
      {
        socketPath: path.join(dir, "csi.sock"),
        nodeId: "node-1",
        stateDir: path.join(dir, "state"),
        maxVolumes: 4,
        topology: { "berth.io/hostname": "node-1" },
        callLog: path.join(dir, "calls.jsonl"),
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
    for (const m of await mountsUnder(dir)) execFileSync("umount", ["-l", m]);
    const left = await mountsUnder(dir);
    await fs.rm(dir, { recursive: true, force: true });
    assert.deepEqual(left, []);
  });

  void it("identifies itself", async () => {
    assert.equal((await client.getPluginInfo()).name, "csi-hostpath.berth.io");
    const p = await client.getPluginCapabilities();
    assert.equal(p.controllerService && p.volumeAccessibilityConstraints, true);
    const c = await client.controllerGetCapabilities();
    assert.equal(c.createDeleteVolume, true);
    assert.equal(c.publishUnpublishVolume, false);
    assert.equal((await client.nodeGetCapabilities()).stageUnstageVolume, true);
    assert.deepEqual(await client.nodeGetInfo(), {
      nodeId: "node-1",
      maxVolumesPerNode: 4,
      accessibleTopology: { segments: { "berth.io/hostname": "node-1" } },
    });
  });

  void it("create → stage → publish → read-only publish → unpublish → unstage → delete, each idempotent", async () => {
    const createReq = {
      name: "data",
      capacityRange: { requiredBytes: 2048, limitBytes: 0 },
      volumeCapabilities: [cap],
      parameters: {},
      secrets: {},
      contentSource: null,
      accessibilityRequirements: null,
    };
    const vol = await client.createVolume(createReq);
    assert.equal(vol.capacityBytes, 2048);
    assert.deepEqual(await client.createVolume(createReq), vol);
    const volDir = path.join(dir, "state", "volumes", vol.volumeId);
    const staging = path.join(dir, "plugin", "staging", vol.volumeId);
    const target = path.join(dir, "alloc", "a1", "data");
    const roTarget = path.join(dir, "alloc", "a2", "data");
    const node = {
      volumeId: vol.volumeId,
      publishContext: {},
      volumeCapability: cap,
      secrets: {},
      volumeContext: vol.volumeContext,
    };
    try {
      await client.nodeStageVolume({ ...node, stagingTargetPath: staging });
      await client.nodeStageVolume({ ...node, stagingTargetPath: staging });
      const pub = { ...node, stagingTargetPath: staging, targetPath: target, readonly: false };
      await client.nodePublishVolume(pub);
      await client.nodePublishVolume(pub);
      await fs.writeFile(path.join(target, "hello.txt"), "hi");
      assert.equal(await fs.readFile(path.join(volDir, "hello.txt"), "utf8"), "hi");

      await client.nodePublishVolume({ ...pub, targetPath: roTarget, readonly: true });
      assert.equal(await fs.readFile(path.join(roTarget, "hello.txt"), "utf8"), "hi");
      await assert.rejects(fs.writeFile(path.join(roTarget, "nope.txt"), "x"), /EROFS/);
      await assert.rejects(
        client.nodePublishVolume({ ...pub, targetPath: roTarget, readonly: false }),
        code("ERR_CSI_ALREADY_EXISTS"),
      );

      await assert.rejects(
        client.deleteVolume({ volumeId: vol.volumeId, secrets: {} }),
        code("ERR_CSI_FAILED_PRECONDITION"),
      );
      for (const t of [target, roTarget]) {
        await client.nodeUnpublishVolume({ volumeId: vol.volumeId, targetPath: t });
        await client.nodeUnpublishVolume({ volumeId: vol.volumeId, targetPath: t });
        await assert.rejects(fs.stat(t), /ENOENT/);
      }
      await client.nodeUnstageVolume({ volumeId: vol.volumeId, stagingTargetPath: staging });
      await client.nodeUnstageVolume({ volumeId: vol.volumeId, stagingTargetPath: staging });
      assert.deepEqual(await mountsUnder(dir), []);
      assert.equal(await fs.readFile(path.join(volDir, "hello.txt"), "utf8"), "hi");
    } finally {
      for (const m of await mountsUnder(dir)) execFileSync("umount", ["-l", m]);
    }
    await client.deleteVolume({ volumeId: vol.volumeId, secrets: {} });
    await client.deleteVolume({ volumeId: vol.volumeId, secrets: {} });
    await assert.rejects(fs.stat(volDir), /ENOENT/);
    const calls = readCallLog(path.join(dir, "calls.jsonl"))
      .filter((c) => c.volume_id === vol.volumeId)
      .map((c) => `${c.method}:${c.code}`);
    assert.deepEqual(
      calls.filter((c) => /^Node(Unpublish|Unstage)Volume|^DeleteVolume/.test(c)),
      [
        "DeleteVolume:FAILED_PRECONDITION",
        "NodeUnpublishVolume:OK",
        "NodeUnpublishVolume:OK",
        "NodeUnpublishVolume:OK",
        "NodeUnpublishVolume:OK",
        "NodeUnstageVolume:OK",
        "NodeUnstageVolume:OK",
        "DeleteVolume:OK",
        "DeleteVolume:OK",
      ],
      "the call log records every call with its outcome, in order",
    );
  });

  void it("answers the spec's error codes", async () => {
    const base = {
      name: "x",
      capacityRange: null,
      volumeCapabilities: [cap],
      parameters: {},
      secrets: {},
      contentSource: null,
      accessibilityRequirements: null,
    };
    await assert.rejects(client.createVolume({ ...base, name: "" }), code("ERR_CSI_INVALID_ARGUMENT"));
    await assert.rejects(
      client.createVolume({ ...base, volumeCapabilities: [] }),
      code("ERR_CSI_INVALID_ARGUMENT"),
    );
    await assert.rejects(
      client.createVolume({
        ...base,
        // Block is served (hostpath_block.test.ts); a CSI 1.5 mode without --single-node-multi-writer is not.
        volumeCapabilities: [{ accessMode: "single-node-multi-writer", access: { type: "block" } }],
      }),
      code("ERR_CSI_INVALID_ARGUMENT"),
    );
    await assert.rejects(
      client.createVolume({ ...base, capacityRange: { requiredBytes: 10, limitBytes: 5 } }),
      code("ERR_CSI_OUT_OF_RANGE"),
    );
    const v = await client.createVolume({ ...base, capacityRange: { requiredBytes: 100, limitBytes: 0 } });
    await assert.rejects(
      client.createVolume({ ...base, capacityRange: { requiredBytes: 1000, limitBytes: 0 } }),
      code("ERR_CSI_ALREADY_EXISTS"),
    );
    const validate = { volumeContext: {}, volumeCapabilities: [cap], parameters: {}, secrets: {} };
    assert.ok((await client.validateVolumeCapabilities({ ...validate, volumeId: v.volumeId })).confirmed);
    await assert.rejects(
      client.validateVolumeCapabilities({ ...validate, volumeId: "hp-unknown" }),
      code("ERR_CSI_NOT_FOUND"),
    );
    const node = { publishContext: {}, volumeCapability: cap, secrets: {}, volumeContext: {} };
    await assert.rejects(
      client.nodeStageVolume({ ...node, volumeId: "../../etc", stagingTargetPath: path.join(dir, "s") }),
      code("ERR_CSI_NOT_FOUND"),
    );
    await assert.rejects(
      client.nodeStageVolume({ ...node, volumeId: v.volumeId, stagingTargetPath: "" }),
      code("ERR_CSI_INVALID_ARGUMENT"),
    );
    await assert.rejects(
      client.nodePublishVolume({
        ...node,
        volumeId: v.volumeId,
        stagingTargetPath: path.join(dir, "not-staged"),
        targetPath: path.join(dir, "t"),
        readonly: false,
      }),
      code("ERR_CSI_FAILED_PRECONDITION"),
    );
    await client.deleteVolume({ volumeId: "hp-000000000000000000000000", secrets: {} });
    await client.deleteVolume({ volumeId: v.volumeId, secrets: {} });
    assert.deepEqual(await mountsUnder(dir), []);
  });
});
