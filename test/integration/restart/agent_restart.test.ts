/**
 * A persistent `berth agent -server -client -data-dir DIR`, killed with SIGKILL and started again on
 * the same data dir, through real processes:
 * 1. the app task keeps running (same pid), its volume stays mounted (same mount ID), the plugin is
 *    not asked to stage or publish again and the server holds the same single claim;
 * 2. a publish target unmounted behind berth's back while the agent is down is published again on
 *    return (a new NodePublishVolume, no NodeStage: the staging is still there), and the running
 *    task, re-attached, gets the new mount bound over the stale copy in its own namespace (the
 *    test stands a tmpfs there as that dead copy);
 * 3. stopping the jobs releases everything: nothing mounted, no claim, no process left.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { after, before } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { AgentProcess, crashAgent, eventually, freePort } from "../../helpers/agent_process.js";
import {
  allocOf,
  assertTaskSeesNewMount,
  claimCount,
  cleanUp,
  keepLogIfFailed,
  Steps,
  Cli,
  callLog,
  methodsOf,
  mountIdAt,
  pluginAndVolume,
  publishedTarget,
  sleepers,
  standInStaleCopy,
  VOLUME,
  writeSpecs,
  type AllocView,
  type VolumeView,
} from "./restart_fixtures.js";

const SLEEP = 86_401;
let dir: string;
let dataDir: string;
let logFile: string;
let args: string[];
let agent: AgentProcess | null = null;
let cli: Cli;
let specs: ReturnType<typeof writeSpecs>;
let pluginAlloc: AllocView;
let appAlloc: AllocView;
/** The volume's ExternalID, as the plugin's call log names it. */
let ext: string;
const steps = new Steps();
const step = steps.step.bind(steps);

function startAgent(): AgentProcess {
  agent = new AgentProcess(args, logFile);
  return agent;
}

