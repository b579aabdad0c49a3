import assert from "node:assert/strict";
import { test } from "node:test";
import { AllocRunner } from "../../../src/client/allocrunner/alloc_runner.js";
import { VolumeManager } from "../../../src/client/csimanager/volume_manager.js";
import { PluginRegistry } from "../../../src/client/dynamicplugins/registry.js";
import { nodeVolumeAccess } from "../../../src/client/rpc/client_csi_node.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import type { ErrorCode } from "../../../src/structs/errors.js";
import type { AllocClientUpdate } from "../../../src/structs/rpc.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";
import { allocWith, volumeRequest } from "../../builders/csi_alloc.js";
import { FakeRpc } from "../../fakes/server_rpc.js";
import { FakeTask } from "../../fakes/task.js";
import { plugin } from "../../builders/client_records.js";
import { toHostView } from "../../fakes/mount_check.js";
import { tempDir } from "../../helpers/temp_dir.js";

const BACKOFF = { baseMs: 1, maxMs: 5, jitter: 0 };

function harness(
  alloc: Allocation,
  opts: { stateDb?: StateDB; client?: FakeCsiClient; registerPlugin?: boolean } = {},
) {
  const dataDir = tempDir("berth-ar-");
  const stateDb = opts.stateDb ?? StateDB.open(":memory:");
  const client = opts.client ?? new FakeCsiClient();
  const registry = new PluginRegistry(stateDb, nullLogger);
  const hostDir = tempDir("berth-plugin-");
  if (opts.registerPlugin !== false) registry.register(plugin({ hostDir }));
  const mounted = new Set<string>();
  /** Every path the volume manager's mount check looked at, in order. */
  const checked: string[] = [];
  // The fake plugin's mounts, in the host's view (under the dir of the plugin registered now):
  // what the volume manager's mount check sees.
  client.onMountChange = (pluginPath, on) => {
    const view = registry.get("csi-node", "fake") ?? plugin({ hostDir });
    if (on) mounted.add(toHostView(view, pluginPath));
    else mounted.delete(toHostView(view, pluginPath));
  };
  const volumeManager = new VolumeManager({
    plugins: { nodePlugin: async () => ({ client, capabilities: client.nodeCaps }) },
    log: nullLogger,
    retry: { baseMs: 1, maxMs: 5, deadlineMs: 200, jitter: 0 },
    isMountPoint: async (p) => {
      checked.push(p);
      return mounted.has(p);
    },
  });
  volumeManager.restore(stateDb.listVolumeStubsInUse());
  const rpc = new FakeRpc(client.calls);
  const tasks: FakeTask[] = [];
  const updates: AllocClientUpdate[] = [];
  const runner = new AllocRunner({
    alloc,
    dataDir,
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
    onUpdate: (u) => updates.push(u),
    claimRetryDeadlineMs: 5_000,
    pluginWaitTimeoutMs: 200,
    csiBackoff: BACKOFF,
  });
  const untilTaskStarted = async () => {
    while (tasks.length === 0 || tasks[0]!.state().State !== "running")
      await new Promise((r) => setTimeout(r, 2));
    return tasks[0]!;
  };
  return {
    dataDir,
    stateDb,
    client,
    registry,
    volumeManager,
    rpc,
    tasks,
    updates,
    runner,
    mounted,
    checked,
    hostDir,
    untilTaskStarted,
  };
}

