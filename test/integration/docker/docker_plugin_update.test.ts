/**
 * Issue 29's plugin-update acceptance with the plugin as a docker task: a consumer docker task
 * appends a counter line to its CSI volume every 100 ms while the hostpath plugin job (a
 * privileged docker task from a locally imported node image, its storage a host path bound in
 * with `volumes`) is updated twice — a new plugin container starts while the old one stops.
 * Throughout, the consumer's publish target stays the same mount and the counter keeps growing;
 * at the end every line 1..N is in the volume (no gap, no line lost), and stopping everything
 * leaves no container and nothing mounted.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { AgentProcess, crashAgent, eventually, freePort } from "../../helpers/agent_process.js";
import { Dockerd, NODE_IMAGE, SHELL_IMAGE } from "../../helpers/dockerd.js";
import {
  allocOf,
  claimCount,
  Cli,
  cleanUp,
  keepLogIfFailed,
  mountIdAt,
  publishedTarget,
  Steps,
  type AllocView,
  type VolumeView,
} from "../restart/restart_fixtures.js";

const SLEEP = 86_403;
let dir: string;
let dataDir: string;
let storage: string;
let logFile: string;
let agent: AgentProcess | null = null;
let dockerd: Dockerd;
let cli: Cli;
const steps = new Steps();
const step = steps.step.bind(steps);

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

/** Plugin generation `g`: one argument changes (--max-volumes), so each run is a job update. */
function pluginJob(g: number): string {
  return write(
    `plugin-${g}.hcl`,
    `job "plugin" {
  group "plugin" {
    task "plugin" {
      driver = "docker"
      config {
        image      = "${NODE_IMAGE}"
        command    = "/usr/bin/node"
        args       = ["/berth/bin/berth", "csi-hostpath", "--node-id=\${node.unique.id}", "--state-dir=/srv/hostpath", "--max-volumes=${1000 + g}"]
        privileged = true
        volumes    = ["${storage}:/srv/hostpath"]
      }
      csi_plugin {
        id        = "hostpath"
        type      = "monolith"
        mount_dir = "/csi"
      }
    }
  }
}
`,
  );
}

async function pluginAllocs(): Promise<AllocView[]> {
  return (await cli.get<AllocView[]>("/v1/job/plugin/allocations")) ?? [];
}

/** Runs plugin generation `g`; resolves once exactly one plugin alloc runs and the plugin is healthy. */
async function runPlugin(g: number): Promise<void> {
  const before = new Set((await pluginAllocs()).map((a) => a.ID));
  await cli.run(["job", "run", pluginJob(g)]);
  await eventually(
    `plugin generation ${g} to replace the old one`,
    async () => {
      const allocs = await pluginAllocs();
      const failed = allocs.find((a) => a.ClientStatus === "failed");
      if (failed) throw new Error(`plugin alloc failed: ${JSON.stringify(failed.TaskStates)}`);
      const live = allocs.filter((a) => a.ClientStatus === "running" || a.ClientStatus === "pending");
      const fresh = live.filter((a) => !before.has(a.ID) && a.ClientStatus === "running");
      return live.length === 1 && fresh.length === 1 ? true : undefined;
    },
    120_000,
  );
  await eventually(
    "plugin hostpath to be healthy",
    async () => {
      const p = await cli.get<{ NodesHealthy: number }>("/v1/plugin/csi/hostpath");
      return p && p.NodesHealthy >= 1 ? p : undefined;
    },
    90_000,
  );
}

/** The lines the consumer appended, as numbers. */
function lines(file: string): number[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => Number(l));
}

