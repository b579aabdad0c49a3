import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isBerthError } from "../../../src/structs/errors.js";
import { SimCsiPlugin, SimCsiStats } from "../../../src/nodesim/sim_csi.js";
import { SimTaskRunner, runForMs } from "../../../src/nodesim/sim_task.js";
import { AllocHookResources } from "../../../src/client/allocrunner/hook_resources.js";
import type { Allocation, TaskState } from "../../../src/structs/alloc.js";
import type { Task } from "../../../src/structs/job.js";
import type { CsiVolumeCapability, NodeStageRequest } from "../../../src/csi/types.js";

const cap: CsiVolumeCapability = {
  accessMode: "single-node-writer",
  access: { type: "mount", fsType: "", mountFlags: [] },
};
const stageReq = (p: string): NodeStageRequest => ({
  volumeId: "v",
  publishContext: {},
  stagingTargetPath: p,
  volumeCapability: cap,
  secrets: {},
  volumeContext: {},
});

describe("the simulated CSI plugin", () => {
  it("mounts by recording the path and unmounts by forgetting it", async () => {
    const stats = new SimCsiStats();
    const plugin = new SimCsiPlugin(
      "p",
      "ext-n",
      { nodeLatencyMs: 0, controllerLatencyMs: 0, errorRate: 0, maxVolumesPerNode: 3 },
      stats,
    );
    const c = plugin.client("unix:///sim.sock");
    assert.equal((await c.nodeGetInfo()).maxVolumesPerNode, 3);
    await c.nodeStageVolume(stageReq("/s"));
    assert.equal(plugin.isMounted("/s"), true);
    await c.nodeUnstageVolume({ volumeId: "v", stagingTargetPath: "/s" });
    assert.equal(plugin.isMounted("/s"), false);
    assert.equal(stats.callsOf("NodeStageVolume"), 1);
    await assert.rejects(
      c.listVolumes({ maxEntries: 0, startingToken: "" }),
      /ERR_CSI_UNIMPLEMENTED|not implemented/,
    );
  });

  it("fails volume calls at the error rate with a retryable UNAVAILABLE, never identity calls", async () => {
    const stats = new SimCsiStats();
    const plugin = new SimCsiPlugin(
      "p",
      "ext-n",
      { nodeLatencyMs: 0, controllerLatencyMs: 0, errorRate: 0.5, maxVolumesPerNode: 0, random: () => 0.25 },
      stats,
    );
    const c = plugin.client("unix:///sim.sock");
    await c.probe();
    await c.getPluginInfo();
    const err = await c.nodeStageVolume(stageReq("/s")).catch((e: unknown) => e);
    assert.ok(isBerthError(err) && err.code === "ERR_CSI_UNAVAILABLE", String(err));
    assert.equal(plugin.isMounted("/s"), false, "a failed stage mounts nothing");
    assert.equal(stats.injectedErrors, 1);
  });
});

describe("the simulated task runner", () => {
  const alloc = (type: string) => ({ Job: { Type: type } }) as unknown as Allocation;
  const task = (config: Record<string, unknown>) => ({ Name: "t", Config: config }) as unknown as Task;

  it("reads run_for as Nomad's mock driver does", () => {
    assert.equal(runForMs(task({ run_for: "2s" }), "service"), 2000);
    assert.equal(runForMs(task({ run_for: 5 }), "service"), 5);
    assert.equal(runForMs(task({}), "batch"), 0);
    assert.equal(runForMs(task({}), "service"), null);
  });

  it("runs a batch task to completion and a service task until killed", async () => {
    const states: TaskState["State"][] = [];
    const batch = new SimTaskRunner(alloc("batch"), task({ exit_code: 1 }), new AllocHookResources(), (s) =>
      states.push(s.State),
    );
    await batch.run();
    assert.deepEqual(states, ["running", "dead"]);
    assert.equal(batch.state().Failed, true, "exit_code 1 fails the task");

    const service = new SimTaskRunner(alloc("service"), task({}), new AllocHookResources(), () => undefined);
    const running = service.run();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(service.state().State, "running");
    await service.kill("stop");
    assert.equal(service.state().State, "dead", "kill() returns once the task is dead");
    await running;
    assert.equal(service.state().Failed, false);
  });

  it("a task killed before it started is dead at once and never runs", async () => {
    const r = new SimTaskRunner(alloc("service"), task({}), new AllocHookResources(), () => undefined);
    await r.kill("stop");
    assert.equal(r.state().State, "dead");
    await r.run();
    assert.equal(r.state().StartedAt, null);
  });
});