/** Polls `cond` (every 5 ms, up to 10 s): waits for what the code under test does asynchronously. */
async function until(what: string, cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Waits until the mount check has looked at every one of `paths` after `from` checks. */
function checkedAll(h: { checked: string[] }, from: number, paths: string[]): Promise<void> {
  return until("the mount check", () => paths.every((p) => h.checked.slice(from).includes(p)));
}

test("claim is retried on ERR_CSI_MAX_CLAIMS, then the volume is staged, published and handed to tasks", async () => {
  const h = harness(allocWith({ data: volumeRequest({ PerAlloc: true }) }, { Name: "j.g[2]" }));
  h.rpc.claimFailures = ["ERR_CSI_MAX_CLAIMS", "ERR_CSI_IN_USE", "ERR_RPC_UNAVAILABLE"];
  const done = h.runner.run();
  const t = await h.untilTaskStarted();

  assert.equal(h.rpc.claims.length, 4);
  assert.deepEqual(h.rpc.claims[3], {
    VolumeID: "vol1[2]",
    Namespace: "default",
    AllocationID: "alloc-1",
    NodeID: "node-1",
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
  });
  const mount = t.mountsSeen?.get("data");
  assert.ok(mount);
  assert.equal(mount.volumeId, "vol1[2]");
  assert.equal(mount.source, `${h.hostDir}/per-alloc/alloc-1/vol1[2]/rw-file-system-single-node-writer`);
  assert.equal(h.stateDb.getVolumeStubs("alloc-1").data?.targetPath, mount.source);
  const stage = h.client.callsOf("NodeStageVolume")[0]!.req as { publishContext: Record<string, string> };
  assert.deepEqual(stage.publishContext, { from: "controller" });
  assert.equal(h.runner.clientStatus, "running");

  t.finish();
  await done;
  await h.runner.released();
  assert.deepEqual([...new Set(h.updates.map((u) => u.ClientStatus))], ["pending", "running", "complete"]);
  assert.deepEqual(
    h.client.methods().filter((m) => !m.startsWith("rpc:CSIVolume.Claim")),
    [
      "NodeStageVolume",
      "NodePublishVolume",
      "NodeUnpublishVolume",
      "NodeUnstageVolume",
      "rpc:CSIVolume.Unpublish",
    ],
  );
  const unpublish = h.client.callsOf("rpc:CSIVolume.Unpublish")[0]!.req as {
    State: string;
    VolumeID: string;
  };
  assert.equal(unpublish.State, "node-detached");
  assert.equal(unpublish.VolumeID, "vol1[2]");
  assert.deepEqual(h.stateDb.getVolumeStubs("alloc-1"), {});
  assert.deepEqual(h.stateDb.getPendingReleases("alloc-1"), {});
});

test("a mid-way failure unwinds exactly what was claimed and mounted, and fails the alloc", async () => {
  const h = harness(
    allocWith({
      a: volumeRequest({ Source: "va" }),
      b: volumeRequest({ Source: "vb" }),
      c: volumeRequest({ Source: "vc" }),
    }),
  );
  // "vb" is claimed, then its publish is refused for good: "vc" is never claimed.
  const realPublish = h.client.nodePublishVolume.bind(h.client);
  h.client.nodePublishVolume = async (req, o) => {
    if ((req as { volumeId: string }).volumeId === "ext-vb")
      h.client.failNext("NodePublishVolume", "ERR_CSI_INVALID_ARGUMENT");
    return realPublish(req, o);
  };
  await h.runner.run();
  await h.runner.released();

  assert.equal(h.runner.clientStatus, "failed");
  const last = h.updates.at(-1)!;
  assert.match(last.ClientDescription, /prerun hook "csi_hook" failed: volume "b" \(vb\)/);
  assert.equal(h.tasks.length, 0, "no task starts");
  assert.deepEqual(
    h.rpc.claims.map((c) => c.VolumeID),
    ["va", "vb"],
  );
  const unpublished = h.client
    .callsOf("rpc:CSIVolume.Unpublish")
    .map((c) => (c.req as { VolumeID: string }).VolumeID);
  assert.deepEqual(unpublished.sort(), ["va", "vb"]);
  // "va" was mounted: it is unpublished (and unstaged) on the node before the server hears of it.
  const order = h.client.methods();
  const vaNodeUnpublish = h.client.calls.findIndex(
    (c) => c.method === "NodeUnpublishVolume" && (c.req as { volumeId: string }).volumeId === "ext-va",
  );
  const vaServerUnpublish = h.client.calls.findIndex(
    (c) => c.method === "rpc:CSIVolume.Unpublish" && (c.req as { VolumeID: string }).VolumeID === "va",
  );
  assert.ok(vaNodeUnpublish >= 0 && vaNodeUnpublish < vaServerUnpublish, order.join(","));
  assert.deepEqual(h.stateDb.getVolumeStubs("alloc-1"), {});
  assert.deepEqual(h.stateDb.getPendingReleases("alloc-1"), {});
});

test("a server unpublish failing for good is an event and a report: the server retries it", async () => {
  const h = harness(allocWith({ data: volumeRequest() }));
  const done = h.runner.run();
  const t = await h.untilTaskStarted();
  h.rpc.unpublishFailures = ["ERR_CSI_INTERNAL"];
  t.finish();
  await done;
  await h.runner.released();
  assert.deepEqual(
    h.rpc.progress.map((p) => [p.Step, p.NextAttempt, p.LastError]),
    [["server-unpublish", 0, "unpublish failed: ERR_CSI_INTERNAL"]],
  );
  const ev = t.state().Events.find((e) => e.Type === "Volume Release Retry");
  assert.match(
    ev?.DisplayMessage ?? "",
    /server-unpublish failed \(unpublish failed: ERR_CSI_INTERNAL\); the server retries it/,
  );
});

test("a transient NodeUnstage failure retried inside the call is an event and a report as it happens", async () => {
  const h = harness(allocWith({ data: volumeRequest() }));
  const done = h.runner.run();
  const t = await h.untilTaskStarted();
  h.client.failNext("NodeUnstageVolume", "ERR_CSI_UNAVAILABLE", "ERR_CSI_UNAVAILABLE");
  t.finish();
  await done;
  await h.runner.released();
  assert.equal(h.client.callsOf("NodeUnstageVolume").length, 3, "retried inside the one unmount call");
  assert.deepEqual(
    h.rpc.progress.map((p) => [p.Step, p.Attempts]),
    [
      ["node-unstage", 1],
      ["node-unstage", 2],
    ],
  );
  const retries = t.state().Events.filter((e) => e.Type === "Volume Release Retry");
  assert.equal(retries.length, 2);
  assert.match(retries[0]!.DisplayMessage, /node-unstage failed \(.*NodeUnstageVolume.*\); retry 1 in/);
});

test("an operator's detach during a retried release: one unmount in all, none after it", async () => {
  const h = harness(allocWith({ data: volumeRequest() }));
  const done = h.runner.run();
  const t = await h.untilTaskStarted();
  const stub = h.stateDb.getVolumeStubs("alloc-1").data!;
  h.client.failNext("NodeUnpublishVolume", ...Array<"ERR_CSI_INTERNAL">(1000).fill("ERR_CSI_INTERNAL"));
  t.finish();
  await done;
  while (h.client.callsOf("NodeUnpublishVolume").length < 3) await new Promise((r) => setTimeout(r, 1));

  // The busy target is gone; the operator detaches while the release is between retries.
  h.client.stopFailing("NodeUnpublishVolume");
  const mark = h.client.calls.length;
  const access = nodeVolumeAccess({
    stateDb: h.stateDb,
    registry: h.registry,
    volumeManager: h.volumeManager,
  });
  await access.detachVolume(
    "data",
    {
      plugin: h.registry.get("csi-node", "fake")!,
      allocId: "alloc-1",
      volumeId: stub.volumeId,
      namespace: stub.namespace,
      externalId: stub.externalId,
      usage: stub.usage,
    },
    new AbortController().signal,
  );
  await h.runner.released();

  const after = h.client.methods().slice(mark);
  assert.deepEqual(
    after.filter((m) => m.startsWith("Node")),
    ["NodeUnpublishVolume", "NodeUnstageVolume"],
    "whichever of the two gets the volume's lock first unmounts; the other makes no call",
  );
  assert.equal(after.at(-1), "rpc:CSIVolume.Unpublish");
  assert.deepEqual(h.stateDb.getVolumeStubs("alloc-1"), {});
  assert.deepEqual(h.stateDb.getPendingReleases("alloc-1"), {});
  // Each failed NodeUnpublish was reported to the server and is a task event (issue 8).
  assert.ok(h.rpc.progress.length >= 2, "one report per failed attempt");
  for (const [i, p] of h.rpc.progress.entries()) {
    assert.deepEqual([p.Step, p.Attempts, p.AllocationID], ["node-unpublish", i + 1, "alloc-1"]);
  }
  const retries = t.state().Events.filter((e) => e.Type === "Volume Release Retry");
  assert.equal(retries.length, h.rpc.progress.length);
  assert.match(retries[0]!.DisplayMessage, /node-unpublish failed \(.*NodeUnpublishVolume.*\); retry 1 in/);
});

test("a node plugin that never registers fails the alloc with its name, before any claim", async () => {
  const h = harness(allocWith({ data: volumeRequest() }), { registerPlugin: false });
  await h.runner.run();
  await h.runner.released();
  assert.equal(h.runner.clientStatus, "failed");
  assert.match(h.updates.at(-1)!.ClientDescription, /CSI plugin "fake" \(csi-node\) did not register/);
  assert.deepEqual(h.rpc.lookups, ["vol1"], "the volume's plugin is looked up, then waited for");
  assert.equal(h.rpc.claims.length, 0, "no claim while the plugin is missing: nothing can leak");
  assert.equal(h.client.callsOf("rpc:CSIVolume.Unpublish").length, 0);
  assert.equal(h.client.callsOf("NodePublishVolume").length, 0);
});

test("a node plugin registering within the wait is waited for, then the volume is claimed and mounted", async () => {
  const h = harness(allocWith({ data: volumeRequest() }), { registerPlugin: false });
  const done = h.runner.run();
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(h.rpc.claims.length, 0, "no claim before the plugin is there");
  h.registry.register(plugin({ hostDir: h.hostDir }));
  const t = await h.untilTaskStarted();
  assert.equal(h.rpc.claims.length, 1);
  t.finish();
  await done;
  await h.runner.released();
  assert.deepEqual(h.stateDb.getPendingReleases("alloc-1"), {});
});

test("shutdown cancels waiting and releases without unmounting; a restart resumes the release", async () => {
  const stateDb = StateDB.open(":memory:");
  const alloc = allocWith({ data: volumeRequest() });
  const h = harness(alloc, { stateDb });
  const done = h.runner.run();
  const t = await h.untilTaskStarted();

  // Agent exit while the task runs: nothing is killed or unmounted.
  await h.runner.shutdown();
  await done;
  assert.equal(t.killedWith, null);
  assert.equal(h.client.callsOf("NodeUnpublishVolume").length, 0);
  assert.ok(stateDb.getVolumeStubs(alloc.ID).data);

  // A restarted agent finds the mount still in place: no new claim, no remount.
  const h2 = harness(alloc, { stateDb });
  h2.mounted.add(stateDb.getVolumeStubs(alloc.ID).data!.targetPath);
  const run2 = h2.runner.run();
  const t2 = await h2.untilTaskStarted();
  assert.equal(h2.rpc.claims.length, 0);
  assert.equal(h2.client.callsOf("NodePublishVolume").length, 0);
  assert.equal(t2.mountsSeen?.get("data")?.source, stateDb.getVolumeStubs(alloc.ID).data!.targetPath);

  // Stop the alloc; the server is away, so the release gets stuck after unmounting…
  h2.rpc.unpublishAlways = "ERR_RPC_UNAVAILABLE";
  h2.runner.update({ ...alloc, DesiredStatus: "stop" });
  await run2;
  assert.ok(t2.killedWith);
  while (h2.client.callsOf("rpc:CSIVolume.Unpublish").length < 2) await new Promise((r) => setTimeout(r, 2));
  assert.equal(h2.client.callsOf("NodeUnpublishVolume").length, 1);
  assert.equal(h2.rpc.progress[0]?.Step, "server-unpublish", "the retried server call is reported");
  // …and the agent exits: shutdown cancels the background release, which stays pending.
  await h2.runner.shutdown();
  await h2.runner.released();
  assert.equal(stateDb.getPendingReleases(alloc.ID).data?.unmounted, true);

  // The next agent resumes from the checkpoint: no second unmount, only the server step.
  const h3 = harness(alloc, { stateDb });
  await h3.runner.run();
  await h3.runner.released();
  assert.deepEqual(h3.client.methods(), ["rpc:CSIVolume.Unpublish"]);
  assert.equal(h3.tasks.length, 0);
  assert.deepEqual(stateDb.getPendingReleases(alloc.ID), {});
  assert.deepEqual(stateDb.getVolumeStubs(alloc.ID), {});
});

test("restore: an alloc killed between its release's unmount and its end is no user of the staging", async () => {
  // The agent died right after alloc-1's release unstaged the volume, before the release ended:
  // its stub is still stored, beside the pending record that says it is unmounted.
  const stateDb = StateDB.open(":memory:");
  const first = harness(allocWith({ data: volumeRequest() }), { stateDb });
  void first.runner.run();
  await first.untilTaskStarted();
  await first.runner.shutdown();
  const stub = stateDb.getVolumeStubs("alloc-1").data!;
  stateDb.putPendingRelease("alloc-1", "data", { stub, unmounted: true });

  // The next agent runs another alloc on the same volume, which stages it again (nothing is
  // mounted any more) and, as its last user, must unstage it when it is done.
  const h = harness(allocWith({ data: volumeRequest() }, { ID: "alloc-2" }), { stateDb });
  const done = h.runner.run();
  const t = await h.untilTaskStarted();
  t.finish();
  await done;
  await h.runner.released();
  assert.deepEqual(
    h.client.methods().filter((m) => m.startsWith("Node")),
    ["NodeStageVolume", "NodePublishVolume", "NodeUnpublishVolume", "NodeUnstageVolume"],
    "the staging is unmounted with its last real user",
  );
  assert.deepEqual(
    h.volumeManager.stagingUsers(stub.pluginId, stub.namespace, stub.volumeId, stub.usage),
    [],
  );
});

test("a stop during a claim wait abandons it; the alloc completes without starting tasks", async () => {
  const h = harness(allocWith({ data: volumeRequest() }));
  h.rpc.claimFailures = Array<"ERR_CSI_MAX_CLAIMS">(10_000).fill("ERR_CSI_MAX_CLAIMS");
  const done = h.runner.run();
  while (h.rpc.claims.length < 3) await new Promise((r) => setTimeout(r, 2));
  h.runner.update({ ...allocWith({ data: volumeRequest() }), DesiredStatus: "stop" });
  await done;
  assert.equal(h.runner.clientStatus, "complete");
  assert.equal(h.tasks.length, 0);
});

/** Runs an alloc with one volume to "running", then shuts its runner down (the agent exits). */
async function runThenShutdown(alloc: Allocation) {
  const h = harness(alloc);
  void h.runner.run();
  await h.untilTaskStarted();
  await h.runner.shutdown();
  const stub = h.stateDb.getVolumeStubs(alloc.ID).data;
  assert.ok(stub, "the stub is persisted");
  return { stateDb: h.stateDb, client: h.client, stub };
}

test("restore: a running alloc whose mount is still there gets it back with no claim, stage or publish", async () => {
  const alloc = allocWith({ data: volumeRequest() });
  const first = await runThenShutdown(alloc);
  const h = harness(alloc, { stateDb: first.stateDb });
  h.mounted.add(first.stub.targetPath);
  void h.runner.run();
  const task = await h.untilTaskStarted();
  assert.deepEqual(h.client.methods(), [], "no CSI call");
  assert.equal(h.rpc.claims.length, 0, "no claim");
  assert.equal(task.mountsSeen?.get("data")?.source, first.stub.targetPath);
  assert.equal(h.runner.clientStatus, "running");
  await h.runner.shutdown();
});

test("restore: an alloc stopped while the agent was away has its tasks killed, then its volume released", async () => {
  const alloc = allocWith({ data: volumeRequest() });
  const first = await runThenShutdown(alloc);
  const h = harness({ ...alloc, DesiredStatus: "stop" }, { stateDb: first.stateDb });
  h.mounted.add(first.stub.targetPath);
  await h.runner.run();
  await h.runner.released();
  assert.equal(h.tasks.length, 1, "the restored task was re-attached");
  assert.match(h.tasks[0]!.killedWith ?? "", /stopped while the agent was away/);
  assert.deepEqual(
    h.client.methods(),
    ["NodeUnpublishVolume", "NodeUnstageVolume", "rpc:CSIVolume.Unpublish"],
    "released in order, never claimed",
  );
  assert.equal(h.runner.clientStatus, "complete");
  assert.deepEqual(h.stateDb.getVolumeStubs(alloc.ID), {});
});

test("every claim retry is a task event, visible while the alloc waits and kept once its task runs", async () => {
  const h = harness(allocWith({ data: volumeRequest() }));
  h.rpc.claimFailures = ["ERR_CSI_IN_USE", "ERR_CSI_MAX_CLAIMS", "ERR_RPC_UNAVAILABLE"];
  const done = h.runner.run();
  const t = await h.untilTaskStarted();
  const retriesOf = (events: { Type: string; DisplayMessage: string }[]) =>
    events.filter((e) => e.Type === "Volume Claim Retry").map((e) => e.DisplayMessage);
  const pending = h.updates.filter((u) => u.ClientStatus === "pending").at(-1);
  assert.ok(pending, "a pending update was sent");
  const whileWaiting = retriesOf(pending.TaskStates.web!.Events);
  assert.equal(whileWaiting.length, 3, "three retries, each reported while still pending");
  assert.match(
    whileWaiting[0]!,
    /claim of volume "vol1" failed \(claim refused: ERR_CSI_IN_USE\); retry 1 in/,
  );
  assert.match(whileWaiting[2]!, /ERR_RPC_UNAVAILABLE\); retry 3 in/);
  assert.deepEqual(retriesOf(t.state().Events), whileWaiting, "the task runner keeps them");
  t.finish();
  await done;
  await h.runner.released();
});

