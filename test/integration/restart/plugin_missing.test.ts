/**
 * The node plugin stays missing longer than the plugin wait (issue: "the alloc fails with a message
 * that names the plugin; the claim is not leaked"). A server and a node agent as two processes, the
 * agent with `-csi-plugin-wait=3s`:
 * 1. the app runs with its volume; the node agent is killed (SIGKILL); while it is away the plugin
 *    job is stopped and the plugin's mounts vanish (unmounted behind berth's back, as the mounts of
 *    a FUSE plugin die with it);
 * 2. the returning agent does not take the plugin's restored registry entry for a live plugin: the
 *    app waits for it for 3 s, then fails naming "hostpath"; no claim is made on the way;
 * 3. the release cannot reach the plugin either, but nothing of the volume is mounted any more, so
 *    after the wait it goes on without the node step: the claim is freed on the server, with a
 *    "Volume Released Without Plugin" event; nothing is left mounted or running.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { crashAgent, eventually } from "../../helpers/agent_process.js";
import {
  allocOf,
  callLog,
  claimCount,
  Cli,
  methodsOf,
  pluginAndVolume,
  publishedTarget,
  sleepers,
  SplitAgents,
  Steps,
  VOLUME,
  writeSpecs,
  type AllocView,
  type VolumeView,
} from "./restart_fixtures.js";

const SLEEP = 86_403;
const agents = new SplitAgents("plugin-missing", ["-csi-plugin-wait=3s"]);
const { dir, clientDir, logFile } = agents;
let cli: Cli;
let pluginAlloc: AllocView;
let appAlloc: AllocView;
let ext: string;
const steps = new Steps();
const step = steps.step.bind(steps);

before(async () => {
  await agents.start();
  cli = agents.cli;
  const specs = writeSpecs(dir, SLEEP);
  pluginAlloc = await pluginAndVolume(cli, specs);
  await cli.run(["job", "run", specs.app]);
  appAlloc = await allocOf(cli, "app", "running");
  ext = (await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`))!.ExternalID;
});

after(async () => {
  await agents.cleanUp(steps.failed, SLEEP);
});

step("the plugin goes away with its mounts while the node agent is down", async () => {
  const target = await publishedTarget(clientDir);
  await crashAgent(agents.client!);
  await cli.run(["job", "stop", "plugin"]);
  const volumeMounts = (await mountsUnder(clientDir)).filter(
    (m) => m.includes(`${path.sep}per-alloc${path.sep}`) || m.includes(`${path.sep}staging${path.sep}`),
  );
  assert.ok(volumeMounts.includes(target), "the app's target was mounted");
  for (const m of volumeMounts.reverse()) execFileSync("umount", ["-l", m]);
  assert.equal(sleepers(SLEEP).length, 1, "the app task still runs while its agent is away");
});

step(
  "the returning agent waits the plugin wait, fails the app naming the plugin, frees the claim",
  async () => {
    const callsBefore = callLog(clientDir, pluginAlloc.ID).length;
    agents.startClient();
    const failed = await allocOf(cli, "app", "failed", 60_000);
    assert.equal(failed.ID, appAlloc.ID);
    const alloc = await cli.get<{ ClientDescription: string }>(`/v1/allocation/${appAlloc.ID}`);
    assert.match(
      alloc?.ClientDescription ?? "",
      /CSI plugin "hostpath" \(csi-node\) did not register on this node within 3000ms/,
    );
    await eventually("the app's claim to be freed", async () => {
      const v = await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
      return v && claimCount(v) === 0 ? v : undefined;
    });
    const events = await eventually("the release event", async () => {
      const a = await cli.get<AllocView>(`/v1/allocation/${appAlloc.ID}`);
      const evs = Object.values(a?.TaskStates ?? {}).flatMap((t) => t.Events);
      return evs.some((e) => e.Type === "Volume Released Without Plugin") ? evs : undefined;
    });
    assert.match(
      events.find((e) => e.Type === "Volume Released Without Plugin")!.DisplayMessage,
      /CSI node plugin "hostpath" did not come back/,
    );
    const log = fs.readFileSync(logFile, "utf8");
    const claimsAfterRestart = log.split('CSI plugin "hostpath" (csi-node) did not register')[1] ?? "";
    assert.doesNotMatch(claimsAfterRestart, /volume claim refused/, "no claim was tried without the plugin");
    assert.deepEqual(
      methodsOf(callLog(clientDir, pluginAlloc.ID).slice(callsBefore), ext),
      [],
      "the plugin was never called again",
    );
    assert.deepEqual(sleepers(SLEEP), [], "the app task was killed");
  },
);

step("nothing is left mounted or running; both agents stop cleanly", async () => {
  await allocOf(cli, "plugin", "complete");
  await cli.run(["volume", "deregister", VOLUME]);
  assert.equal(await agents.client!.stop(30_000), 0, "the node agent exits 0");
  assert.equal(await agents.server!.stop(30_000), 0, "the server exits 0");
  assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
  assert.deepEqual(sleepers(SLEEP), [], "no task process left");
});
