/**
 * Lost mounts (issue 4, item 7), through real processes: a service task uses a hostpath volume; the
 * node plugin process is killed (SIGKILL) and its restart policy starts it again. hostpath's bind
 * mounts would survive that, so the test unmounts the publish target and the staging on the host
 * first, as a FUSE plugin's death would. Once the plugin registers again the agent finds both gone,
 * stages and publishes again (the call log shows it), binds the new mount into the running app
 * task's own mount namespace in place of its stale copy (no restart), and the app's tasks get a
 * "Volume Remounted" event that `berth alloc status` shows. Stopping the jobs then releases
 * everything.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { AgentProcess, crashAgent, eventually, freePort } from "../../helpers/agent_process.js";
import {
  allocOf,
  assertTaskSeesNewMount,
  claimCount,
  cleanUp,
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

const SLEEP = 86_403;
let dir: string;
let dataDir: string;
let logFile: string;
let agent: AgentProcess | null = null;
let cli: Cli;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-plugin-restart-")));
  dataDir = path.join(dir, "data");
  logFile = path.join(dir, "agent.log");
  const port = await freePort();
  cli = new Cli(`http://127.0.0.1:${port}`);
  agent = new AgentProcess(
    ["-server", "-client", "-data-dir", dataDir, "-http-addr", `127.0.0.1:${port}`],
    logFile,
  );
  await eventually("the node to be ready", async () => {
    const nodes = await cli.get<{ Status: string }[]>("/v1/nodes");
    return nodes?.some((n) => n.Status === "ready") ? true : undefined;
  });
});

after(async () => {
  await crashAgent(agent!).catch(() => undefined);
  await cleanUp([dir], SLEEP);
});

/** The csi-hostpath process the agent runs (chrooted into a task dir under this test's data dir). */
function pluginPid(): number | undefined {
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.includes("csi-hostpath") && fs.readlinkSync(`/proc/${pid}/root`).startsWith(dataDir))
        return pid;
    } catch {
      /* gone */
    }
  }
  return undefined;
}

test("a killed node plugin is restarted and the mounts it lost are staged and published again", async () => {
  const specs = writeSpecs(dir, SLEEP, {
    pluginRestart: `restart {
        attempts = 3
        delay    = "1s"
        interval = "5m"
        mode     = "fail"
      }`,
  });
  const pluginAlloc: AllocView = await pluginAndVolume(cli, specs);
  await cli.run(["job", "run", specs.app]);
  const app = await allocOf(cli, "app", "running");
  const ext = (await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`))!.ExternalID;
  const target = await publishedTarget(dataDir);
  const staging = (await mountsUnder(dataDir)).find((m) => m.includes(`${path.sep}staging${path.sep}`));
  assert.ok(staging, "the volume is staged");
  const [appPid] = sleepers(SLEEP);
  const callsBefore = callLog(dataDir, pluginAlloc.ID).length;
  const oldPlugin = pluginPid();
  assert.ok(oldPlugin, "the plugin process is found");

  // A FUSE plugin's mounts die with it; hostpath's bind mounts do not, so take them away by hand.
  execFileSync("umount", [target]);
  execFileSync("umount", [staging]);
  standInStaleCopy(appPid!);
  process.kill(oldPlugin, "SIGKILL");

  await eventually(
    "the target to be mounted again",
    async () => (mountIdAt(target) ? true : undefined),
    60_000,
  );
  assert.ok(mountIdAt(staging), "the staging is mounted again");
  const newPlugin = pluginPid();
  assert.ok(newPlugin && newPlugin !== oldPlugin, "a new plugin process runs");
  const calls = callLog(dataDir, pluginAlloc.ID).slice(callsBefore);
  assert.deepEqual(
    methodsOf(calls, ext).filter((m) => m.startsWith("Node")),
    ["NodeStageVolume", "NodePublishVolume"],
    JSON.stringify(calls),
  );
  assert.ok(
    calls.every((c) => c.code === "OK"),
    JSON.stringify(calls),
  );
  assert.equal(fs.readFileSync(path.join(target, "x"), "utf8").trim(), "hi", "the same volume is back");

  await assertTaskSeesNewMount(appPid!, target);
  assert.deepEqual(sleepers(SLEEP), [appPid], "the app task kept running");

  const status = await eventually("the event to show in alloc status", async () => {
    const out = await cli.run(["alloc", "status", app.ID]);
    return out.includes("Volume Remounted") ? out : undefined;
  });
  assert.match(
    status,
    /volume "data" \(vol1\) was no longer mounted after plugin "hostpath" registered again; mounted it again and bound the new mount into the running tasks that use it/,
  );
  assert.doesNotMatch(status, /Volume Refresh Failed/);
  const plugin = await allocOf(cli, "plugin", "running");
  assert.ok(
    plugin.TaskStates.plugin!.Events.some((e) => e.Type === "Restarting"),
    "the plugin task was restarted by its restart policy",
  );

  await cli.run(["job", "stop", "app"]);
  await eventually("the app's claim to be released", async () => {
    const v = await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
    return v && claimCount(v) === 0 ? v : undefined;
  });
  const nodeCalls = methodsOf(callLog(dataDir, pluginAlloc.ID), ext).filter((m) => m.startsWith("Node"));
  assert.deepEqual(nodeCalls.slice(-2), ["NodeUnpublishVolume", "NodeUnstageVolume"]);
  await cli.run(["volume", "delete", VOLUME]);
  await cli.run(["job", "stop", "plugin"]);
  await allocOf(cli, "plugin", "complete");
  assert.equal(await agent!.stop(30_000), 0, "the agent exits 0");
  assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
  assert.deepEqual(sleepers(SLEEP), [], "no task is left running");
});