test("a node plugin registering again gets the alloc's lost mounts staged and published again, with an event", async () => {
  const h = harness(allocWith({ data: volumeRequest() }));
  const done = h.runner.run();
  const t = await h.untilTaskStarted();
  const stub = h.stateDb.getVolumeStubs("alloc-1").data!;
  h.mounted.add(stub.stagingPath).add(stub.targetPath);
  const callsBefore = h.client.methods().length;
  const settle = () => new Promise((r) => setTimeout(r, 50));

  const mark = h.checked.length;
  h.registry.register(plugin({ hostDir: h.hostDir, registeredAt: 2 }));
  await checkedAll(h, mark, [stub.targetPath]);
  assert.deepEqual(h.client.methods().slice(callsBefore), [], "mounts in place: no CSI call");

  h.mounted.clear();
  h.registry.register(plugin({ hostDir: h.hostDir, registeredAt: 3 }));
  await until("the remount event", () => t.state().Events.some((e) => e.Type === "Volume Remounted"));
  assert.deepEqual(h.client.methods().slice(callsBefore), ["NodeStageVolume", "NodePublishVolume"]);
  assert.equal(h.rpc.claims.length, 1, "the claim made at start is reused, not made again");
  const remounted = t.state().Events.filter((e) => e.Type === "Volume Remounted");
  assert.equal(remounted.length, 1);
  assert.match(
    remounted[0]!.DisplayMessage,
    /volume "data" \(vol1\) was no longer mounted after plugin "fake"/,
  );

  t.finish();
  await done;
  await h.runner.released();
  h.mounted.clear();
  h.registry.register(plugin({ hostDir: h.hostDir, registeredAt: 4 }));
  await settle();
  assert.deepEqual(
    h.client.methods().slice(callsBefore + 2),
    ["NodeUnpublishVolume", "NodeUnstageVolume", "rpc:CSIVolume.Unpublish"],
    "after postrun a registration remounts nothing",
  );
});

