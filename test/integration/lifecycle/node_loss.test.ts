/**
 * Node loss with real processes on loopback: a `-server` agent (short heartbeat TTL) and `-client`
 * agents A and B. csi-hostpath runs under raw_exec, --attach-required, with one shared state dir
 * and call log: the controller on A, node plugins on B (started first, so the writer lands on B) and
 * then on A. A service job holds a single-node-writer volume on B; B's agent and every process it
 * started are SIGKILLed. B is marked down, its alloc lost, the claim released without the node step
 * (ControllerUnpublishVolume for B on A's controller, no NodeUnpublish/NodeUnstage from B), and the
 * replacement runs on A with the same volume.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { readCallLog } from "../../../src/csi/hostpath/call_log.js";
import {
  crashAgent,
  eventually,
  getJson,
  killProcessGroupsUnder,
  killProcessesUnder,
} from "../../helpers/agent_process.js";
import { HostpathCluster, claimCount, line, userJob, volumeHcl } from "./hostpath_cluster.js";

const cluster = new HostpathCluster("berth-nl-", { attachRequired: true, callLog: true });
let addr: string;
let passed = false;

const callLog = () => cluster.callLog;
const storage = () => cluster.storage;
const cli = (args: string[]) => cluster.cli(args);
const writeFile = (name: string, text: string) => cluster.writeFile(name, text);

interface VolumeView {
  ExternalID: string;
  ReadAllocs: Record<string, unknown> | null;
  WriteAllocs: Record<string, unknown> | null;
  PastClaims: Record<string, unknown>;
}
interface AllocView {
  ID: string;
  NodeName: string;
  ClientStatus: string;
  DesiredStatus: string;
}

before(async () => {
  // Not shorter: a client's first heartbeat comes TTL/3 after start with its default TTL of 10s
  // (it learns the server's TTL only from the answer), so a TTL under ~4s marks fresh nodes down.
  await cluster.start(["A", "B"], 30_000, ["-heartbeat-ttl=5s"]);
  addr = cluster.addr;
});

after(() => cluster.teardown(passed, killProcessGroupsUnder));

const writerJob = userJob("writer", {
  source: "shared",
  script: "echo started >> /data/starts.txt && exec sleep 600",
});

const allocsOf = (job: string) => getJson<AllocView[]>(addr, `/v1/job/${job}/allocations`);

async function pluginHealthy(nodes: number): Promise<void> {
  await eventually(`the controller and ${nodes} node plugin(s) to be healthy`, async () => {
    const p = await getJson<{ ControllersHealthy: number; NodesHealthy: number }>(
      addr,
      "/v1/plugin/csi/hostpath",
    ).catch(() => undefined);
    return p && p.ControllersHealthy === 1 && p.NodesHealthy >= nodes ? p : undefined;
  });
}

test(
  "kill -9 node B: B goes down, its claim is released without the node step, the writer moves to A",
  { timeout: 90_000 },
  async () => {
    await cluster.runPluginJob("plugin.hcl", "hostpath", [
      cluster.pluginGroup("controller", "A", "controller"),
      cluster.pluginGroup("node-b", "B", "node"),
    ]);
    await pluginHealthy(1);
    await cli(["volume", "create", writeFile("volume.hcl", volumeHcl("shared"))]);
    const ext = (await getJson<VolumeView>(addr, "/v1/volume/csi/shared?claims=true")).ExternalID;
    const calls = () =>
      readCallLog(callLog())
        .filter((c) => c.volume_id === ext && c.method !== "CreateVolume")
        .map(line);

    await cli(["job", "run", writeFile("writer.hcl", writerJob)]);
    const first = await eventually("the writer to run on B", async () => {
      const allocs = await allocsOf("writer");
      return allocs.length === 1 && allocs[0]!.ClientStatus === "running" ? allocs[0] : undefined;
    });
    assert.equal(first.NodeName, "B", "only B runs a node plugin yet");
    const starts = path.join(storage(), "volumes", ext, "starts.txt");
    await eventually("B's write to reach the storage", async () =>
      fs.existsSync(starts) ? true : undefined,
    );

    // Now A gets a node plugin too, so it can take the writer over.
    await cluster.runPluginJob("plugin-a.hcl", "hostpath-a", [cluster.pluginGroup("node-a", "A", "node")]);
    await pluginHealthy(2);
    const before = calls().length;

    const b = cluster.clients.get("B")!;
    await crashAgent(b);
    const killed = killProcessGroupsUnder(path.join(cluster.dir, "b"));
    assert.ok(killed.length > 0, "B's task processes were found and killed");
    // A lost machine's mounts go with it; B's would otherwise outlive the test. (A lazy unmount of
    // B's plugin dir, a shared self-bind, takes the mounts below it along.)
    for (const m of (await mountsUnder(path.join(cluster.dir, "b"))).reverse()) {
      try {
        execFileSync("umount", ["-l", m]);
      } catch {
        /* already gone */
      }
    }

    await eventually(
      "B to be marked down",
      async () => {
        const nodes = await getJson<{ Name: string; Status: string }[]>(addr, "/v1/nodes");
        return nodes.find((n) => n.Name === "B")?.Status === "down" ? true : undefined;
      },
      15_000,
    );
    const lost = (await allocsOf("writer")).find((a) => a.ID === first.ID);
    assert.deepEqual([lost?.ClientStatus, lost?.DesiredStatus], ["lost", "stop"]);

    const replacement = await eventually(
      "the replacement to run on A",
      async () =>
        (await allocsOf("writer")).find(
          (a) => a.ID !== first.ID && a.ClientStatus === "running" && a.NodeName === "A",
        ),
      30_000,
    );
    assert.ok(replacement);
    await eventually("the replacement's write", async () =>
      fs.readFileSync(starts, "utf8").trim().split("\n").length === 2 ? true : undefined,
    );
    const after = calls()
      .slice(before)
      .filter((c) => c.endsWith(":OK"));
    assert.deepEqual(
      after,
      [
        "ControllerUnpublishVolume:B:OK",
        "ControllerPublishVolume:A:OK",
        "NodeStageVolume:A:OK",
        "NodePublishVolume:A:OK",
      ],
      `B's claim was released without B's node step (all calls: ${JSON.stringify(calls())})`,
    );

    await cli(["job", "stop", "writer"]);
    await eventually("the volume's claims to be released", async () => {
      const v = await getJson<VolumeView>(addr, "/v1/volume/csi/shared?claims=true");
      return claimCount(v) === 0 ? v : undefined;
    });
    await cli(["job", "stop", "-purge", "hostpath"]);
    await cli(["job", "stop", "-purge", "hostpath-a"]);
    assert.equal(await cluster.clients.get("A")!.stop(60_000), 0, "A's agent exit code");
    assert.equal(await cluster.server.stop(30_000), 0, "server agent exit code");
    assert.deepEqual(await mountsUnder(cluster.dir), [], "nothing is mounted under the test dir");
    assert.deepEqual(killProcessesUnder(cluster.dir), [], "no process outlived the agents");
    passed = true;
  },
);
