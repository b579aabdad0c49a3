/**
 * Draining a node with real processes on loopback: one `-server` agent and two `-client` agents
 * (A, B). csi-hostpath runs under raw_exec: the node plugins as a system job (one group per node),
 * the controller as a service job on A, all --attach-required and sharing one host state dir and
 * one call log. A writer using a single-node-writer volume runs on B; `berth node drain -enable
 * -yes` on B (through the CLI, following the drain to its end) stops the writer, lets B's node
 * plugin unmount (NodeUnpublish, NodeUnstage) and the controller detach the volume from B, and only
 * then stops B's node plugin; the writer runs again on A with its data, and B ends ineligible.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { readCallLog } from "../../../src/csi/hostpath/call_log.js";
import { eventually, getJson, killProcessesUnder, runCli } from "../../helpers/agent_process.js";
import {
  HostpathCluster,
  claimCount,
  line,
  stoppedAtMs,
  userJob,
  volumeHcl,
  type ClaimsView,
} from "./hostpath_cluster.js";

const cluster = new HostpathCluster("berth-drain-", { attachRequired: true, callLog: true });
let passed = false;

interface NodeView {
  ID: string;
  Name: string;
  Drain: boolean;
  SchedulingEligibility: string;
  DrainStrategy: unknown;
  LastDrain: { Status: string } | null;
}

before(() => cluster.start(["A", "B"]));
after(() => cluster.teardown(passed));

const allocsOf = (job: string) => cluster.allocsOf(job);

test(
  "node drain: the writer on B moves to A; B's node plugin stops only after B unmounted the volume",
  { timeout: 180_000 },
  async () => {
    await cluster.cli([
      "job",
      "run",
      cluster.writeFile(
        "nodes.hcl",
        `job "hostpath-nodes" {\n  type = "system"\n${cluster.pluginGroup("node-a", "A", "node")}\n${cluster.pluginGroup("node-b", "B", "node")}\n}\n`,
      ),
    ]);
    await cluster.runPluginJob("controller.hcl", "hostpath-controller", [
      cluster.pluginGroup("controller", "A", "controller"),
    ]);
    await eventually("the controller and both node plugins to be healthy", async () => {
      const p = await cluster
        .getJson<{ ControllersHealthy: number; NodesHealthy: number }>("/v1/plugin/csi/hostpath")
        .catch(() => undefined);
      return p && p.ControllersHealthy === 1 && p.NodesHealthy === 2 ? p : undefined;
    });
    const nodes = await cluster.getJson<NodeView[]>("/v1/nodes");
    const idOf = (name: string) => nodes.find((n) => n.Name === name)!.ID;
    const [a, b] = [idOf("A"), idOf("B")];

    await cluster.cli(["volume", "create", cluster.writeFile("volume.hcl", volumeHcl("shared"))]);
    const ext = (await cluster.getJson<{ ExternalID: string }>("/v1/volume/csi/shared?claims=true"))
      .ExternalID;
    const calls = () => readCallLog(cluster.callLog).filter((c) => c.volume_id === ext && c.code === "OK");

    // The writer lands on B while A is ineligible; it appends one line per start.
    await cluster.cli(["node", "eligibility", "-disable", a]);
    await cluster.cli([
      "job",
      "run",
      cluster.writeFile(
        "writer.hcl",
        userJob("writer", { source: "shared", script: "echo started >> /data/starts.txt && exec sleep 600" }),
      ),
    ]);
    const first = await eventually("the writer to run on B", async () => {
      const [w] = await allocsOf("writer");
      if (w?.ClientStatus === "failed") throw new Error(`writer failed: ${JSON.stringify(w.TaskStates)}`);
      return w?.ClientStatus === "running" ? w : undefined;
    });
    assert.equal(first.NodeName, "B");
    const starts = path.join(cluster.storage, "volumes", ext, "starts.txt");
    await eventually("the writer's line to reach the storage", async () =>
      fs.existsSync(starts) ? true : undefined,
    );
    assert.match(
      await cluster.cli(["node", "eligibility", "-enable", a.slice(0, 8)]),
      /eligible for scheduling/,
    );

    // Drain B through the CLI, following it to the end.
    const drain = await runCli(
      ["node", "drain", "-enable", "-yes", b.slice(0, 8)],
      { BERTH_ADDR: cluster.addr },
      150_000,
    );
    assert.equal(drain.code, 0, `node drain: ${drain.stderr}\n${drain.stdout}`);
    assert.match(drain.stdout, new RegExp(`Node "${b}" drain strategy set`));
    assert.match(drain.stdout, new RegExp(`Alloc "${first.ID}" marked for migration`));
    assert.match(drain.stdout, new RegExp(`Drain complete for node "${b}"`));

    const plugins = await allocsOf("hostpath-nodes");
    const pluginB = plugins.find((p) => p.Name === "hostpath-nodes.node-b[0]");
    assert.ok(pluginB, JSON.stringify(plugins));
    assert.equal(pluginB.DesiredTransition?.Migrate, true);
    await eventually("B's node plugin to have stopped", async () => {
      const [p] = (await allocsOf("hostpath-nodes")).filter((x) => x.ID === pluginB.ID);
      return p?.ClientStatus === "complete" ? p : undefined;
    });
    const stoppedPlugin = (await allocsOf("hostpath-nodes")).find((x) => x.ID === pluginB.ID)!;
    assert.equal(
      plugins.filter((p) => p.Name === "hostpath-nodes.node-b[0]").length,
      1,
      "the system alloc is not replaced",
    );
    const pluginStop = stoppedAtMs(stoppedPlugin, "plugin");
    const onB = calls().filter((c) => c.node_id === "B");
    const at = (method: string) => onB.find((c) => c.method === method)?.time;
    for (const method of ["NodeUnpublishVolume", "NodeUnstageVolume", "ControllerUnpublishVolume"]) {
      const t = at(method);
      assert.ok(t !== undefined, `${method} for B in ${JSON.stringify(onB.map(line))}`);
      assert.ok(t < pluginStop, `${method} for B (${t}) before B's node plugin stopped (${pluginStop})`);
    }
    assert.deepEqual(onB.map(line), [
      "ControllerPublishVolume:B:OK",
      "NodeStageVolume:B:OK",
      "NodePublishVolume:B:OK",
      "NodeUnpublishVolume:B:OK",
      "NodeUnstageVolume:B:OK",
      "ControllerUnpublishVolume:B:OK",
    ]);

    // The writer runs again on A, with the data it wrote on B.
    const moved = await eventually("the writer to run on A", async () => {
      const w = (await allocsOf("writer")).find((x) => x.DesiredStatus === "run");
      return w?.ClientStatus === "running" ? w : undefined;
    });
    assert.equal(moved.NodeName, "A");
    await eventually("the second start's line", async () =>
      fs.readFileSync(starts, "utf8").trim().split("\n").length === 2 ? true : undefined,
    );

    const drained = await cluster.getJson<NodeView>(`/v1/node/${b}`);
    assert.deepEqual(
      [drained.Drain, drained.DrainStrategy, drained.SchedulingEligibility, drained.LastDrain?.Status],
      [false, null, "ineligible", "complete"],
    );
    const status = await cluster.cli(["node", "status", b]);
    assert.match(status, /^Drain +?= false$/m);
    assert.match(status, /^Eligibility +?= ineligible$/m);

    await cluster.cli(["job", "stop", "-purge", "writer"]);
    await eventually("the volume's claims to be released", async () => {
      const v = await getJson<ClaimsView>(cluster.addr, "/v1/volume/csi/shared?claims=true");
      return claimCount(v) === 0 ? true : undefined;
    });
    await cluster.cli(["volume", "delete", "shared"]);
    await cluster.cli(["job", "stop", "-purge", "hostpath-nodes"]);
    await cluster.cli(["job", "stop", "-purge", "hostpath-controller"]);
    for (const c of cluster.clients.values()) assert.equal(await c.stop(60_000), 0, "client agent exit code");
    assert.equal(await cluster.server.stop(30_000), 0, "server agent exit code");
    assert.deepEqual(await mountsUnder(cluster.dir), [], "nothing is mounted under the test dir");
    assert.deepEqual(killProcessesUnder(cluster.dir), [], "no process outlived the agents");
    passed = true;
  },
);