async function nodeReady(): Promise<void> {
  await eventually("the node to be ready", async () => {
    const nodes = await cli.get<{ Status: string }[]>("/v1/nodes");
    return nodes?.some((n) => n.Status === "ready") ? true : undefined;
  });
}

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-restart-")));
  dataDir = path.join(dir, "data");
  logFile = path.join(dir, "agent.log");
  const port = await freePort();
  cli = new Cli(`http://127.0.0.1:${port}`);
  args = ["-server", "-client", "-data-dir", dataDir, "-http-addr", `127.0.0.1:${port}`];
  specs = writeSpecs(dir, SLEEP);
  startAgent();
  await nodeReady();
  pluginAlloc = await pluginAndVolume(cli, specs);
  await cli.run(["job", "run", specs.app]);
  appAlloc = await allocOf(cli, "app", "running");
  ext = (await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`))!.ExternalID;
});

after(async () => {
  await crashAgent(agent!).catch(() => undefined);
  keepLogIfFailed(steps.failed, logFile, `berth-agent-restart-${process.pid}.log`);
  await cleanUp([dir], SLEEP);
});

step(
  "kill -9 and restart: the task keeps running, its volume stays mounted, no second stage/publish or claim",
  async () => {
    const target = await publishedTarget(dataDir);
    const mountId = mountIdAt(target);
    const [pid] = sleepers(SLEEP);
    assert.ok(pid, "the app task runs");
    const before = await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
    assert.deepEqual(Object.keys(before!.WriteAllocs), [appAlloc.ID]);
    const callsBefore = callLog(dataDir, pluginAlloc.ID);
    assert.deepEqual(
      methodsOf(callsBefore, ext).filter((m) => m.startsWith("Node")),
      ["NodeStageVolume", "NodePublishVolume"],
    );

    await crashAgent(agent!);
    assert.deepEqual(sleepers(SLEEP), [pid], "the task outlives the agent");
    startAgent();
    await nodeReady();
    await eventually("the agent to restore the app alloc", async () =>
      fs.readFileSync(logFile, "utf8").includes("volume still mounted, reusing it") ? true : undefined,
    );
    // The plugin was re-attached and re-registered: the server sees it healthy again.
    await eventually("plugin hostpath to be healthy after the restart", async () => {
      const p = await cli.get<{ NodesHealthy: number }>("/v1/plugin/csi/hostpath");
      return p && p.NodesHealthy >= 1 ? p : undefined;
    });
    // Give a wrong restore (a restart of the task, a second publish) time to show.
    await new Promise((r) => setTimeout(r, 2000));

    assert.deepEqual(sleepers(SLEEP), [pid], "the same task process still runs");
    assert.equal(mountIdAt(target), mountId, "the same mount is still in place");
    const app = await allocOf(cli, "app", "running");
    assert.equal(app.ID, appAlloc.ID);
    const started = app.TaskStates.app!.Events.filter((e) => e.Type === "Started");
    assert.equal(started.length, 1, "the task was not started again");
    const calls = callLog(dataDir, pluginAlloc.ID).slice(callsBefore.length);
    assert.deepEqual(
      methodsOf(calls).filter((m) => m === "NodeStageVolume" || m === "NodePublishVolume"),
      [],
      "no second NodeStage/NodePublish",
    );
    const afterRestart = await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
    assert.deepEqual(Object.keys(afterRestart!.WriteAllocs), [appAlloc.ID], "the same claim");
    assert.equal(claimCount(afterRestart!), claimCount(before!), "no second claim");
    assert.equal(
      fs.readFileSync(path.join(target, "x"), "utf8").trim(),
      "hi",
      "the task's write is in the volume",
    );
  },
);

step("a publish target unmounted while the agent is down is published again on return", async () => {
  const target = await publishedTarget(dataDir);
  const [pid] = sleepers(SLEEP);
  const callsBefore = callLog(dataDir, pluginAlloc.ID).length;

  await crashAgent(agent!);
  execFileSync("umount", [target]);
  assert.equal(mountIdAt(target), null, "the target is unmounted behind berth's back");
  standInStaleCopy(pid!);
  startAgent();
  await nodeReady();
  await eventually("the target to be mounted again", async () => (mountIdAt(target) ? true : undefined));
  await assertTaskSeesNewMount(pid!, target);

  const calls = callLog(dataDir, pluginAlloc.ID).slice(callsBefore);
  const nodeCalls = methodsOf(calls, ext).filter((m) => m.startsWith("Node"));
  assert.deepEqual(nodeCalls, ["NodePublishVolume"], "published again; the staging was still there");
  assert.ok(
    calls.every((c) => c.code === "OK"),
    JSON.stringify(calls),
  );
  assert.deepEqual(sleepers(SLEEP), [pid], "the running task was not restarted");
  assert.equal(fs.readFileSync(path.join(target, "x"), "utf8").trim(), "hi", "the same volume");
  const v = await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
  assert.deepEqual(Object.keys(v!.WriteAllocs), [appAlloc.ID], "still the one claim");
});

step("stopping the jobs releases every mount and claim; the agent stops cleanly", async () => {
  await cli.run(["job", "stop", "app"]);
  await eventually("the app's claim to be released", async () => {
    const v = await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
    return v && claimCount(v) === 0 ? v : undefined;
  });
  const nodeCalls = methodsOf(callLog(dataDir, pluginAlloc.ID), ext).filter((m) => m.startsWith("Node"));
  assert.deepEqual(nodeCalls.slice(-2), ["NodeUnpublishVolume", "NodeUnstageVolume"]);
  assert.deepEqual(sleepers(SLEEP), [], "the app task is gone");
  await cli.run(["volume", "delete", VOLUME]);
  await cli.run(["job", "stop", "plugin"]);
  await allocOf(cli, "plugin", "complete");
  assert.equal(await agent!.stop(30_000), 0, "the agent exits 0");
  assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
});
