import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { AllocRunner } from "../../../src/client/allocrunner/alloc_runner.js";
import { clientStatusOf, newTaskState } from "../../../src/client/allocrunner/alloc_status.js";
import { runHookPhase } from "../../../src/client/allocrunner/hooks.js";
import { VolumeManager } from "../../../src/client/csimanager/volume_manager.js";
import { PluginRegistry } from "../../../src/client/dynamicplugins/registry.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import { nullLogger } from "../../../src/internal/log.js";
import { BerthError } from "../../../src/structs/errors.js";
import type { Task } from "../../../src/structs/job.js";
import type { AllocClientUpdate } from "../../../src/structs/rpc.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";
import { allocWith, task } from "../../builders/csi_alloc.js";
import { FakeRpc } from "../../fakes/server_rpc.js";
import { FakeTask } from "../../fakes/task.js";
import { tempDir } from "../../helpers/temp_dir.js";

function runnerFor(tasks: Task[]) {
  const alloc = allocWith({});
  alloc.Job.TaskGroups[0]!.Tasks = tasks;
  const stateDb = StateDB.open(":memory:");
  const client = new FakeCsiClient();
  const fakes = new Map<string, FakeTask>();
  const updates: AllocClientUpdate[] = [];
  const dataDir = tempDir("berth-ar-");
  const runner = new AllocRunner({
    alloc,
    dataDir,
    node: { id: "node-1", name: "n1" },
    rpc: new FakeRpc(client.calls),
    registry: new PluginRegistry(stateDb, nullLogger),
    volumeManager: new VolumeManager({
      plugins: { nodePlugin: async () => ({ client, capabilities: client.nodeCaps }) },
      log: nullLogger,
    }),
    stateDb,
    newTaskRunner: ({ task: t, hookResources, onStateChange }) => {
      const f = new FakeTask(hookResources, onStateChange);
      fakes.set(t.Name, f);
      return f;
    },
    log: nullLogger,
    onUpdate: (u) => updates.push(u),
  });
  const started = async () => {
    while (fakes.size < tasks.length || [...fakes.values()].some((f) => f.state().State !== "running")) {
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  return { runner, fakes, updates, dataDir, stateDb, alloc, started };
}

test("status derivation follows Nomad: failed > running > pending > complete", () => {
  const dead = { ...newTaskState(), State: "dead" as const };
  assert.equal(clientStatusOf([dead, { ...dead, Failed: true }]).status, "failed");
  assert.equal(clientStatusOf([dead, { ...newTaskState(), State: "running" }]).status, "running");
  assert.equal(clientStatusOf([newTaskState()]).status, "pending");
  assert.equal(clientStatusOf([dead, dead]).status, "complete");
});

test("hook phases are wrapped with the hook's name and keep the code", async () => {
  await assert.rejects(
    runHookPhase({ name: "h" }, "prerun", nullLogger, async () => {
      throw new BerthError("ERR_CSI_IN_USE", "busy");
    }),
    (err) =>
      err instanceof BerthError &&
      err.code === "ERR_CSI_IN_USE" &&
      err.message === 'prerun hook "h" failed: busy',
  );
});

test("tasks run in parallel in a built alloc dir; statuses pending → running → complete", async () => {
  const h = runnerFor([task("a"), task("b")]);
  const done = h.runner.run();
  await h.started();
  assert.ok(fs.statSync(h.runner.allocDir.taskLocalDir("a")).isDirectory());
  h.fakes.get("a")!.finish();
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(h.runner.clientStatus, "running", "one task still runs");
  h.fakes.get("b")!.finish();
  await done;
  assert.deepEqual([...new Set(h.updates.map((u) => u.ClientStatus))], ["pending", "running", "complete"]);
  assert.equal(h.stateDb.getAlloc(h.alloc.ID)?.clientUpdate?.ClientStatus, "complete");
  assert.equal(h.updates.at(-1)!.TaskStates.a?.State, "dead");
});

test("a failed task kills its siblings and fails the alloc", async () => {
  const h = runnerFor([task("a"), task("b")]);
  const done = h.runner.run();
  await h.started();
  h.fakes.get("a")!.finish(true);
  await done;
  assert.match(h.fakes.get("b")!.killedWith ?? "", /sibling task a failed/);
  assert.equal(h.runner.clientStatus, "failed");
});

test("update(stop) kills tasks; destroy removes the alloc dir and state", async () => {
  const h = runnerFor([task("a")]);
  const done = h.runner.run();
  await h.started();
  h.runner.update({ ...h.alloc, DesiredStatus: "stop" });
  await done;
  assert.ok(h.fakes.get("a")!.killedWith);
  assert.equal(h.runner.clientStatus, "complete");
  await h.runner.destroy();
  assert.equal(fs.existsSync(h.runner.allocDir.root), false);
  assert.equal(h.stateDb.getAlloc(h.alloc.ID), undefined);
});

test("destroy before run never starts tasks and is safe without prerun", async () => {
  const h = runnerFor([task("a")]);
  await h.runner.destroy();
  assert.equal(h.fakes.size, 0);
  assert.equal(h.runner.clientStatus, "complete");
});

test("a restored finished alloc reports its terminal status again (the dead agent may not have)", async () => {
  const { runner, updates, stateDb, alloc } = runnerFor([task("t")]);
  const finished: AllocClientUpdate = {
    ID: alloc.ID,
    ClientStatus: "complete",
    ClientDescription: "All tasks have completed",
    TaskStates: { t: { ...newTaskState(), State: "dead" } },
  };
  stateDb.putAlloc(alloc);
  stateDb.putAllocClientUpdate(finished);
  await runner.run();
  assert.deepEqual(updates, [finished], "the stored terminal status is sent once more, unchanged");
  assert.equal(runner.clientStatus, "complete");
});
