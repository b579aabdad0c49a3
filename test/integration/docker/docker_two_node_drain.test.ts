/**
 * Issue 29's two-node acceptance, as a Nomad operator deploys a CSI driver: one `-server` agent
 * and two `-client` agents (A, B) whose docker drivers share the test's own dockerd, and berth's
 * hostpath plugin shipped as a locally imported image:
 * - the controller as a docker **service** job (on A), the node plugin as a docker **system** job
 *   of one group, unconstrained: the scheduler gives each node its own alloc;
 * - a consumer docker task writing into a single-node-writer CSI volume, placed on B (A ineligible
 *   for the moment), appending its alloc ID to a file in the volume at each start.
 * `berth node drain -enable -yes B` then moves the consumer to A, where it finds the line it wrote
 * on B; B's node plugin stops last — after B's NodeUnpublish, NodeUnstage and the controller's
 * unpublish from B (every plugin instance writes one call log in the shared storage) — and is not
 * replaced. At the end nothing is left: no container, no mount, no process.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { readCallLog } from "../../../src/csi/hostpath/call_log.js";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { eventually, killProcessesUnder, runCli } from "../../helpers/agent_process.js";
import { Dockerd, NODE_IMAGE, SHELL_IMAGE } from "../../helpers/dockerd.js";
import {
  HostpathCluster,
  claimCount,
  line,
  stoppedAtMs,
  volumeHcl,
  type ClaimsView,
} from "../lifecycle/hostpath_cluster.js";

const cluster = new HostpathCluster("berth-dockerdrain-");
const dockerd = new Dockerd(path.join(os.tmpdir(), `berth-dockerd-drain-${process.pid}`));
let passed = false;

const allocsOf = (job: string) => cluster.allocsOf(job);

/** The hostpath plugin as a docker task of `type`, its storage the cluster's, bound in. */
function pluginTask(type: "controller" | "node"): string {
  const args = [
    "/berth/bin/berth",
    "csi-hostpath",
    `--mode=${type}`,
    "--endpoint=${CSI_ENDPOINT}",
    // A node plugin says which node it is (its topology: that node); the controller must not, or
    // the volumes it creates would be reachable only from its own node.
    ...(type === "node" ? ["--node-id=${node.unique.name}"] : []),
    "--state-dir=/srv/hostpath",
    "--attach-required",
    "--call-log=/srv/hostpath/calls.jsonl",
  ];
  return `    task "plugin" {
      driver = "docker"
      config {
        image   = "${NODE_IMAGE}"
        command = "/usr/bin/node"
        args    = ${JSON.stringify(args)}
        volumes = ["${cluster.storage}:/srv/hostpath"]
${type === "node" ? "        privileged = true\n" : ""}      }
      csi_plugin {
        id        = "hostpath"
        type      = "${type}"
        mount_dir = "/csi"
      }
    }`;
}

const controllerJob = () => `job "hostpath-controller" {
  constraint {
    attribute = "\${node.unique.name}"
    value     = "A"
  }
  group "controller" {
${pluginTask("controller")}
  }
}
`;

const nodesJob = () => `job "hostpath-nodes" {
  type = "system"
  group "nodes" {
${pluginTask("node")}
  }
}
`;

const consumerJob = `job "writer" {
  group "writer" {
    volume "data" {
      type            = "csi"
      source          = "shared"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "writer" {
      driver = "docker"
      config {
        image   = "${SHELL_IMAGE}"
        command = "/bin/sh"
        args    = ["-c", "echo \${NOMAD_ALLOC_ID} >> /data/starts.txt && exec sleep 600"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`;

before(async () => {
  await dockerd.start();
  await dockerd.buildShellImage();
  await dockerd.buildNodeImage();
  const config = path.join(dockerd.dir, "docker.hcl");
  fs.writeFileSync(
    config,
    `plugin "docker" {\n  config {\n    endpoint         = "${dockerd.endpoint}"\n    allow_privileged = true\n    volumes {\n      enabled = true\n    }\n  }\n}\n`,
  );
  await cluster.start(["A", "B"], 60_000, [], ["-config", config]);
  fs.mkdirSync(cluster.storage, { recursive: true });
});

after(async () => {
  // dockerd first (it removes the containers), then the agents, their processes and mounts.
  const { mounts } = await dockerd.stop();
  await cluster.teardown(passed);
  assert.deepEqual(mounts, [], "nothing of dockerd left mounted");
});

