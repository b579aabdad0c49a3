/**
 * Through a real `berth agent -dev -data-dir DIR`:
 * 1. two allocs (two jobs) on one node share a multi-node-multi-writer volume: they share one
 *    staging; stopping the first only unpublishes its target (no NodeUnstage), stopping the second
 *    unpublishes and unstages;
 * 2. the -dev exit (SIGINT) stops the tasks using the plugin's volumes and releases those volumes
 *    before the plugin task stops: the agent log shows the unstage before the plugin's deregistration,
 *    no unmount had to be retried, and nothing is left mounted or running.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { AgentProcess, crashAgent, eventually, freePort } from "../../helpers/agent_process.js";
import {
  allocOf,
  claimCount,
  cleanUp,
  Cli,
  callLog,
  methodsOf,
  pluginAndVolume,
  sleepers,
  VOLUME,
  writeSpecs,
  type AllocView,
  type VolumeView,
} from "./restart_fixtures.js";

const SLEEP = 86_404;
let dir: string;
let dataDir: string;
let logFile: string;
let agent: AgentProcess | null = null;
let cli: Cli;
let specs: ReturnType<typeof writeSpecs> & { app2: string };
let pluginAlloc: AllocView;
let ext: string;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-shared-vol-")));
  dataDir = path.join(dir, "data");
  logFile = path.join(dir, "agent.log");
  const port = await freePort();
  cli = new Cli(`http://127.0.0.1:${port}`);
  const base = writeSpecs(dir, SLEEP, { accessMode: "multi-node-multi-writer" });
  const app2 = path.join(dir, "app2.hcl");
  fs.writeFileSync(app2, fs.readFileSync(base.app, "utf8").replace('job "app"', 'job "app2"'));
  specs = { ...base, app2 };
  agent = new AgentProcess(["-dev", "-data-dir", dataDir, "-http-addr", `127.0.0.1:${port}`], logFile);
  await eventually("the node to be ready", async () => {
    const nodes = await cli.get<{ Status: string }[]>("/v1/nodes");
    return nodes?.some((n) => n.Status === "ready") ? true : undefined;
  });
  pluginAlloc = await pluginAndVolume(cli, specs);
  ext = (await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`))!.ExternalID;
});

after(async () => {
  await crashAgent(agent!).catch(() => undefined);
  await cleanUp([dir], SLEEP);
});

function nodeCalls(): string[] {
  return methodsOf(callLog(dataDir, pluginAlloc.ID), ext).filter((m) => m.startsWith("Node"));
}

/** Waits until the volume has exactly `n` write claims and none still being released. */
async function claimsAre(n: number): Promise<void> {
  await eventually(`the volume to have ${n} claim(s)`, async () => {
    const v = await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
    const settled =
      v && Object.keys(v.WriteClaims ?? {}).length === n && Object.keys(v.PastClaims ?? {}).length === 0;
    return settled && (n > 0 || claimCount(v) === 0) ? v : undefined;
  });
}

test("two allocs share one staging: stopping the first unstages nothing, stopping the second does", async () => {
  await cli.run(["job", "run", specs.app]);
  await allocOf(cli, "app", "running");
  await cli.run(["job", "run", specs.app2]);
  await allocOf(cli, "app2", "running");
  assert.equal(sleepers(SLEEP).length, 2, "both tasks run");
  assert.deepEqual(nodeCalls(), ["NodeStageVolume", "NodePublishVolume", "NodePublishVolume"], "staged once");
  const staged = (await mountsUnder(dataDir)).filter((m) => m.includes(`${path.sep}staging${path.sep}`));
  assert.equal(staged.length, 1, "one staging mount");

  let before = nodeCalls().length;
  await cli.run(["job", "stop", "app"]);
  await claimsAre(1);
  assert.deepEqual(nodeCalls().slice(before), ["NodeUnpublishVolume"], "the staging stays for app2");
  assert.equal(sleepers(SLEEP).length, 1);
  assert.deepEqual(
    (await mountsUnder(dataDir)).filter((m) => m.includes(`${path.sep}staging${path.sep}`)),
    staged,
    "still staged",
  );

  before = nodeCalls().length;
  await cli.run(["job", "stop", "app2"]);
  await claimsAre(0);
  assert.deepEqual(nodeCalls().slice(before), ["NodeUnpublishVolume", "NodeUnstageVolume"]);
  assert.deepEqual(sleepers(SLEEP), []);
  const left = (await mountsUnder(dataDir)).filter((m) => m.includes(`${path.sep}per-alloc${path.sep}`));
  assert.deepEqual(left, [], "no publish target left mounted");
});

test("-dev exit stops the volume's users and releases their volumes before the plugin stops", async () => {
  // A job not run before: allocOf reads a job's first alloc, and "app" already has a stopped one.
  const app3 = path.join(dir, "app3.hcl");
  fs.writeFileSync(app3, fs.readFileSync(specs.app, "utf8").replace('job "app"', 'job "app3"'));
  await cli.run(["job", "run", app3]);
  await allocOf(cli, "app3", "running");
  const logStart = fs.statSync(logFile).size;

  assert.equal(await agent!.stop(60_000), 0, "the agent exits 0");
  const log = fs.readFileSync(logFile, "utf8").slice(logStart);
  const unstaged = log.indexOf("volume unstaged");
  const deregistered = log.indexOf("plugin deregistered");
  assert.ok(unstaged >= 0, "the app's volume was unstaged at exit");
  assert.ok(deregistered >= 0, "the plugin was deregistered at exit");
  assert.ok(unstaged < deregistered, "the volume was released while the plugin still ran");
  assert.ok(!log.includes("unmount failed, retrying"), "no unmount needed a retry");
  assert.deepEqual(sleepers(SLEEP), [], "the app task is gone");
  assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
});
