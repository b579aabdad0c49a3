/**
 * The volume lifecycle through a separate controller plugin, with real processes on loopback: one
 * `-server` agent and two `-client` agents (A, B). csi-hostpath runs under raw_exec as a controller
 * on A and a node plugin on each of A and B, all --attach-required and sharing one host state dir
 * (emulated shared storage) and one call log. A single-node-writer volume is used by a writer on B
 * (ControllerPublish runs on A's controller for node B), released in CSI order (NodeUnpublish,
 * NodeUnstage on B, then ControllerUnpublish), and then used by a job on A.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { readCallLog } from "../../../src/csi/hostpath/call_log.js";
import { eventually, getJson, killProcessesUnder } from "../../helpers/agent_process.js";
import { HostpathCluster, claimCount, line, userJob as csiJob, volumeHcl } from "./hostpath_cluster.js";

const cluster = new HostpathCluster("berth-cp-", { attachRequired: true, callLog: true });
let addr: string;
let passed = false;

const callLog = () => cluster.callLog;
const storage = () => cluster.storage;
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
  TaskStates: Record<string, { Events: { Type: string; DisplayMessage: string }[] }> | null;
}

before(async () => {
  await cluster.start(["A", "B"]);
  addr = cluster.addr;
});

after(() => cluster.teardown(passed));

/** A job on `node` using the volume single-node-writer, running `script` in an exec task. */
const userJob = (id: string, type: "service" | "batch", node: string, script: string) =>
  csiJob(id, { source: "shared", script, type, node, operator: "==" });

async function allocsOf(job: string): Promise<AllocView[]> {
  return getJson<AllocView[]>(addr, `/v1/job/${job}/allocations`);
}

function describeAllocs(allocs: AllocView[]): string {
  return JSON.stringify(
    allocs.map((a) => ({
      node: a.NodeName,
      status: a.ClientStatus,
      events: Object.values(a.TaskStates ?? {}).flatMap((t) =>
        t.Events.map((e) => `${e.Type}: ${e.DisplayMessage}`),
      ),
    })),
  );
}

/** Waits until the job's only alloc has `status`; a failed alloc fails the test at once. */
async function allocWith(job: string, status: string, timeoutMs = 60_000): Promise<AllocView> {
  return eventually(
    `${job} to be ${status}`,
    async () => {
      const allocs = await allocsOf(job);
      if (allocs.some((a) => a.ClientStatus === "failed"))
        throw new Error(`${job} failed: ${describeAllocs(allocs)}`);
      return allocs.length === 1 && allocs[0]!.ClientStatus === status ? allocs[0] : undefined;
    },
    timeoutMs,
  );
}

async function noClaims(): Promise<VolumeView> {
  return eventually("the volume's claims to be released", async () => {
    const v = await getJson<VolumeView>(addr, "/v1/volume/csi/shared?claims=true");
    return claimCount(v) === 0 ? v : undefined;
  });
}

