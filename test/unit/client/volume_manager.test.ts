import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { VolumeManager } from "../../../src/client/csimanager/volume_manager.js";
import type { MountVolumeRequest } from "../../../src/client/csimanager/volume_requests.js";
import { usageKey, volumePaths } from "../../../src/client/csimanager/paths.js";
import { nullLogger } from "../../../src/internal/log.js";
import { BerthError, isBerthError } from "../../../src/structs/errors.js";
import type { NodePublishRequest, NodeStageRequest } from "../../../src/csi/types.js";
import { FakeCsiClient, type RecordedCall } from "../../fakes/csi_client.js";
import { claimedVolume, plugin } from "../../builders/client_records.js";
import { fakeMountCheck } from "../../fakes/mount_check.js";
import { tempDir } from "../../helpers/temp_dir.js";

const RETRY = { baseMs: 1, maxMs: 4, deadlineMs: 2000, jitter: 0 };
const USAGE = {
  readOnly: false,
  accessMode: "single-node-writer" as const,
  attachmentMode: "file-system" as const,
};

function setup() {
  const hostDir = tempDir("berth-vm-");
  const client = new FakeCsiClient();
  const p = plugin({ hostDir, stagePublishBaseDir: "/csi" });
  const vm = new VolumeManager({
    plugins: { nodePlugin: async () => ({ client, capabilities: { ...client.nodeCaps } }) },
    log: nullLogger,
    retry: RETRY,
    isMountPoint: fakeMountCheck(client, p),
  });
  const req = (allocId: string, over: Partial<MountVolumeRequest> = {}): MountVolumeRequest => ({
    plugin: p,
    volume: claimedVolume(),
    allocId,
    usage: { ...USAGE, mountOptions: { FSType: "ext4", MountFlags: ["noatime"] } },
    publishContext: { device: "/dev/x" },
    ...over,
  });
  const unmount = (allocId: string, volumeId = "vol1") => ({
    plugin: p,
    allocId,
    volumeId,
    namespace: "default",
    externalId: `ext-${volumeId}`,
    usage: USAGE,
  });
  return { hostDir, client, vm, p, req, unmount };
}

test("paths: usage key and the plugin/host views of one relative layout", () => {
  assert.equal(usageKey(USAGE), "rw-file-system-single-node-writer");
  assert.equal(
    usageKey({ ...USAGE, readOnly: true, attachmentMode: "block-device" }),
    "ro-block-device-single-node-writer",
  );
  const paths = volumePaths(
    { hostDir: "/data/plugins/p", stagePublishBaseDir: "/csi" },
    { namespace: "ns", volumeId: "v[1]", allocId: "a1" },
    USAGE,
  );
  assert.deepEqual(paths, {
    stagingPath: "/csi/staging/ns/v[1]/rw-file-system-single-node-writer",
    targetPath: "/csi/per-alloc/a1/v[1]/rw-file-system-single-node-writer",
    hostStagingPath: "/data/plugins/p/staging/ns/v[1]/rw-file-system-single-node-writer",
    hostTargetPath: "/data/plugins/p/per-alloc/a1/v[1]/rw-file-system-single-node-writer",
  });
  assert.throws(() =>
    volumePaths(
      { hostDir: "/d", stagePublishBaseDir: "/csi" },
      { namespace: "..", volumeId: "..", allocId: "x" },
      USAGE,
    ),
  );
});

test("mount: stage then publish with contexts, secrets, capability and pre-created dirs", async () => {
  const { hostDir, client, vm, req } = setup();
  const res = await vm.mountVolume(req("a1"));
  assert.deepEqual(client.methods(), ["NodeStageVolume", "NodePublishVolume"]);
  const stage = client.callsOf("NodeStageVolume")[0]!.req as NodeStageRequest;
  const pub = client.callsOf("NodePublishVolume")[0]!.req as NodePublishRequest;
  assert.equal(stage.volumeId, "ext-vol1");
  assert.equal(stage.stagingTargetPath, "/csi/staging/default/vol1/rw-file-system-single-node-writer");
  assert.deepEqual(stage.volumeContext, { ctx: "from-volume" });
  assert.deepEqual(stage.publishContext, { device: "/dev/x" });
  assert.deepEqual(stage.secrets, { password: "hunter2" });
  assert.deepEqual(stage.volumeCapability, {
    accessMode: "single-node-writer",
    access: { type: "mount", fsType: "ext4", mountFlags: ["noatime"] },
  });
  assert.equal(pub.stagingTargetPath, stage.stagingTargetPath);
  assert.equal(pub.targetPath, "/csi/per-alloc/a1/vol1/rw-file-system-single-node-writer");
  assert.deepEqual(pub.volumeContext, { ctx: "from-volume" });
  assert.deepEqual(pub.publishContext, { device: "/dev/x" });
  assert.deepEqual(pub.secrets, { password: "hunter2" });
  assert.equal(pub.readonly, false);
  assert.equal(res.source, path.join(hostDir, "per-alloc/a1/vol1/rw-file-system-single-node-writer"));
  assert.equal(res.stub.targetPath, res.source);
  assert.equal(
    res.stub.stagingPath,
    path.join(hostDir, "staging/default/vol1/rw-file-system-single-node-writer"),
  );
  assert.ok(fs.statSync(res.stub.stagingPath).isDirectory(), "CO creates the staging path");
  assert.ok(fs.statSync(path.dirname(res.source)).isDirectory(), "CO creates the target's parent");
  assert.equal(JSON.stringify(res.stub).includes("hunter2"), false, "no secrets in the stub");
});

