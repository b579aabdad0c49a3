/**
 * The node's self-fence through real processes (issue 28): a `berth agent -server` with a 3 s
 * heartbeat TTL and a `berth agent -client` running the hostpath plugin and an app that writes a
 * single-node-writer volume. The server is SIGSTOPped (hung: its socket stays open, nothing
 * answers). Within the TTL plus the task's kill time, the node stops the app by itself — and only
 * the app: the plugin alloc, which holds no claim, keeps running. After SIGCONT the node reaches
 * the server again, the fenced alloc's claim is released and the service is placed again, and
 * nothing is left mounted or running at the end.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, test } from "node:test";
import { eventually, logTail } from "../../helpers/agent_process.js";
import {
  allocOf,
  claimCount,
  pluginAndVolume,
  sleepers,
  SplitAgents,
  VOLUME,
  writeSpecs,
  type AllocView,
  type VolumeView,
} from "./restart_fixtures.js";

const SLEEP = 86_411;
const TTL_S = 3;
let agents: SplitAgents;
let failed = false;
let paused: number | undefined;

before(async () => {
  agents = new SplitAgents("self-fence", [], [`-heartbeat-ttl=${TTL_S}s`, "-failover-heartbeat-ttl=3s"]);
  await agents.start();
  await agents.nodeReady();
});

after(async () => {
  if (paused !== undefined) process.kill(paused, "SIGCONT");
  await agents.cleanUp(failed, SLEEP);
});

/** Whether a csi-hostpath process of the plugin alloc `allocId` runs (its cwd is in the alloc dir). */
function pluginRunning(allocId: string): boolean {
  return fs.readdirSync("/proc").some((e) => {
    if (!/^\d+$/.test(e)) return false;
    try {
      const cmd = fs.readFileSync(`/proc/${e}/cmdline`, "utf8");
      return cmd.includes("csi-hostpath") && fs.readlinkSync(`/proc/${e}/cwd`).includes(allocId);
    } catch {
      return false;
    }
  });
}

test("a node cut off from its server stops its single-writer task by itself, then recovers", async () => {
  try {
    const specs = writeSpecs(agents.dir, SLEEP);
    const pluginAlloc = await pluginAndVolume(agents.cli, specs);
    await agents.cli.run(["job", "run", specs.app]);
    const first = await allocOf(agents.cli, "app", "running");
    assert.equal(sleepers(SLEEP).length, 1, "the app runs");
    assert.ok(pluginRunning(pluginAlloc.ID), "the plugin runs");

    paused = agents.server!.child.pid!;
    process.kill(paused, "SIGSTOP");
    const stoppedAt = Date.now();
    await eventually(
      "the node to stop the app by itself",
      async () => (sleepers(SLEEP).length === 0 ? true : undefined),
      30_000,
      100,
    );
    const fencedAfterMs = Date.now() - stoppedAt;
    process.stderr.write(`self-fence: the app was stopped ${fencedAfterMs} ms after the server hung\n`);
    // Not before the TTL (it had renewed at most a third of a TTL before the pause)...
    assert.ok(fencedAfterMs >= (TTL_S * 1000 * 2) / 3 - 100, `not fenced early (${fencedAfterMs} ms)`);
    assert.ok(pluginRunning(pluginAlloc.ID), "the plugin alloc (no claim) keeps running");
    assert.match(logTail(agents.logFile, 400), /stopping an alloc: the node cannot renew its lease/);

    process.kill(paused, "SIGCONT");
    paused = undefined;
    // The fenced alloc ends, its claim is released, and the service is placed again.
    const second = await eventually(
      "the app to be placed and running again",
      async () => {
        const allocs = await agents.cli.get<AllocView[]>("/v1/job/app/allocations");
        return allocs?.find((a) => a.ID !== first.ID && a.ClientStatus === "running");
      },
      90_000,
    );
    assert.notEqual(second.ID, first.ID);
    assert.equal(sleepers(SLEEP).length, 1, "exactly one app task runs");
    const vol = await agents.cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
    assert.deepEqual(Object.keys(vol!.WriteClaims ?? {}), [second.ID], "the new alloc alone writes");

    await agents.cli.run(["job", "stop", "app"]);
    await eventually("the claim to be released", async () => {
      const v = await agents.cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
      return v && claimCount(v) === 0 ? true : undefined;
    });
    assert.deepEqual(sleepers(SLEEP), []);
  } catch (err) {
    failed = true;
    throw err;
  }
});
