/**
 * Issue 10, "a departed controller poisons its plugin for a day", with real processes on loopback:
 * a `-server` agent (short heartbeat TTL) and `-client` agents A and B. csi-hostpath runs under
 * raw_exec with one shared state dir and call log: the controller on A advertises attach/detach
 * (--attach-required), the node plugin runs on B. A writer on B holds a single-node-writer volume
 * (published by A's controller). Then A's agent and every process it started are SIGKILLed: A is
 * marked down, and its controller's "supports attach/detach" no longer gates the plugin. The
 * writer's release does not drop the detach A's controller owes the volume: B unmounts, and the
 * claim waits — `volume status` says it waits for a controller of the plugin to run
 * ControllerUnpublishVolume — until a replacement controller (rescheduled on B) runs exactly one
 * ControllerUnpublishVolume; then a new writer on B claims, is published through the replacement
 * and mounts the volume, minutes before A's record would be collected.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { readCallLog } from "../../../src/csi/hostpath/call_log.js";
import { hostpathPluginGroup, type HostpathPluginOptions } from "../../builders/hostpath_plugin_job.js";
import {
  crashAgent,
  eventually,
  getJson,
  killProcessGroupsUnder,
  killProcessesUnder,
} from "../../helpers/agent_process.js";
import { HostpathCluster, claimCount, line, userJob, volumeHcl } from "./hostpath_cluster.js";

const cluster = new HostpathCluster("berth-dc-", { callLog: true });
let addr: string;
let passed = false;

const cli = (args: string[]) => cluster.cli(args);
const writeFile = (name: string, text: string) => cluster.writeFile(name, text);

interface VolumeView {
  ExternalID: string;
  Schedulable: boolean;
  ReadAllocs: Record<string, unknown> | null;
  WriteAllocs: Record<string, unknown> | null;
  PastClaims: Record<string, unknown>;
}
interface AllocView {
  ID: string;
  NodeName: string;
  ClientStatus: string;
}
interface PluginView {
  ControllerRequired: boolean;
  ControllersHealthy: number;
  NodesHealthy: number;
}

before(async () => {
  // As in node_loss.test.ts: a TTL under ~4s would mark fresh nodes down before their first beat.
  await cluster.start(["A", "B"], 30_000, ["-heartbeat-ttl=5s"]);
  addr = cluster.addr;
});

after(() => cluster.teardown(passed, killProcessGroupsUnder));

const writer = (id: string) =>
  userJob(id, { source: "shared", script: `echo ${id} >> /data/writers.txt && exec sleep 600` });

const allocsOf = (job: string) => getJson<AllocView[]>(addr, `/v1/job/${job}/allocations`);
const plugin = () => getJson<PluginView>(addr, "/v1/plugin/csi/hostpath");

async function running(job: string): Promise<AllocView> {
  return eventually(
    `${job} to run`,
    async () => {
      const allocs = await allocsOf(job);
      if (allocs.some((a) => a.ClientStatus === "failed")) throw new Error(`${job} failed`);
      return allocs.length === 1 && allocs[0]!.ClientStatus === "running" ? allocs[0] : undefined;
    },
    30_000,
  );
}

async function noClaims(): Promise<VolumeView> {
  return eventually(
    "the volume's claims to be released",
    async () => {
      const v = await getJson<VolumeView>(addr, "/v1/volume/csi/shared?claims=true");
      return claimCount(v) === 0 ? v : undefined;
    },
    20_000,
  );
}

test(
  "kill -9 the controller's node: new claims go on without it, a release it owes a detach waits for a replacement",
  { timeout: 120_000 },
  async () => {
    const storage = cluster.storage;
    const controllerOpts: HostpathPluginOptions = {
      driver: "raw_exec",
      type: "controller",
      args: [
        "--mode=controller",
        "--attach-required",
        `--state-dir=${storage}`,
        `--call-log=${cluster.callLog}`,
      ],
    };
    const controller = hostpathPluginGroup("controller", { ...controllerOpts, node: "A" });
    await cluster.runPluginJob("plugin.hcl", "hostpath", [
      controller,
      cluster.pluginGroup("node-b", "B", "node"),
    ]);
    await eventually("the controller and B's node plugin to be healthy", async () => {
      const p = await plugin().catch(() => undefined);
      return p && p.ControllersHealthy === 1 && p.NodesHealthy === 1 ? p : undefined;
    });
    assert.equal((await plugin()).ControllerRequired, true, "A's controller attaches volumes");
    await cli(["volume", "create", writeFile("volume.hcl", volumeHcl("shared"))]);
    const ext = (await getJson<VolumeView>(addr, "/v1/volume/csi/shared?claims=true")).ExternalID;
    const calls = () =>
      readCallLog(cluster.callLog)
        .filter((c) => c.volume_id === ext && c.method !== "CreateVolume" && c.code === "OK")
        .map(line);

    await cli(["job", "run", writeFile("w1.hcl", writer("w1"))]);
    assert.equal((await running("w1")).NodeName, "B");
    assert.deepEqual(calls(), [
      "ControllerPublishVolume:B:OK",
      "NodeStageVolume:B:OK",
      "NodePublishVolume:B:OK",
    ]);

    // A departs: its agent and the controller it ran are gone at once, as with a lost machine.
    await crashAgent(cluster.clients.get("A")!);
    assert.ok(killProcessGroupsUnder(path.join(cluster.dir, "a")).length > 0, "A's controller was killed");
    for (const m of (await mountsUnder(path.join(cluster.dir, "a"))).reverse()) {
      try {
        execFileSync("umount", ["-l", m]);
      } catch {
        /* already gone */
      }
    }
    await eventually(
      "A to be marked down",
      async () => {
        const nodes = await getJson<{ Name: string; Status: string }[]>(addr, "/v1/nodes");
        return nodes.find((n) => n.Name === "A")?.Status === "down" ? true : undefined;
      },
      20_000,
    );
    // The release does not drop the detach: B unmounts, and the claim waits for a controller.
    await cli(["job", "stop", "w1"]);
    const status = await eventually(
      "the release to say what it waits for",
      async () => {
        const out = await cli(["volume", "status", "shared"]);
        return /waiting for a controller of plugin "hostpath" to run ControllerUnpublishVolume/.test(out)
          ? out
          : undefined;
      },
      30_000,
    );
    assert.match(status, /Releases/);
    assert.match(status, /node-detached/);
    const held = await getJson<VolumeView>(addr, "/v1/volume/csi/shared?claims=true");
    assert.equal(claimCount(held), 1, "the claim is still held while the detach is owed");
    assert.deepEqual(calls().slice(3), ["NodeUnpublishVolume:B:OK", "NodeUnstageVolume:B:OK"]);

    // The controller is rescheduled on B: it runs the one ControllerUnpublishVolume owed.
    await cluster.runPluginJob("controller2.hcl", "hostpath-controller", [
      hostpathPluginGroup("controller", { ...controllerOpts, node: "B" }),
    ]);
    const freed = await noClaims();
    assert.equal(freed.Schedulable, true);
    assert.deepEqual(calls().slice(3), [
      "NodeUnpublishVolume:B:OK",
      "NodeUnstageVolume:B:OK",
      "ControllerUnpublishVolume:B:OK",
    ]);
    // And a new writer on B claims (published through the replacement) and mounts the volume.
    await cli(["job", "run", writeFile("w2.hcl", writer("w2"))]);
    assert.equal((await running("w2")).NodeName, "B");
    const written = path.join(storage, "volumes", ext, "writers.txt");
    await eventually("w2's write to reach the storage", async () =>
      fs.existsSync(written) && fs.readFileSync(written, "utf8").includes("w2") ? true : undefined,
    );
    assert.deepEqual(calls().slice(6), [
      "ControllerPublishVolume:B:OK",
      "NodeStageVolume:B:OK",
      "NodePublishVolume:B:OK",
    ]);
    const unpublishes = readCallLog(cluster.callLog).filter(
      (c) => c.volume_id === ext && c.method === "ControllerUnpublishVolume",
    );
    assert.equal(unpublishes.length, 1, "exactly one ControllerUnpublishVolume reached the plugin");
    // A's entry says nothing; the replacement speaks for the plugin.
    const p = await plugin();
    assert.deepEqual([p.ControllersHealthy, p.ControllerRequired], [1, true]);

    await cli(["job", "stop", "w2"]);
    await noClaims();
    await cli(["job", "stop", "-purge", "hostpath-controller"]);
    await cli(["job", "stop", "-purge", "hostpath"]);
    await cli(["job", "stop", "-purge", "w1"]);
    await cli(["job", "stop", "-purge", "w2"]);
    // A graceful agent stop leaves its tasks running (they outlive the agent): B must have stopped
    // the purged plugin allocs, and torn down the plugin dir they shared, before it stops.
    await eventually("B to stop the purged allocs and unmount their plugin dir", async () =>
      (await mountsUnder(cluster.dir)).length === 0 ? true : undefined,
    );
    assert.equal(await cluster.clients.get("B")!.stop(60_000), 0, "B's agent exit code");
    assert.equal(await cluster.server.stop(30_000), 0, "server agent exit code");
    assert.deepEqual(await mountsUnder(cluster.dir), [], "nothing is mounted under the test dir");
    assert.deepEqual(killProcessesUnder(cluster.dir), [], "no process outlived the agents");
    passed = true;
  },
);
