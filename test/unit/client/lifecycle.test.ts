/**
 * Task lifecycle ordering in the alloc runner (fake tasks, the real runner and csi_hook with a fake
 * plugin): prestart before main, sidecars, poststart, poststop after everything — also on a stop —
 * and the volume released only after poststop; the restart-on-success rule per lifecycle hook.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { AllocRunner } from "../../../src/client/allocrunner/alloc_runner.js";
import { RestartTracker } from "../../../src/client/allocrunner/taskrunner/restart_tracker.js";
import { VolumeManager } from "../../../src/client/csimanager/volume_manager.js";
import { PluginRegistry } from "../../../src/client/dynamicplugins/registry.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { VolumeRequest, Task } from "../../../src/structs/job.js";
import type { TaskLifecycle } from "../../../src/structs/job_stanzas.js";
import { allocWith, task, volumeRequest } from "../../builders/csi_alloc.js";
import { plugin } from "../../builders/client_records.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";
import { toHostView } from "../../fakes/mount_check.js";
import { FakeRpc } from "../../fakes/server_rpc.js";
import { FakeTask } from "../../fakes/task.js";
import { tempDir } from "../../helpers/temp_dir.js";

function lc(Hook: TaskLifecycle["Hook"], Sidecar = false): TaskLifecycle {
  return { Hook, Sidecar };
}

function t(name: string, lifecycle?: TaskLifecycle, leader = false): Task {
  return {
    ...task(name),
    ...(lifecycle ? { Lifecycle: lifecycle } : {}),
    ...(leader ? { Leader: true } : {}),
  };
}

function harness(tasks: Task[], volumes: Record<string, VolumeRequest> = {}) {
  const alloc = allocWith(volumes);
  alloc.Job.TaskGroups[0]!.Tasks = tasks;
  const stateDb = StateDB.open(":memory:");
  const client = new FakeCsiClient();
  const registry = new PluginRegistry(stateDb, nullLogger);
  const hostDir = tempDir("berth-plugin-");
  registry.register(plugin({ hostDir }));
  const mounted = new Set<string>();
  client.onMountChange = (pluginPath, on) => {
    const view = registry.get("csi-node", "fake") ?? plugin({ hostDir });
    if (on) mounted.add(toHostView(view, pluginPath));
    else mounted.delete(toHostView(view, pluginPath));
  };
  const fakes = new Map<string, FakeTask>();
  /** Task names in the order their run() was called. */
  const started: string[] = [];
  const rpc = new FakeRpc(client.calls);
  const runner = new AllocRunner({
    alloc,
    dataDir: tempDir("berth-lc-"),
    node: { id: "node-1", name: "n1" },
    rpc,
    registry,
    volumeManager: new VolumeManager({
      plugins: { nodePlugin: async () => ({ client, capabilities: client.nodeCaps }) },
      log: nullLogger,
      retry: { baseMs: 1, maxMs: 5, deadlineMs: 200, jitter: 0 },
      isMountPoint: async (p) => mounted.has(p),
    }),
    stateDb,
    newTaskRunner: ({ task: tk, hookResources, onStateChange }) => {
      const f = new FakeTask(hookResources, onStateChange);
      const run = f.run.bind(f);
      f.run = () => {
        started.push(tk.Name);
        return run();
      };
      fakes.set(tk.Name, f);
      return f;
    },
    log: nullLogger,
    onUpdate: () => undefined,
    csiBackoff: { baseMs: 1, maxMs: 5, jitter: 0 },
  });
  // Bounded, so that a task that is never started or stopped fails the test instead of hanging it.
  const until = async (cond: () => boolean) => {
    const deadline = Date.now() + 10_000;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error("condition not reached within 10 s");
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  const state = (name: string) => fakes.get(name)?.state();
  const events = (name: string) => state(name)?.Events.map((e) => e.Type) ?? [];
  return { runner, fakes, started, until, state, events, client, rpc, alloc };
}

test("main tasks start only after prestart tasks completed; poststart after main runs", async () => {
  const h = harness([t("main"), t("post", lc("poststart")), t("init", lc("prestart"))]);
  const done = h.runner.run();
  await h.until(() => h.started.includes("init"));
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(h.started, ["init"], "main and poststart wait for the prestart task");
  h.fakes.get("init")!.finish();
  await h.until(() => h.started.includes("post"));
  assert.deepEqual(h.started, ["init", "main", "post"]);
  h.fakes.get("post")!.finish();
  h.fakes.get("main")!.finish();
  await done;
  assert.equal(h.runner.clientStatus, "complete");
});

test("a failed prestart task fails the alloc: main never runs, poststop still does", async () => {
  const h = harness([t("main"), t("init", lc("prestart")), t("cleanup", lc("poststop"))]);
  const done = h.runner.run();
  await h.until(() => h.started.includes("init"));
  h.fakes.get("init")!.finish(true);
  await h.until(() => h.started.includes("cleanup"));
  assert.match(h.fakes.get("main")!.killedWith ?? "", /sibling task init failed/);
  assert.deepEqual(h.events("main").slice(0, 1), ["Sibling Task Failed"]);
  assert.equal(h.state("main")!.Events[0]!.DisplayMessage, 'Task\'s sibling "init" failed');
  assert.equal(h.fakes.get("cleanup")!.killedWith, null, "poststop is not killed for the failure");
  h.fakes.get("cleanup")!.finish();
  await done;
  assert.equal(h.runner.clientStatus, "failed");
});

