/**
 * Capacity-aware volume create (issue 33 item 2), with real processes on loopback: one `-server`
 * agent (capacity interval 1h, so every refresh seen here comes from a trigger, not the timer) and
 * `-client` agents A and B. csi-hostpath runs under raw_exec as a controller on A and node plugins
 * on A (zone=a) and B (zone=b), sharing one state dir, every instance told zone a holds 1 GiB and
 * zone b 3 GiB (--capacity-zone=…).
 * - The leader measures both segments once the node plugins are healthy (Capacity in the plugin's
 *   API answer and in `plugin status`).
 * - A 2 GiB create without topology lands in zone b, the only segment with room; the capacity of
 *   zone b is measured again after it (3 → 1 GiB).
 * - A second 2 GiB create fits nowhere: refused by berth before any plugin call, with a message
 *   naming each segment's free bytes; no storage, no volume, no intent is left.
 * - Deleting the first volume gives zone b its 3 GiB back.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { eventually, runCli } from "../../helpers/agent_process.js";
import { hostpathPluginGroup } from "../../builders/hostpath_plugin_job.js";
import { HostpathCluster, volumeHcl } from "./hostpath_cluster.js";

const GiB = 1024 ** 3;
const cluster = new HostpathCluster("berth-cap-");
let passed = false;

interface CapacityView {
  Entries: { Segments: Record<string, string>; AvailableBytes: number; Stale: boolean }[];
  LastError: string;
}
interface PluginView {
  ControllersHealthy: number;
  NodesHealthy: number;
  Capacity: CapacityView | null;
}

/** A csi-hostpath group on `node` whose every instance knows both zones' totals. */
function group(name: string, node: string, type: "controller" | "node", zone?: string): string {
  const args = [
    `--mode=${type}`,
    `--state-dir=${cluster.storage}`,
    `--capacity-zone=a=${1 * GiB}`,
    `--capacity-zone=b=${3 * GiB}`,
    ...(type === "node" ? ["--node-id=${node.unique.name}", `--topology-zone=${zone}`] : []),
  ];
  return hostpathPluginGroup(name, { driver: "raw_exec", type, args, node });
}

const plugin = () => cluster.getJson<PluginView>("/v1/plugin/csi/hostpath?capacity=true");

/** Zone → free bytes, once the capacity says `want` (a predicate over it). */
function capacityWhen(what: string, want: (byZone: Record<string, number>) => boolean) {
  return eventually(what, async () => {
    const entries = (await plugin().catch(() => undefined))?.Capacity?.Entries ?? [];
    const byZone = Object.fromEntries(entries.map((e) => [e.Segments.zone ?? "", e.AvailableBytes]));
    return want(byZone) ? byZone : undefined;
  });
}

const createHcl = (id: string) => cluster.writeFile(`${id}.hcl`, volumeHcl(id, `capacity_min = "2GiB"\n`));

before(async () => {
  await cluster.start(["A", "B"], undefined, ["-csi-capacity-interval=1h"]);
  await cluster.runPluginJob("plugin.hcl", "hostpath", [
    group("controller", "A", "controller"),
    group("node-a", "A", "node", "a"),
    group("node-b", "B", "node", "b"),
  ]);
  await eventually("the controller and both node plugins to be healthy", async () => {
    const p = await plugin().catch(() => undefined);
    return p && p.ControllersHealthy === 1 && p.NodesHealthy === 2 ? p : undefined;
  });
});

after(() => cluster.teardown(passed));

test(
  "capacity: creates go where capacity allows, one that fits nowhere is refused",
  { timeout: 90_000 },
  async () => {
    const first = await capacityWhen("both zones measured", (z) => z.a === 1 * GiB && z.b === 3 * GiB);
    assert.deepEqual(first, { a: 1 * GiB, b: 3 * GiB });
    const status = await cluster.cli(["plugin", "status", "hostpath"]);
    assert.match(status, /Capacity\n.*Segment\s+Available\s+Measured\n.*zone=a\s+1\.0 GiB \(1073741824\)/);

    // 2 GiB fits only in zone b: the create is steered there although it names no topology.
    await cluster.cli(["volume", "create", createHcl("big")]);
    const big = await cluster.getJson<{ ExternalID: string; Topologies: unknown }>("/v1/volume/csi/big");
    assert.deepEqual(big.Topologies, [{ Segments: { zone: "b" } }]);
    await capacityWhen("zone b measured again after the create", (z) => z.b === 1 * GiB && z.a === 1 * GiB);

    // 2 GiB more fits nowhere now: berth refuses before calling the plugin.
    const calls = fs.readdirSync(path.join(cluster.storage, "meta")).length;
    const r = await runCli(["volume", "create", createHcl("huge")], { BERTH_ADDR: cluster.addr });
    assert.notEqual(r.code, 0, "the create is refused");
    assert.match(r.stderr, /no topology segment has capacity for 2147483648 bytes/);
    assert.match(r.stderr, /zone=a has 1073741824 bytes available/);
    assert.match(r.stderr, /zone=b has 1073741824 bytes available/);
    assert.equal(fs.readdirSync(path.join(cluster.storage, "meta")).length, calls, "no storage was created");
    const vols = await cluster.getJson<{ ID: string }[]>("/v1/volumes?type=csi");
    assert.deepEqual(
      vols.map((v) => v.ID),
      ["big"],
      "no volume recorded",
    );
    const orphans = await cluster.cli(["volume", "orphans"]);
    assert.doesNotMatch(orphans, /huge/, "no create intent is left");

    await cluster.cli(["volume", "delete", "big"]);
    await capacityWhen("zone b measured again after the delete", (z) => z.b === 3 * GiB);
    // The plugin tasks stop with their job, so none outlives the agents.
    await cluster.cli(["job", "stop", "-purge", "hostpath"]);
    await eventually("the plugin's allocs to stop", async () => {
      const allocs = await cluster.allocsOf("hostpath").catch(() => []);
      return allocs.every((a) => a.ClientStatus !== "running") ? true : undefined;
    });
    passed = true;
  },
);