test("a remount a running task could not take gets one outcome: its Refresh Failed, no contradicting Remounted", async () => {
  const h = harness(allocWith({ data: volumeRequest() }));
  const done = h.runner.run();
  const t = await h.untilTaskStarted();
  const stub = h.stateDb.getVolumeStubs("alloc-1").data!;
  t.refreshFails = "the new mount did not reach the task";
  h.mounted.delete(stub.targetPath);
  h.registry.register(plugin({ hostDir: h.hostDir, registeredAt: 2 }));
  await until("the refresh's outcome", () =>
    t.state().Events.some((e) => e.Type === "Volume Refresh Failed"),
  );
  assert.equal(t.refreshes.length, 1, "the remount was tried in the task");
  const types = t.state().Events.map((e) => e.Type);
  assert.equal(types.filter((x) => x === "Volume Refresh Failed").length, 1);
  assert.equal(types.filter((x) => x === "Volume Remounted").length, 0, "nothing claims it worked");
  t.finish();
  await done;
  await h.runner.released();
});

test("each remounted volume is refreshed in the running tasks, once, with its target path, before the event", async () => {
  const h = harness(
    allocWith({ data: volumeRequest(), logs: volumeRequest({ Name: "logs", Source: "vol2" }) }),
  );
  const done = h.runner.run();
  const t = await h.untilTaskStarted();
  const stubs = h.stateDb.getVolumeStubs("alloc-1");
  const data = stubs.data!;
  const logs = stubs.logs!;
  assert.notEqual(data.targetPath, logs.targetPath);
  assert.equal(
    t.mountsSeen?.get("data")?.source,
    data.targetPath,
    "the refreshed path is the one tasks mount",
  );
  const all = [data.stagingPath, data.targetPath, logs.stagingPath, logs.targetPath];
  for (const p of all) h.mounted.add(p);
  const remountEvents = () => t.state().Events.filter((e) => e.Type === "Volume Remounted").length;

  let mark = h.checked.length;
  h.registry.register(plugin({ hostDir: h.hostDir, registeredAt: 2 }));
  await checkedAll(h, mark, [data.targetPath, logs.targetPath]);
  assert.deepEqual(t.refreshes, [], "nothing lost: nothing to refresh");

  h.mounted.delete(data.targetPath);
  mark = h.checked.length;
  h.registry.register(plugin({ hostDir: h.hostDir, registeredAt: 3 }));
  await until("the first remount", () => remountEvents() === 1);
  await checkedAll(h, mark, [logs.targetPath]);
  assert.deepEqual(t.refreshes, [{ hostPath: data.targetPath, remountEventsBefore: 0 }]);
  for (const p of all) h.mounted.add(p);

  h.mounted.delete(data.targetPath);
  h.mounted.delete(logs.targetPath);
  h.registry.register(plugin({ hostDir: h.hostDir, registeredAt: 4 }));
  await until("both remounts", () => remountEvents() === 3);
  assert.deepEqual(t.refreshes.slice(1), [
    { hostPath: data.targetPath, remountEventsBefore: 1 },
    { hostPath: logs.targetPath, remountEventsBefore: 2 },
  ]);
  const remounted = t.state().Events.filter((e) => e.Type === "Volume Remounted");
  assert.equal(remounted.length, 3);
  assert.match(
    remounted[2]!.DisplayMessage,
    /volume "logs" \(vol2\) was no longer mounted after plugin "fake" registered again; mounted it again and bound the new mount into the running tasks that use it/,
  );

  t.finish();
  await done;
  await h.runner.released();
});