test(
  "controller plugin on A publishes for B; release runs in CSI order; the volume then moves to A",
  { timeout: 150_000 },
  async () => {
    await cluster.runPluginJob("plugin.hcl", "hostpath", [
      cluster.pluginGroup("controller", "A", "controller"),
      cluster.pluginGroup("node-a", "A", "node"),
      cluster.pluginGroup("node-b", "B", "node"),
    ]);
    await eventually("the plugin's controller and both node instances to be healthy", async () => {
      const p = await getJson<{
        ControllersHealthy: number;
        NodesHealthy: number;
        ControllerRequired: boolean;
      }>(addr, "/v1/plugin/csi/hostpath").catch(() => undefined);
      return p && p.ControllersHealthy === 1 && p.NodesHealthy === 2 ? p : undefined;
    });
    const plugin = await getJson<{ ControllerRequired: boolean; Controllers: Record<string, unknown> }>(
      addr,
      "/v1/plugin/csi/hostpath",
    );
    assert.equal(plugin.ControllerRequired, true, "a controller with PUBLISH_UNPUBLISH_VOLUME is required");
    const nodes = await getJson<{ ID: string; Name: string }[]>(addr, "/v1/nodes");
    const idOf = (name: string) => nodes.find((n) => n.Name === name)?.ID;
    assert.deepEqual(Object.keys(plugin.Controllers), [idOf("A")], "the controller runs on A only");

    await cli(["volume", "create", writeFile("volume.hcl", volumeHcl("shared"))]);
    const vol = await getJson<VolumeView>(addr, "/v1/volume/csi/shared?claims=true");
    const ext = vol.ExternalID;
    assert.ok(ext, "the controller created the volume");
    const calls = () =>
      readCallLog(callLog()).filter((c) => c.volume_id === ext && c.method !== "CreateVolume");

    // Writer on B: the controller (on A) publishes to B, B's node plugin stages with that context.
    await cli([
      "job",
      "run",
      writeFile(
        "writer.hcl",
        userJob("writer", "service", "B", "echo from-B > /data/owner.txt && exec sleep 600"),
      ),
    ]);
    const writer = await allocWith("writer", "running");
    assert.equal(writer.NodeName, "B");
    const owner = path.join(storage(), "volumes", ext, "owner.txt");
    await eventually("the writer's data to reach the storage", async () =>
      fs.existsSync(owner) ? fs.readFileSync(owner, "utf8").trim() : undefined,
    );
    assert.equal(fs.readFileSync(owner, "utf8").trim(), "from-B");
    assert.deepEqual(
      calls()
        .filter((c) => c.code === "OK")
        .map(line),
      ["ControllerPublishVolume:B:OK", "NodeStageVolume:B:OK", "NodePublishVolume:B:OK"],
    );

    await cli(["job", "stop", "writer"]);
    await noClaims();
    const released = calls()
      .filter((c) => c.code === "OK")
      .map(line);
    assert.deepEqual(
      released.slice(3),
      ["NodeUnpublishVolume:B:OK", "NodeUnstageVolume:B:OK", "ControllerUnpublishVolume:B:OK"],
      `release order (all calls: ${JSON.stringify(calls().map(line))})`,
    );

    // The same volume on A, once B let go of it.
    await cli([
      "job",
      "run",
      writeFile(
        "reader.hcl",
        userJob(
          "reader",
          "batch",
          "A",
          'test "$(cat /data/owner.txt)" = from-B && echo from-A > /data/second.txt',
        ),
      ),
    ]);
    const reader = await allocWith("reader", "complete");
    assert.equal(reader.NodeName, "A");
    assert.equal(
      fs.readFileSync(path.join(storage(), "volumes", ext, "second.txt"), "utf8").trim(),
      "from-A",
    );
    await noClaims();
    const onA = calls()
      .filter((c) => c.code === "OK")
      .map(line)
      .slice(6);
    assert.deepEqual(onA, [
      "ControllerPublishVolume:A:OK",
      "NodeStageVolume:A:OK",
      "NodePublishVolume:A:OK",
      "NodeUnpublishVolume:A:OK",
      "NodeUnstageVolume:A:OK",
      "ControllerUnpublishVolume:A:OK",
    ]);

    // DeleteVolume succeeds only with no attachment left (hostpath refuses while published).
    await cli(["volume", "delete", "shared"]);
    assert.equal(fs.existsSync(path.join(storage(), "volumes", ext)), false);

    await cli(["job", "stop", "-purge", "hostpath"]);
    await cli(["job", "stop", "-purge", "writer"]);
    await cli(["job", "stop", "-purge", "reader"]);
    for (const c of cluster.clients.values()) assert.equal(await c.stop(60_000), 0, "client agent exit code");
    assert.equal(await cluster.server.stop(30_000), 0, "server agent exit code");
    assert.deepEqual(await mountsUnder(cluster.dir), [], "nothing is mounted under the test dir");
    assert.deepEqual(killProcessesUnder(cluster.dir), [], "no process outlived the agents");
    passed = true;
  },
);