test("a prestart sidecar runs alongside main and is stopped once main ends", async () => {
  const h = harness([t("main"), t("proxy", lc("prestart", true)), t("cleanup", lc("poststop"))]);
  const done = h.runner.run();
  await h.until(() => h.started.includes("main"));
  assert.equal(h.state("proxy")!.State, "running");
  assert.equal(h.started.includes("cleanup"), false, "poststop waits for the sidecar too");
  h.fakes.get("main")!.finish();
  await h.until(() => h.started.includes("cleanup") || h.state("proxy")?.State === "dead");
  assert.equal(h.fakes.get("proxy")!.killedWith, "main tasks dead");
  assert.ok(h.events("proxy").includes("Main Tasks Dead"));
  assert.equal(h.state("proxy")!.State, "dead");
  h.fakes.get("cleanup")!.finish();
  await done;
  assert.equal(h.runner.clientStatus, "complete");
});

test("when the leader ends, the other tasks are stopped", async () => {
  const h = harness([t("leader", undefined, true), t("helper")]);
  const done = h.runner.run();
  await h.until(() => h.started.length === 2);
  h.fakes.get("leader")!.finish();
  await done;
  assert.equal(h.fakes.get("helper")!.killedWith, "leader task leader dead");
  assert.ok(h.events("helper").includes("Leader Task Dead"));
  assert.equal(h.runner.clientStatus, "complete");
});

test("a stop kills main tasks but runs poststop, which sees the volume; release comes after it", async () => {
  const h = harness([t("main"), t("cleanup", lc("poststop"))], { data: volumeRequest() });
  const done = h.runner.run();
  await h.until(() => h.started.includes("main"));
  assert.equal(h.started.includes("cleanup"), false);
  h.runner.update({ ...allocWith({ data: volumeRequest() }), DesiredStatus: "stop" });
  await h.until(() => h.started.includes("cleanup"));
  assert.ok(h.fakes.get("main")!.killedWith);
  assert.equal(h.fakes.get("cleanup")!.killedWith, null);
  assert.equal(h.fakes.get("cleanup")!.mountsSeen?.size, 1, "poststop gets the alloc's CSI mounts");
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(h.client.callsOf("NodeUnpublishVolume"), [], "no release while poststop runs");
  h.fakes.get("cleanup")!.finish();
  await done;
  await h.runner.released();
  assert.equal(h.client.callsOf("NodeUnpublishVolume").length, 1);
});

test("the node's self-fence kills every task, poststop ones unstarted, then releases the volume", async () => {
  const h = harness([t("main"), t("cleanup", lc("poststop"))], { data: volumeRequest() });
  const done = h.runner.run();
  await h.until(() => h.started.includes("main"));
  h.runner.fence({ ...allocWith({ data: volumeRequest() }), DesiredStatus: "stop" }, "no lease");
  await done;
  await h.runner.released();
  assert.equal(h.fakes.get("main")!.killedWith, "no lease");
  assert.equal(h.fakes.get("cleanup")!.killedWith, "no lease");
  assert.equal(h.started.includes("cleanup"), false, "poststop never started: it could write after the hold");
  assert.equal(h.client.callsOf("NodeUnpublishVolume").length, 1, "the volume is released");
});

test("a stop while prerun still waits on a claim: the others are killed unstarted, poststop runs", async () => {
  const volumes = { data: volumeRequest() };
  const h = harness([t("main"), t("init", lc("prestart")), t("cleanup", lc("poststop"))], volumes);
  h.rpc.claimFailures = Array.from({ length: 100_000 }, () => "ERR_CSI_IN_USE" as const);
  const done = h.runner.run();
  await h.until(() => h.rpc.claims.length >= 2);
  h.runner.update({ ...h.alloc, DesiredStatus: "stop" });
  await h.until(() => h.started.includes("cleanup"));
  assert.match(h.fakes.get("init")!.killedWith ?? "", /desired status is stop/);
  assert.match(h.fakes.get("main")!.killedWith ?? "", /desired status is stop/);
  assert.equal(h.fakes.get("cleanup")!.killedWith, null, "poststop is not killed by the stop");
  assert.equal(h.fakes.get("cleanup")!.mountsSeen?.size, 0, "no volume was mounted");
  h.fakes.get("cleanup")!.finish();
  await done;
  await h.runner.released();
  assert.equal(h.runner.clientStatus, "complete");
});

test("an alloc stopped before it started still runs its poststop tasks (Nomad's coordinator)", async () => {
  const h = harness([t("main"), t("cleanup", lc("poststop"))]);
  h.runner.update({ ...h.alloc, DesiredStatus: "stop" });
  const done = h.runner.run();
  await h.until(() => h.started.includes("cleanup"));
  assert.match(h.fakes.get("main")!.killedWith ?? "", /stop/);
  h.fakes.get("cleanup")!.finish();
  await done;
  assert.equal(h.runner.clientStatus, "complete");
});

test("restart on success: sidecars yes, ephemeral prestart/poststart and poststop no", () => {
  assert.equal(RestartTracker.restartsOnSuccess("service", null), true);
  assert.equal(RestartTracker.restartsOnSuccess("batch", null), false);
  assert.equal(RestartTracker.restartsOnSuccess("service", lc("prestart")), false);
  assert.equal(RestartTracker.restartsOnSuccess("batch", lc("prestart", true)), true);
  assert.equal(RestartTracker.restartsOnSuccess("service", lc("poststart")), false);
  assert.equal(RestartTracker.restartsOnSuccess("service", lc("poststart", true)), true);
  assert.equal(RestartTracker.restartsOnSuccess("service", lc("poststop")), false);
  const tr = new RestartTracker(
    { Attempts: 2, Interval: 1e12, Delay: 1e6, Mode: "fail" },
    "service",
    () => 0,
    lc("prestart"),
  );
  assert.deepEqual(tr.next(true), {
    restart: false,
    failed: false,
    reason: "Restart unnecessary as task terminated successfully",
  });
});