test("restore: plugin gone past the wait and its mounts gone with it — the alloc fails naming it, the claim is released", async () => {
  const alloc = allocWith({ data: volumeRequest() });
  const first = await runThenShutdown(alloc);
  first.stateDb.deleteDynamicPlugin("csi-node", "fake"); // its task did not come back
  const h = harness(alloc, { stateDb: first.stateDb, registerPlugin: false });
  await h.runner.run();
  await h.runner.released();
  assert.equal(h.runner.clientStatus, "failed");
  assert.match(h.updates.at(-1)!.ClientDescription, /CSI plugin "fake" \(csi-node\) did not register/);
  assert.deepEqual(h.rpc.lookups, [], "the restored stub names the plugin");
  assert.equal(h.rpc.claims.length, 0);
  assert.deepEqual(h.client.methods(), ["rpc:CSIVolume.Unpublish"], "nothing mounted: no node call needed");
  assert.deepEqual(h.stateDb.getVolumeStubs(alloc.ID), {});
  assert.deepEqual(h.stateDb.getPendingReleases(alloc.ID), {});
});

test("restore: plugin gone but its staging still mounted — the release waits for the plugin, then unmounts in order", async () => {
  const alloc = allocWith({ data: volumeRequest() });
  const first = await runThenShutdown(alloc);
  first.stateDb.deleteDynamicPlugin("csi-node", "fake");
  const h = harness(alloc, { stateDb: first.stateDb, registerPlugin: false });
  h.mounted.add(first.stub.stagingPath);
  await h.runner.run();
  assert.equal(h.runner.clientStatus, "failed");
  await new Promise((r) => setTimeout(r, 600));
  assert.deepEqual(h.client.methods(), [], "a mount only the plugin can undo: no release without it");
  const hostDir = first.stub.targetPath.split("/per-alloc/")[0]!;
  h.registry.register(plugin({ hostDir, registeredAt: 2 }));
  await h.runner.released();
  assert.deepEqual(h.client.methods(), [
    "NodeUnpublishVolume",
    "NodeUnstageVolume",
    "rpc:CSIVolume.Unpublish",
  ]);
  assert.deepEqual(h.stateDb.getPendingReleases(alloc.ID), {});
});

