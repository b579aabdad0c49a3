/**
 * Issue 8, item 1 (data loss on a plugin job update), end to end with real processes: a consumer
 * service writes a counter into its volume every 100 ms; the plugin job is updated twice (an
 * argument changes, so a new plugin alloc starts while the old one stops). Throughout:
 * - the consumer's /data is the volume's own file in the plugin's storage (same inode), its host
 *   publish target stays the same mount, and the counter in the storage keeps growing;
 * - a writer started after the updates writes into the volume;
 * - nothing is ever written under berth's per-alloc dirs.
 * Run with the plugin under raw_exec and under exec (its storage in a host volume), and under
 * raw_exec once more with the agent killed (-9) and restarted before the updates. Each run ends
 * with every job stopped, no claim, nothing mounted and no process left.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { eventually } from "../../helpers/agent_process.js";
import { claimCount, mountIdAt, type VolumeView } from "../restart/restart_fixtures.js";
import { readCounter, UpdateRig, VOLUME, type PluginDriver } from "./plugin_update_fixtures.js";

/** Unique per file: cleanUp also kills any stray `sleep` of this length. */
const SLEEP = 86_417;

/** The consumer task's shell (found by its script), whose root is the exec task's chroot. */
function consumerPid(marker: string): number | undefined {
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      // The task itself, chrooted; its shell parent (same script in its argv) runs in "/".
      if (cmd.includes(marker) && fs.readlinkSync(`/proc/${pid}/root`) !== "/") return pid;
    } catch {
      /* gone */
    }
  }
  return undefined;
}

/** The counter grows past `from` in the volume's own storage: the consumer still writes there. */
function counterGrows(file: string, from: number): Promise<number> {
  return eventually(
    `the counter in ${file} to grow past ${from}`,
    async () => {
      const n = readCounter(file);
      return n !== undefined && n > from + 5 ? n : undefined;
    },
    30_000,
    100,
  );
}

async function pluginUpdateKeepsData(driver: PluginDriver, crashBeforeUpdates = false): Promise<void> {
  const rig = new UpdateRig(
    `plugin-update-${driver.replace("_", "")}${crashBeforeUpdates ? "-r" : ""}`,
    driver,
  );
  let passed = false;
  try {
    await rig.start();
    await rig.runPlugin(0);
    const vol = await rig.createVolume();
    const volDir = rig.volumeDir(vol);
    const counter = path.join(volDir, "counter");
    const marker = `counter-${driver}`;
    const script = `: ${marker}; i=0; while :; do i=$((i+1)); echo $i > /data/counter; sleep 0.1; done`;
    await rig.cli.run(["job", "run", rig.userJob("consumer", "service", script)]);
    await rig.allocOf("consumer", "running");
    const target = await eventually("the consumer's volume to be published", async () => {
      const m = (await mountsUnder(rig.dataDir)).filter((p) => p.includes(`${path.sep}per-alloc${path.sep}`));
      return m.length === 1 ? m[0] : undefined;
    });
    const mountId = mountIdAt(target);
    assert.ok(mountId, "the publish target is a mount");
    let last = await counterGrows(counter, 0);
    const pid = await eventually("the consumer process", async () => consumerPid(marker));
    const inVolume = fs.statSync(counter);
    // The node's view of who uses the plugin dir comes back from its state DB.
    if (crashBeforeUpdates) await rig.crashAndRestart();

    for (const generation of [1, 2]) {
      await rig.runPlugin(generation);
      last = await counterGrows(counter, last);
      assert.equal(mountIdAt(target), mountId, `update ${generation}: the consumer's mount stayed`);
      const seen = fs.statSync(`/proc/${pid}/root/data/counter`);
      assert.deepEqual(
        [seen.dev, seen.ino],
        [inVolume.dev, inVolume.ino],
        `update ${generation}: the consumer's /data/counter is the volume's file`,
      );
      assert.deepEqual(await rig.filesUnderPerAlloc(), [], `update ${generation}: nothing under per-alloc`);
    }

    const writer = "echo written-after-update > /data/after.txt";
    await rig.cli.run(["job", "run", rig.userJob("writer", "batch", writer)]);
    await rig.allocOf("writer", "complete", 90_000);
    assert.equal(fs.readFileSync(path.join(volDir, "after.txt"), "utf8"), "written-after-update\n");

    for (const job of ["consumer", "writer"]) await rig.cli.run(["job", "stop", job]);
    await eventually("every claim to be released", async () => {
      const v = await rig.cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
      return v && claimCount(v) === 0 ? v : undefined;
    });
    assert.ok((readCounter(counter) ?? 0) >= last, "the volume kept the consumer's data");
    assert.deepEqual(await rig.filesUnderPerAlloc(), [], "the consumer never wrote outside its volume");
    await rig.cli.run(["volume", "delete", VOLUME]);
    await rig.stopAll();
    assert.equal(consumerPid(marker), undefined, "the consumer is gone");
    passed = true;
  } finally {
    await rig.cleanUp(passed, SLEEP);
  }
}

test("plugin job updated twice under raw_exec: the consumer keeps writing into its volume", () =>
  pluginUpdateKeepsData("raw_exec"));

test("plugin job updated twice under exec (storage in a host volume): the consumer keeps writing into its volume", () =>
  pluginUpdateKeepsData("exec"));

test("plugin job updated twice under raw_exec after an agent crash and restart: the consumer keeps writing into its volume", () =>
  pluginUpdateKeepsData("raw_exec", true));