/** The counter grows past `from` in the volume's own storage: the consumer still writes there. */
function grows(file: string, from: number): Promise<number> {
  return eventually(
    `the counter in ${file} to grow past ${from}`,
    async () => {
      const n = lines(file).at(-1) ?? 0;
      return n > from + 5 ? n : undefined;
    },
    60_000,
    100,
  );
}

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-dockerupd-")));
  dataDir = path.join(dir, "data");
  storage = path.join(dir, "storage");
  fs.mkdirSync(storage);
  logFile = path.join(dir, "agent.log");
  dockerd = new Dockerd(path.join(os.tmpdir(), `berth-dockerd-upd-${process.pid}`));
  await dockerd.start();
  await dockerd.buildShellImage();
  await dockerd.buildNodeImage();
  const config = write(
    "docker.hcl",
    `plugin "docker" {
  config {
    endpoint         = "${dockerd.endpoint}"
    allow_privileged = true
    volumes {
      enabled = true
    }
  }
}
`,
  );
  const port = await freePort();
  cli = new Cli(`http://127.0.0.1:${port}`);
  const args = ["-server", "-client", "-data-dir", dataDir, "-http-addr", `127.0.0.1:${port}`];
  agent = new AgentProcess([...args, "-config", config], logFile);
  await eventually("the node to be ready", async () => {
    const nodes = await cli.get<{ Status: string }[]>("/v1/nodes");
    return nodes?.some((n) => n.Status === "ready") ? true : undefined;
  });
});

after(async () => {
  if (agent) await crashAgent(agent).catch(() => undefined);
  keepLogIfFailed(steps.failed, logFile, `berth-docker-update-${process.pid}.log`);
  const { mounts } = await dockerd.stop();
  const left = await cleanUp([dir], SLEEP);
  assert.deepEqual(mounts, [], "nothing of dockerd left mounted");
  if (!steps.failed) assert.deepEqual(left.mounts, [], "nothing left mounted under the test dir");
});

step(
  "plugin job updated twice as a docker task: the consumer keeps writing, every line in the volume",
  async () => {
    await runPlugin(0);
    const spec = write(
      "volume.hcl",
      'id = "shared"\nname = "shared"\ntype = "csi"\nplugin_id = "hostpath"\ncapability {\n  access_mode = "multi-node-multi-writer"\n  attachment_mode = "file-system"\n}\n',
    );
    await cli.run(["volume", "create", spec]);
    const vol = (await cli.get<VolumeView>("/v1/volume/csi/shared?claims=true"))!;
    const file = path.join(storage, "volumes", vol.ExternalID, "lines");
    const consumer = write(
      "consumer.hcl",
      `job "consumer" {
  group "g" {
    volume "data" {
      type            = "csi"
      source          = "shared"
      access_mode     = "multi-node-multi-writer"
      attachment_mode = "file-system"
    }
    task "t" {
      driver = "docker"
      config {
        image   = "${SHELL_IMAGE}"
        command = "/bin/sh"
        args    = ["-c", "i=0; while :; do i=$((i+1)); echo $i >> /data/lines; sleep 0.1; done"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`,
    );
    await cli.run(["job", "run", consumer]);
    await allocOf(cli, "consumer", "running", 90_000);
    const target = await publishedTarget(dataDir);
    const mountId = mountIdAt(target);
    assert.ok(mountId, "the publish target is a mount");
    let last = await grows(file, 0);
    for (const g of [1, 2]) {
      await runPlugin(g);
      last = await grows(file, last);
      assert.equal(mountIdAt(target), mountId, `update ${g}: the consumer's mount stayed`);
    }
    await cli.run(["job", "stop", "consumer"]);
    await allocOf(cli, "consumer", "complete", 90_000);
    const all = lines(file);
    assert.ok(all.length > last - 1, `at least ${last} lines`);
    assert.deepEqual(
      all,
      all.map((_, i) => i + 1),
      "every line 1..N in the volume, in order: no gap",
    );
    // The volume is released (NodeUnpublish, NodeUnstage) before its plugin goes.
    await eventually("every claim to be released", async () => {
      const v = await cli.get<VolumeView>("/v1/volume/csi/shared?claims=true");
      return v && claimCount(v) === 0 ? v : undefined;
    });
    await cli.run(["volume", "delete", "shared"]);
    await cli.run(["job", "stop", "plugin"]);
    await eventually("every container to be removed", async () =>
      (await dockerd.containers()).length === 0 ? true : undefined,
    );
    await eventually("nothing mounted below the alloc dirs", async () =>
      (await mountsUnder(dataDir)).length === 0 ? true : undefined,
    );
  },
);