test("restore: a lost mount of a restored alloc is published again with a fresh claim of the same alloc", async () => {
  const alloc = allocWith({ data: volumeRequest() });
  const first = await runThenShutdown(alloc);
  const h = harness(alloc, { stateDb: first.stateDb });
  h.mounted.add(first.stub.targetPath).add(first.stub.stagingPath);
  void h.runner.run();
  const t = await h.untilTaskStarted();
  h.mounted.delete(first.stub.targetPath);
  // The plugin comes back with the directory the mounts were made under.
  const hostDir = first.stub.targetPath.split("/per-alloc/")[0]!;
  h.registry.register(plugin({ hostDir, registeredAt: 2 }));
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(h.client.methods(), ["rpc:CSIVolume.Claim", "NodePublishVolume"], "staging was kept");
  assert.equal(h.rpc.claims[0]!.AllocationID, alloc.ID);
  assert.equal(t.state().Events.filter((e) => e.Type === "Volume Remounted").length, 1);
  await h.runner.shutdown();
});

test("a node plugin that goes away while its claim is refused is waited for again: the alloc fails naming it", async () => {
  const h = harness(allocWith({ data: volumeRequest() }));
  h.rpc.claimFailures = Array<ErrorCode>(10_000).fill("ERR_CSI_VOLUME_UNSCHEDULABLE");
  const done = h.runner.run();
  while (h.rpc.claims.length < 1) await new Promise((r) => setTimeout(r, 1));
  // The plugin's task stops (as a restored plugin whose job was stopped while the agent was away).
  h.registry.deregister("csi-node", "fake", "plugin-alloc");
  await done;
  await h.runner.released();
  assert.equal(h.runner.clientStatus, "failed");
  assert.match(h.updates.at(-1)!.ClientDescription, /CSI plugin "fake" \(csi-node\) did not register/);
  assert.equal(h.client.callsOf("NodeStageVolume").length, 0);
});