test("mount: block volumes get a block capability", async () => {
  const { client, vm, req } = setup();
  await vm.mountVolume(
    req("a1", { usage: { ...USAGE, attachmentMode: "block-device", mountOptions: null } }),
  );
  const pub = client.callsOf("NodePublishVolume")[0]!.req as NodePublishRequest;
  assert.deepEqual(pub.volumeCapability.access, { type: "block" });
});

test("staging is shared and reference counted: unstage only after the last alloc", async () => {
  const { hostDir, client, vm, req, unmount } = setup();
  await vm.mountVolume(req("a1"));
  await vm.mountVolume(req("a2"));
  assert.equal(client.callsOf("NodeStageVolume").length, 1);
  assert.equal(client.callsOf("NodePublishVolume").length, 2);
  assert.deepEqual(vm.stagingUsers("fake", "default", "vol1", USAGE).sort(), ["a1", "a2"]);

  await vm.unmountVolume(unmount("a1"));
  assert.deepEqual(client.methods().slice(3), ["NodeUnpublishVolume"]);
  assert.equal(fs.existsSync(path.join(hostDir, "per-alloc/a1")), false, "emptied target dirs removed");
  await vm.unmountVolume(unmount("a2"));
  assert.deepEqual(client.methods().slice(3), [
    "NodeUnpublishVolume",
    "NodeUnpublishVolume",
    "NodeUnstageVolume",
  ]);
  assert.deepEqual(fs.readdirSync(path.join(hostDir, "staging")), [], "emptied staging dirs removed");
  assert.deepEqual(fs.readdirSync(path.join(hostDir, "per-alloc")), []);

  await vm.unmountVolume(unmount("a2"));
  assert.equal(client.callsOf("NodeUnstageVolume").length, 2, "a repeated unmount is harmless");
});

test("restore rebuilds the staging counts from persisted stubs", async () => {
  const { client, vm, req, unmount } = setup();
  const s1 = (await vm.mountVolume(req("a1"))).stub;
  const s2 = (await vm.mountVolume(req("a2"))).stub;
  const checked: string[] = [];
  const fresh = new VolumeManager({
    plugins: { nodePlugin: async () => ({ client, capabilities: client.nodeCaps }) },
    log: nullLogger,
    retry: RETRY,
    isMountPoint: async (p) => (checked.push(p), true),
  });
  fresh.restore([
    { allocId: "a1", stub: s1 },
    { allocId: "a2", stub: s2 },
  ]);
  client.calls.length = 0;
  await fresh.mountVolume(req("a3"));
  assert.deepEqual(client.methods(), ["NodePublishVolume"], "already staged: no second NodeStage");
  const stagingChecks = () => checked.filter((c) => c === s1.stagingPath);
  assert.deepEqual(stagingChecks(), [s1.stagingPath], "the restored staging was checked once");
  await fresh.mountVolume(req("a4"));
  assert.equal(stagingChecks().length, 1, "a verified staging is not checked again");
  await fresh.unmountVolume(unmount("a4"));
  await fresh.unmountVolume(unmount("a1"));
  await fresh.unmountVolume(unmount("a3"));
  assert.equal(client.callsOf("NodeUnstageVolume").length, 0);
  await fresh.unmountVolume(unmount("a2"));
  assert.equal(client.callsOf("NodeUnstageVolume").length, 1);
});

test("a restored staging whose mount is gone is staged again before the next publish", async () => {
  const { client, vm, req } = setup();
  const s1 = (await vm.mountVolume(req("a1"))).stub;
  const fresh = new VolumeManager({
    plugins: { nodePlugin: async () => ({ client, capabilities: client.nodeCaps }) },
    log: nullLogger,
    retry: RETRY,
    isMountPoint: fakeMountCheck(client, req("a1").plugin),
  });
  fresh.restore([{ allocId: "a1", stub: s1 }]);
  client.mounts.clear(); // a reboot took every mount
  client.calls.length = 0;
  await fresh.mountVolume(req("a1"));
  assert.deepEqual(client.methods(), ["NodeStageVolume", "NodePublishVolume"]);
  assert.equal(
    (client.calls[0]!.req as NodeStageRequest).stagingTargetPath,
    "/csi/staging/default/vol1/rw-file-system-single-node-writer",
  );
});

