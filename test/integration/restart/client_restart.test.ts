/**
 * A server and a node agent as two processes (`-server -data-dir S`, `-client -servers=… -data-dir C`):
 * 1. a graceful stop (SIGINT) of the node agent leaves the task running and its volume mounted, and
 *    does not wait on anything (it exits promptly); the restarted agent picks both up;
 * 2. the job is stopped while the node agent is down (killed with SIGKILL); on its return the
 *    alloc is stopped: its task killed, the volume unpublished, unstaged, and the claim released;
 * 3. nothing stays mounted or running once the plugin job is stopped too.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { crashAgent, eventually } from "../../helpers/agent_process.js";
import {
  allocOf,
  claimCount,
  SplitAgents,
  Steps,
  Cli,
  callLog,
  methodsOf,
  mountIdAt,
  pluginAndVolume,
  publishedTarget,
  sleepers,
  VOLUME,
  writeSpecs,
  type AllocView,
  type VolumeView,
} from "./restart_fixtures.js";

const SLEEP = 86_402;
const agents = new SplitAgents("client-restart");
const { dir, clientDir, logFile } = agents;
let cli: Cli;
let specs: ReturnType<typeof writeSpecs>;
let pluginAlloc: AllocView;
let appAlloc: AllocView;
let ext: string;
const steps = new Steps();
const step = steps.step.bind(steps);

async function startClient(): Promise<void> {
  agents.startClient();
  await agents.nodeReady();
}

before(async () => {
  await agents.start();
  cli = agents.cli;
  await agents.nodeReady();
  specs = writeSpecs(dir, SLEEP);
  pluginAlloc = await pluginAndVolume(cli, specs);
  await cli.run(["job", "run", specs.app]);
  appAlloc = await allocOf(cli, "app", "running");
  ext = (await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`))!.ExternalID;
});

after(async () => {
  await agents.cleanUp(steps.failed, SLEEP);
});

step("a graceful stop of the node agent leaves the task running and its volume mounted", async () => {
  const target = await publishedTarget(clientDir);
  const mountId = mountIdAt(target);
  const [pid] = sleepers(SLEEP);
  assert.ok(pid, "the app task runs");
  const t0 = Date.now();
  assert.equal(await agents.client!.stop(20_000), 0, "the agent exits 0");
  assert.ok(Date.now() - t0 < 10_000, `the stop took ${Date.now() - t0}ms`);
  assert.deepEqual(sleepers(SLEEP), [pid], "the task outlives the agent");
  assert.equal(mountIdAt(target), mountId, "the volume stays mounted");
  const calls = callLog(clientDir, pluginAlloc.ID).length;

  await startClient();
  await eventually("the app to be restored", async () =>
    fs.readFileSync(logFile, "utf8").includes("volume still mounted, reusing it") ? true : undefined,
  );
  assert.deepEqual(sleepers(SLEEP), [pid], "the same task process");
  assert.equal(mountIdAt(target), mountId, "the same mount");
  const again = methodsOf(callLog(clientDir, pluginAlloc.ID).slice(calls), ext);
  assert.deepEqual(
    again.filter((m) => m.startsWith("Node")),
    [],
    "no NodeStage/NodePublish after the restart",
  );
});

step("a job stopped while the node agent is down is stopped and released on its return", async () => {
  const target = await publishedTarget(clientDir);
  const calls = callLog(clientDir, pluginAlloc.ID).length;
  await crashAgent(agents.client!);
  await cli.run(["job", "stop", "app"]);
  assert.equal(sleepers(SLEEP).length, 1, "the task still runs while its agent is away");

  await startClient();
  await eventually("the app's claim to be released", async () => {
    const v = await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
    return v && claimCount(v) === 0 ? v : undefined;
  });
  const stopped = await allocOf(cli, "app", "complete");
  assert.equal(stopped.ID, appAlloc.ID);
  assert.deepEqual(sleepers(SLEEP), [], "the task was killed");
  assert.equal(mountIdAt(target), null, "unpublished");
  const nodeCalls = methodsOf(callLog(clientDir, pluginAlloc.ID).slice(calls), ext).filter((m) =>
    m.startsWith("Node"),
  );
  assert.deepEqual(nodeCalls, ["NodeUnpublishVolume", "NodeUnstageVolume"]);
  const staging = (await mountsUnder(clientDir)).filter((m) => m.includes(`${path.sep}staging${path.sep}`));
  assert.deepEqual(staging, [], "unstaged");
});

step("stopping the plugin leaves nothing mounted or running; both agents stop cleanly", async () => {
  await cli.run(["volume", "delete", VOLUME]);
  await cli.run(["job", "stop", "plugin"]);
  await allocOf(cli, "plugin", "complete");
  assert.equal(await agents.client!.stop(30_000), 0, "the node agent exits 0");
  assert.equal(await agents.server!.stop(30_000), 0, "the server exits 0");
  assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
  assert.deepEqual(sleepers(SLEEP), [], "no task process left");
});
