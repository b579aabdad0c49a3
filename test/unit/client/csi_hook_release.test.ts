/**
 * csi_hook and a node plugin that hung (issue 8 items 9 and 10), with a fake CSI client: a claim
 * that gives up after its mount step began unmounts through the plugin (NodeUnpublish and
 * NodeUnstage) before the server frees the claim, and a release waiting out its backoff is retried
 * as soon as its node plugin registers again.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { AllocRunner } from "../../../src/client/allocrunner/alloc_runner.js";
import type { CsiBackoff } from "../../../src/client/allocrunner/csi_hook.js";
import { VolumeManager } from "../../../src/client/csimanager/volume_manager.js";
import { PluginRegistry } from "../../../src/client/dynamicplugins/registry.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";
import { allocWith, volumeRequest } from "../../builders/csi_alloc.js";
import { FakeRpc } from "../../fakes/server_rpc.js";
import { FakeTask } from "../../fakes/task.js";
import { plugin } from "../../builders/client_records.js";
import { fakeMountCheck } from "../../fakes/mount_check.js";
import { tempDir } from "../../helpers/temp_dir.js";

const FAST: CsiBackoff = { baseMs: 1, maxMs: 5, jitter: 0 };

/** `isMountPoint` defaults to the fake plugin's own mounts (what its stages and publishes mounted). */
function harness(alloc: Allocation, backoff: CsiBackoff, isMountPoint?: (p: string) => boolean) {
  const stateDb = StateDB.open(":memory:");
  const client = new FakeCsiClient();
  const registry = new PluginRegistry(stateDb, nullLogger);
  const hostDir = tempDir("berth-plugin-");
  registry.register(plugin({ hostDir }));
  const volumeManager = new VolumeManager({
    plugins: { nodePlugin: async () => ({ client, capabilities: client.nodeCaps }) },
    log: nullLogger,
    retry: { baseMs: 1, maxMs: 5, deadlineMs: 200, jitter: 0 },
    isMountPoint: isMountPoint ? async (p) => isMountPoint(p) : fakeMountCheck(client, plugin({ hostDir })),
  });
  const rpc = new FakeRpc(client.calls);
  const tasks: FakeTask[] = [];
  const runner = new AllocRunner({
    alloc,
    dataDir: tempDir("berth-ar-"),
    node: { id: "node-1", name: "n1" },
    rpc,
    registry,
    volumeManager,
    stateDb,
    newTaskRunner: ({ hookResources, onStateChange, initialEvents }) => {
      const t = new FakeTask(hookResources, onStateChange, initialEvents);
      tasks.push(t);
      return t;
    },
    log: nullLogger,
    onUpdate: () => undefined,
    claimRetryDeadlineMs: 5_000,
    pluginWaitTimeoutMs: 200,
    csiBackoff: backoff,
  });
  const untilTaskStarted = async () => {
    while (tasks.length === 0 || tasks[0]!.state().State !== "running")
      await new Promise((r) => setTimeout(r, 2));
    return tasks[0]!;
  };
  return { stateDb, client, registry, rpc, runner, hostDir, tasks, untilTaskStarted };
}

/** The node calls and server unpublishes of the run, in order (claims and fingerprints aside). */
function releaseOrder(client: FakeCsiClient): string[] {
  return client
    .methods()
    .filter((m) => m.startsWith("Node") || m === "rpc:CSIVolume.Unpublish")
    .map((m) => m.replace(/Volume$/, ""));
}

test("a publish that fails and whose cleanup cannot reach the plugin: unpublished and unstaged before the claim is freed", async () => {
  const h = harness(allocWith({ data: volumeRequest() }), FAST);
  h.client.failNext("NodePublishVolume", "ERR_CSI_INVALID_ARGUMENT");
  // The volume manager's one-shot cleanup after the failed publish finds the plugin away.
  h.client.failNext("NodeUnpublishVolume", "ERR_CSI_UNAVAILABLE");
  await h.runner.run();
  await h.runner.released();

  assert.equal(h.runner.clientStatus, "failed");
  assert.equal(h.tasks.length, 0, "no task starts");
  assert.deepEqual(releaseOrder(h.client), [
    "NodeStage",
    "NodePublish",
    "NodeUnpublish",
    "NodeUnpublish",
    "NodeUnstage",
    "rpc:CSIVolume.Unpublish",
  ]);
  assert.deepEqual(h.stateDb.getPendingReleases("alloc-1"), {});
});