test("a plugin without STAGE_UNSTAGE_VOLUME is never staged", async () => {
  const { client, vm, req, unmount } = setup();
  client.nodeCaps.stageUnstageVolume = false;
  const res = await vm.mountVolume(req("a1"));
  await vm.unmountVolume(unmount("a1"));
  assert.deepEqual(client.methods(), ["NodePublishVolume", "NodeUnpublishVolume"]);
  assert.equal((client.calls[0]!.req as NodePublishRequest).stagingTargetPath, "");
  assert.equal(res.stub.stagingPath, "");
});

test("calls for one volume never overlap; different volumes proceed in parallel", async () => {
  const { client, vm, req } = setup();
  client.delayMs = 15;
  await Promise.all([
    vm.mountVolume(req("a1")),
    vm.mountVolume(req("a2")),
    vm.mountVolume(req("a3", { volume: claimedVolume({ ID: "vol2", ExternalID: "ext-vol2" }) })),
  ]);
  const byVolume = (ext: string) =>
    client.calls.filter((c) => (c.req as { volumeId: string }).volumeId === ext);
  const overlaps = (a: RecordedCall, b: RecordedCall) => a.start < b.end && b.start < a.end;
  const v1 = byVolume("ext-vol1");
  assert.equal(v1.length, 3);
  for (let i = 0; i < v1.length; i++) {
    for (let j = i + 1; j < v1.length; j++) assert.ok(!overlaps(v1[i]!, v1[j]!), "vol1 calls overlapped");
  }
  const v2 = byVolume("ext-vol2");
  assert.ok(
    v2.some((c) => v1.some((d) => overlaps(c, d))),
    "vol2 should not wait for vol1",
  );
});

test("transient errors are retried; INVALID_ARGUMENT and UNIMPLEMENTED are not", async () => {
  const { client, vm, req } = setup();
  client.failNext("NodeStageVolume", "ERR_CSI_UNAVAILABLE", "ERR_CSI_DEADLINE_EXCEEDED");
  client.failNext("NodePublishVolume", "ERR_CSI_ABORTED", "ERR_CSI_RESOURCE_EXHAUSTED");
  await vm.mountVolume(req("a1"));
  assert.equal(client.callsOf("NodeStageVolume").length, 3);
  assert.equal(client.callsOf("NodePublishVolume").length, 3);

  for (const code of ["ERR_CSI_INVALID_ARGUMENT", "ERR_CSI_UNIMPLEMENTED"] as const) {
    const c = setup();
    c.client.failNext("NodePublishVolume", code);
    await assert.rejects(c.vm.mountVolume(c.req("a1")), (err) => isBerthError(err) && err.code === code);
    assert.equal(c.client.callsOf("NodePublishVolume").length, 1, `${code} must not be retried`);
    // The failed publish is treated as maybe-applied: released again, staging included.
    assert.deepEqual(c.client.methods().slice(-2), ["NodeUnpublishVolume", "NodeUnstageVolume"]);
    assert.deepEqual(c.vm.stagingUsers("fake", "default", "vol1", USAGE), []);
  }
});

test("NOT_FOUND on unpublish/unstage means already released", async () => {
  const { client, vm, req, unmount } = setup();
  await vm.mountVolume(req("a1"));
  client.failNext("NodeUnpublishVolume", "ERR_CSI_NOT_FOUND");
  client.failNext("NodeUnstageVolume", "ERR_CSI_NOT_FOUND");
  await vm.unmountVolume(unmount("a1"));
  assert.equal(client.callsOf("NodeUnstageVolume").length, 1);
});

test("a node plugin still starting (ERR_CSI_PLUGIN_UNAVAILABLE) is waited for", async () => {
  const { client, req } = setup();
  let attempts = 0;
  const vm = new VolumeManager({
    plugins: {
      nodePlugin: async () => {
        if (++attempts < 3) throw new BerthError("ERR_CSI_PLUGIN_UNAVAILABLE", "not yet");
        return { client, capabilities: client.nodeCaps };
      },
    },
    log: nullLogger,
    retry: RETRY,
    isMountPoint: fakeMountCheck(client, req("a1").plugin),
  });
  await vm.mountVolume(req("a1"));
  assert.equal(attempts, 3);
  assert.deepEqual(client.methods(), ["NodeStageVolume", "NodePublishVolume"]);
});