test(
  "docker plugin, two nodes: the system job runs a node plugin on each; a drain moves the consumer with its data, the node plugin stops last",
  { timeout: 400_000 },
  async () => {
    const nodes = await cluster.getJson<{ ID: string; Name: string }[]>("/v1/nodes");
    const idOf = (name: string) => nodes.find((n) => n.Name === name)!.ID;
    const [a, b] = [idOf("A"), idOf("B")];

    await cluster.cli(["job", "run", cluster.writeFile("controller.hcl", controllerJob())]);
    await cluster.cli(["job", "run", cluster.writeFile("nodes.hcl", nodesJob())]);
    await eventually(
      "the controller and both node plugins to be healthy",
      async () => {
        const p = await cluster
          .getJson<{ ControllersHealthy: number; NodesHealthy: number }>("/v1/plugin/csi/hostpath")
          .catch(() => undefined);
        return p && p.ControllersHealthy === 1 && p.NodesHealthy === 2 ? p : undefined;
      },
      120_000,
    );
    const nodePlugins = await allocsOf("hostpath-nodes");
    assert.deepEqual(
      nodePlugins.map((p) => `${p.Name}@${p.NodeName}:${p.ClientStatus}`).sort(),
      ["hostpath-nodes.nodes[0]@A:running", "hostpath-nodes.nodes[0]@B:running"],
      "one system alloc on each node",
    );

    await cluster.cli(["volume", "create", cluster.writeFile("volume.hcl", volumeHcl("shared"))]);
    const ext = (await cluster.getJson<{ ExternalID: string }>("/v1/volume/csi/shared")).ExternalID;
    const calls = () =>
      readCallLog(path.join(cluster.storage, "calls.jsonl")).filter(
        (c) => c.volume_id === ext && c.code === "OK",
      );

    // The consumer lands on B while A is ineligible.
    await cluster.cli(["node", "eligibility", "-disable", a]);
    await cluster.cli(["job", "run", cluster.writeFile("writer.hcl", consumerJob)]);
    const first = await eventually(
      "the consumer to run on B",
      async () => {
        const [w] = await allocsOf("writer");
        if (w?.ClientStatus === "failed") throw new Error(`writer failed: ${JSON.stringify(w.TaskStates)}`);
        return w?.ClientStatus === "running" ? w : undefined;
      },
      120_000,
    ).catch(async (err: Error) => {
      throw new Error(
        `${err.message}: ${JSON.stringify(await allocsOf("writer"))}\n${await cluster.cli(["job", "status", "writer"])}`,
      );
    });
    assert.equal(first.NodeName, "B");
    const starts = path.join(cluster.storage, "volumes", ext, "starts.txt");
    await eventually("the consumer's line in the volume's storage", async () =>
      fs.existsSync(starts) ? true : undefined,
    );
    await cluster.cli(["node", "eligibility", "-enable", a]);

    const drain = await runCli(
      ["node", "drain", "-enable", "-yes", b],
      { BERTH_ADDR: cluster.addr },
      240_000,
    );
    assert.equal(drain.code, 0, `node drain: ${drain.stderr}\n${drain.stdout}`);
    assert.match(drain.stdout, new RegExp(`Alloc "${first.ID}" marked for migration`));
    assert.match(drain.stdout, new RegExp(`Drain complete for node "${b}"`));

    // The consumer runs on A and finds the line it wrote on B.
    const moved = await eventually(
      "the consumer to run on A",
      async () => {
        const w = (await allocsOf("writer")).find((x) => x.DesiredStatus === "run");
        return w?.ClientStatus === "running" ? w : undefined;
      },
      120_000,
    );
    assert.equal(moved.NodeName, "A");
    await eventually("the second start's line", async () =>
      fs.readFileSync(starts, "utf8").trim().split("\n").length === 2 ? true : undefined,
    );
    assert.deepEqual(fs.readFileSync(starts, "utf8").trim().split("\n"), [first.ID, moved.ID]);

    // B's node plugin stopped after B released the volume, and was not replaced.
    const pluginB = await eventually("B's node plugin to have stopped", async () => {
      const p = (await allocsOf("hostpath-nodes")).find((x) => x.NodeName === "B");
      return p?.ClientStatus === "complete" ? p : undefined;
    });
    const after = await allocsOf("hostpath-nodes");
    assert.equal(after.filter((p) => p.NodeName === "B").length, 1, "the system alloc is not replaced on B");
    assert.equal(after.find((p) => p.NodeName === "A")?.ClientStatus, "running", "A's node plugin runs on");
    const pluginStop = stoppedAtMs(pluginB, "plugin");
    const consumerStop = stoppedAtMs(
      (await allocsOf("writer")).find((w) => w.ID === first.ID)!,
      "writer",
    );
    assert.ok(
      consumerStop < pluginStop,
      `the consumer (${consumerStop}) stopped before B's plugin (${pluginStop})`,
    );
    const onB = calls().filter((c) => c.node_id === "B");
    assert.deepEqual(onB.map(line), [
      "ControllerPublishVolume:B:OK",
      "NodeStageVolume:B:OK",
      "NodePublishVolume:B:OK",
      "NodeUnpublishVolume:B:OK",
      "NodeUnstageVolume:B:OK",
      "ControllerUnpublishVolume:B:OK",
    ]);
    for (const c of onB.slice(3)) {
      assert.ok(
        c.time < pluginStop,
        `${c.method} for B (${c.time}) before B's node plugin stopped (${pluginStop})`,
      );
    }
    assert.deepEqual(
      (await mountsUnder(path.join(cluster.dir, "b"))).filter((m) => m.includes(ext)),
      [],
      "nothing of the volume left mounted on B",
    );

    // Stop everything: no container, no mount, no process left.
    await cluster.cli(["job", "stop", "-purge", "writer"]);
    await eventually("the volume's claims to be released", async () => {
      const v = await cluster.getJson<ClaimsView>("/v1/volume/csi/shared?claims=true");
      return claimCount(v) === 0 ? true : undefined;
    });
    await cluster.cli(["volume", "delete", "shared"]);
    await cluster.cli(["job", "stop", "-purge", "hostpath-nodes"]);
    await cluster.cli(["job", "stop", "-purge", "hostpath-controller"]);
    await eventually(
      "every container to be removed",
      async () => ((await dockerd.containers()).length === 0 ? true : undefined),
      90_000,
    );
    for (const c of cluster.clients.values()) assert.equal(await c.stop(60_000), 0, "client agent exit code");
    assert.equal(await cluster.server.stop(30_000), 0, "server agent exit code");
    assert.deepEqual(await mountsUnder(cluster.dir), [], "nothing is mounted under the test dir");
    assert.deepEqual(killProcessesUnder(cluster.dir), [], "no process outlived the agents");
    passed = true;
  },
);
