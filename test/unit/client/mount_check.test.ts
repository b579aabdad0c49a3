/**
 * The mount check after NodeStage/NodePublish (mount_check.ts, volume_manager.ts): a plugin that
 * answers success without mounting never gets its path handed on. The fake CSI client "mounts" a
 * path on success; `mountsNothing` makes it answer success and mount nothing.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { VolumeManager } from "../../../src/client/csimanager/volume_manager.js";
import type { MountVolumeRequest } from "../../../src/client/csimanager/volume_requests.js";
import { volumePaths } from "../../../src/client/csimanager/paths.js";
import { holdsVolume } from "../../../src/client/csimanager/mount_check.js";
import { nullLogger } from "../../../src/internal/log.js";
import { BerthError, isBerthError, isRetryable } from "../../../src/structs/errors.js";
import type { VolumeUsage } from "../../../src/client/state/types.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";
import { claimedVolume, plugin } from "../../builders/client_records.js";
import { fakeMountCheck } from "../../fakes/mount_check.js";
import { tempDir } from "../../helpers/temp_dir.js";

const RETRY = { baseMs: 1, maxMs: 2, deadlineMs: 60, jitter: 0 };
const FS: VolumeUsage = { readOnly: false, accessMode: "single-node-writer", attachmentMode: "file-system" };

function setup(over: { isDeviceNode?: (p: string) => Promise<boolean> } = {}) {
  const hostDir = tempDir("berth-mc-");
  const client = new FakeCsiClient();
  const p = plugin({ hostDir, stagePublishBaseDir: "/csi", pluginId: "hostpath" });
  const vm = new VolumeManager({
    plugins: { nodePlugin: async () => ({ client, capabilities: { ...client.nodeCaps } }) },
    log: nullLogger,
    retry: RETRY,
    isMountPoint: fakeMountCheck(client, p),
    ...over,
  });
  const notMounted: BerthError[] = [];
  const req = (usage = FS): MountVolumeRequest => ({
    plugin: p,
    volume: claimedVolume({ PluginID: "hostpath" }),
    allocId: "a1",
    usage: { ...usage, mountOptions: null },
    publishContext: {},
    onNotMounted: (err) => notMounted.push(err),
  });
  const paths = (usage = FS) =>
    volumePaths(p, { namespace: "default", volumeId: "vol1", allocId: "a1" }, usage);
  return { client, vm, req, paths, notMounted };
}

async function mountError(run: Promise<unknown>): Promise<BerthError> {
  try {
    await run;
  } catch (err) {
    assert.ok(isBerthError(err), String(err));
    return err;
  }
  assert.fail("the mount succeeded");
}

test("NodePublish success without a mount: retried, reported, cleaned up, fails naming plugin and host path", async () => {
  const { client, vm, req, paths, notMounted } = setup();
  const realPublish = client.nodePublishVolume.bind(client);
  // Staging works; only the publish "succeeds" without mounting.
  client.nodePublishVolume = (r, o) => {
    client.mountsNothing = true;
    return realPublish(r, o).finally(() => (client.mountsNothing = false));
  };
  const err = await mountError(vm.mountVolume(req()));
  const target = paths().hostTargetPath;
  assert.equal(err.code, "ERR_CSI_NOT_MOUNTED");
  assert.ok(isRetryable(err.code), "a retryable error: the mount step is asked again");
  assert.equal(
    err.message,
    `CSI plugin "hostpath" reported NodePublishVolume success but ${target} is not a mount point`,
  );
  assert.ok(client.callsOf("NodePublishVolume").length > 1, "NodePublish was asked again");
  assert.equal(notMounted.length, client.callsOf("NodePublishVolume").length, "each one reported");
  assert.deepEqual(
    client.methods().filter((m) => m !== "NodePublishVolume"),
    ["NodeStageVolume", "NodeUnpublishVolume", "NodeUnstageVolume"],
    "what the failed mount created is released",
  );
  assert.equal(fs.existsSync(target), false, "the empty target dir is gone");
  assert.deepEqual(vm.stagingUsers("hostpath", "default", "vol1", FS), []);
});

test("NodeStage success without a mount: no publish, the staging is undone, the error names the staging path", async () => {
  const { client, vm, req, paths } = setup();
  client.mountsNothing = true;
  const err = await mountError(vm.mountVolume(req()));
  assert.equal(
    err.message,
    `CSI plugin "hostpath" reported NodeStageVolume success but ${paths().hostStagingPath} is not a mount point`,
  );
  assert.equal(client.callsOf("NodePublishVolume").length, 0, "never published on an empty staging");
  assert.equal(client.methods().at(-1), "NodeUnstageVolume");
  assert.equal(fs.existsSync(paths().hostStagingPath), false);
});

test("a plugin that mounts passes the check; the stub is published only while its target is mounted", async () => {
  const { client, vm, req } = setup();
  const { stub } = await vm.mountVolume(req());
  assert.deepEqual(client.methods(), ["NodeStageVolume", "NodePublishVolume"]);
  assert.equal(await vm.isPublished(stub), true);
  client.mounts.clear();
  assert.equal(await vm.isPublished(stub), false, "an empty directory is not a published volume");
});

test("block: a device node at the target counts; the staging (plugin scratch space) is not checked", async () => {
  const BLOCK: VolumeUsage = { ...FS, attachmentMode: "block-device" };
  const devices = new Set<string>();
  const { client, vm, req, paths } = setup({ isDeviceNode: async (p) => devices.has(p) });
  client.mountsNothing = true;
  const err = await mountError(vm.mountVolume(req(BLOCK)));
  assert.match(err.message, /NodePublishVolume success but .* is not a mount point or a device node/);
  client.calls.length = 0;
  devices.add(paths(BLOCK).hostTargetPath);
  await vm.mountVolume(req(BLOCK));
  assert.deepEqual(client.methods(), ["NodeStageVolume", "NodePublishVolume"]);
});

test("holdsVolume: file-system needs a mount point; block a mount point or a device node", async () => {
  const probe = (mounts: string[], devices: string[] = []) => ({
    isMountPoint: async (p: string) => mounts.includes(p),
    isDeviceNode: async (p: string) => devices.includes(p),
  });
  assert.equal(await holdsVolume(probe([]), "NodePublishVolume", "file-system", "/t"), false);
  assert.equal(await holdsVolume(probe(["/t"]), "NodePublishVolume", "file-system", "/t"), true);
  assert.equal(await holdsVolume(probe([], ["/t"]), "NodePublishVolume", "file-system", "/t"), false);
  assert.equal(await holdsVolume(probe([], ["/t"]), "NodePublishVolume", "block-device", "/t"), true);
  assert.equal(await holdsVolume(probe(["/t"]), "NodePublishVolume", "block-device", "/t"), true);
  assert.equal(await holdsVolume(probe([]), "NodeStageVolume", "block-device", "/s"), true);
});