test("a NodeStage that keeps timing out (maybe staged): the claim gives up only after NodeUnstage", async () => {
  const h = harness(allocWith({ data: volumeRequest() }), FAST);
  h.client.failNext(
    "NodeStageVolume",
    ...Array<"ERR_CSI_DEADLINE_EXCEEDED">(10_000).fill("ERR_CSI_DEADLINE_EXCEEDED"),
  );
  await h.runner.run();
  await h.runner.released();

  assert.equal(h.runner.clientStatus, "failed");
  const order = releaseOrder(h.client).filter((m) => m !== "NodeStage");
  // The volume manager's one-shot NodeUnstage after the failed stage, then the claim's release.
  assert.deepEqual(order, ["NodeUnstage", "NodeUnpublish", "NodeUnstage", "rpc:CSIVolume.Unpublish"]);
  assert.deepEqual(h.stateDb.getPendingReleases("alloc-1"), {});
});

test(
  "a release waiting out its backoff is retried at once when its node plugin registers again",
  { timeout: 30_000 },
  async () => {
    // An hour between release attempts: only the plugin's registration can end the wait.
    const h = harness(allocWith({ data: volumeRequest() }), {
      baseMs: 3_600_000,
      maxMs: 3_600_000,
      jitter: 0,
    });
    const done = h.runner.run();
    const t = await h.untilTaskStarted();
    h.client.failNext("NodeUnpublishVolume", "ERR_CSI_INTERNAL");
    t.finish();
    await done;
    while (h.client.callsOf("NodeUnpublishVolume").length < 1) await new Promise((r) => setTimeout(r, 2));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(h.client.callsOf("rpc:CSIVolume.Unpublish").length, 0, "the release waits");

    // Another plugin registering does not wake it; this volume's plugin does.
    h.registry.register(plugin({ pluginId: "other", hostDir: h.hostDir }));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(h.client.callsOf("NodeUnpublishVolume").length, 1);
    h.registry.register(plugin({ hostDir: h.hostDir }));
    await h.runner.released();
    assert.deepEqual(releaseOrder(h.client).slice(-4), [
      "NodeUnpublish",
      "NodeUnpublish",
      "NodeUnstage",
      "rpc:CSIVolume.Unpublish",
    ]);
    assert.deepEqual(h.stateDb.getPendingReleases("alloc-1"), {});
  },
);

test("a staging left by a failed mount step is not released without the plugin: the claim waits for it", async () => {
  let staged = false;
  const h = harness(allocWith({ data: volumeRequest() }), FAST, (p) => staged && p.includes("/staging/"));
  const stage = h.client.nodeStageVolume.bind(h.client);
  h.client.nodeStageVolume = async (req, o) => {
    await stage(req, o);
    staged = true;
  };
  const unstage = h.client.nodeUnstageVolume.bind(h.client);
  h.client.nodeUnstageVolume = async (req, o) => {
    await unstage(req, o);
    staged = false;
  };
  h.client.failNext("NodePublishVolume", "ERR_CSI_INVALID_ARGUMENT");
  h.client.failNext(
    "NodeUnpublishVolume",
    ...Array<"ERR_CSI_UNAVAILABLE">(100_000).fill("ERR_CSI_UNAVAILABLE"),
  );
  const run = h.runner.run();
  while (h.client.callsOf("NodeUnpublishVolume").length < 3) await new Promise((r) => setTimeout(r, 2));

  // The plugin goes away past the plugin wait while its staging is still mounted.
  h.registry.deregister("csi-node", "fake", "plugin-alloc");
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(h.client.callsOf("rpc:CSIVolume.Unpublish").length, 0, "the claim is not freed");

  h.client.stopFailing("NodeUnpublishVolume");
  h.registry.register(plugin({ hostDir: h.hostDir }));
  await run;
  await h.runner.released();
  assert.equal(staged, false, "unstaged");
  assert.deepEqual(releaseOrder(h.client).slice(-3), [
    "NodeUnpublish",
    "NodeUnstage",
    "rpc:CSIVolume.Unpublish",
  ]);
  assert.deepEqual(h.stateDb.getPendingReleases("alloc-1"), {});
});
