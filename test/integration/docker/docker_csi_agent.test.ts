/**
 * CSI on docker through real processes: a `berth agent -server -client` whose docker driver talks
 * to the test's own dockerd (plugin "docker" config: its socket, privileged allowed), running
 * berth's hostpath plugin as a privileged docker task from a locally imported node image, and a
 * consumer docker task (a shell image) that writes into a CSI volume:
 * 1. the consumer's write lands in the volume, and its output is in `alloc logs`;
 * 2. `kill -9` of the agent with both containers running: after the restart the same containers
 *    are re-attached (no second container), the CSI mounts keep their mount IDs, the consumer is
 *    not started again;
 * 3. `alloc exec` runs a command in the consumer's container through the Engine's exec API;
 * 4. stopping the jobs removes every container and unmounts everything.
 * After all, pass or fail: agent killed, dockerd stopped (containers removed), nothing mounted.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { AgentProcess, crashAgent, eventually, freePort, runCli } from "../../helpers/agent_process.js";
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

const SLEEP = 86_402;
let dir: string;
let dataDir: string;
let logFile: string;
let args: string[];
let agent: AgentProcess | null = null;
let dockerd: Dockerd;
let cli: Cli;
let appAlloc: AllocView;
const steps = new Steps();
const step = steps.step.bind(steps);

function startAgent(): void {
  agent = new AgentProcess(args, logFile);
}

async function nodeReady(): Promise<void> {
  await eventually("the node to be ready", async () => {
    const nodes = await cli.get<{ Status: string }[]>("/v1/nodes");
    return nodes?.some((n) => n.Status === "ready") ? true : undefined;
  });
}

async function pluginHealthy(): Promise<void> {
  await eventually(
    "plugin hostpath to be healthy",
    async () => {
      const p = await cli.get<{ NodesHealthy: number; ControllersHealthy: number }>(
        "/v1/plugin/csi/hostpath",
      );
      return p && p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? p : undefined;
    },
    90_000,
  );
}

/** The running containers, by task name (the label berth gives them). */
async function containersByTask(): Promise<Record<string, string[]>> {
  const out = await dockerd.docker([
    "ps",
    "-a",
    "--no-trunc",
    "--format",
    '{{.ID}} {{.Label "com.hashicorp.nomad.task_name"}} {{.State}}',
  ]);
  const byTask: Record<string, string[]> = {};
  for (const line of out.split("\n").filter(Boolean)) {
    const [id, task, state] = line.split(" ");
    (byTask[task!] ??= []).push(`${id}:${state}`);
  }
  return byTask;
}

function writeSpecs(): { plugin: string; volume: string; app: string } {
  const plugin = path.join(dir, "plugin.hcl");
  fs.writeFileSync(
    plugin,
    `job "plugin" {
  group "plugin" {
    task "plugin" {
      driver = "docker"
      config {
        image      = "${NODE_IMAGE}"
        command    = "/usr/bin/node"
        args       = ["/berth/bin/berth", "csi-hostpath", "--node-id=\${node.unique.id}", "--state-dir=\${NOMAD_TASK_DIR}/hostpath"]
        privileged = true
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
  const volume = path.join(dir, "volume.hcl");
  fs.writeFileSync(
    volume,
    `id        = "vol1"
name      = "vol1"
type      = "csi"
plugin_id = "hostpath"
capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
`,
  );
  const app = path.join(dir, "app.hcl");
  fs.writeFileSync(
    app,
    `job "app" {
  group "app" {
    volume "data" {
      type            = "csi"
      source          = "vol1"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "app" {
      driver = "docker"
      config {
        image   = "${SHELL_IMAGE}"
        command = "/bin/sh"
        args    = ["-c", "echo hi > /data/x && echo app up && exec sleep ${SLEEP}"]
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
  return { plugin, volume, app };
}

let specs: ReturnType<typeof writeSpecs>;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-dockercsi-")));
  dataDir = path.join(dir, "data");
  logFile = path.join(dir, "agent.log");
  dockerd = new Dockerd(path.join(os.tmpdir(), `berth-dockerd-${process.pid}`));
  await dockerd.start();
  await dockerd.buildShellImage();
  await dockerd.buildNodeImage();
  const config = path.join(dir, "docker.hcl");
  fs.writeFileSync(
    config,
    `plugin "docker" {
  config {
    endpoint         = "${dockerd.endpoint}"
    allow_privileged = true
  }
}
`,
  );
  const port = await freePort();
  cli = new Cli(`http://127.0.0.1:${port}`);
  args = ["-server", "-client", "-data-dir", dataDir, "-http-addr", `127.0.0.1:${port}`, "-config", config];
  specs = writeSpecs();
  startAgent();
  await nodeReady();
});

after(async () => {
  if (agent) await crashAgent(agent).catch(() => undefined);
  keepLogIfFailed(steps.failed, logFile, `berth-docker-csi-${process.pid}.log`);
  // dockerd first (it removes the containers); cleanUp kills what mentions `dir` and unmounts.
  const { mounts } = await dockerd.stop();
  const left = await cleanUp([dir], SLEEP);
  assert.deepEqual(mounts, [], "nothing of dockerd left mounted");
  if (!steps.failed) assert.deepEqual(left.mounts, [], "nothing left mounted under the data dir");
});

step(
  "the node fingerprints docker; the plugin and the consumer run as containers, the write in the volume",
  async () => {
    const nodes = await cli.get<{ ID: string }[]>("/v1/nodes");
    const node = await cli.get<{
      Drivers: Record<string, { Healthy: boolean }>;
      Attributes: Record<string, string>;
    }>(`/v1/node/${nodes![0]!.ID}`);
    assert.equal(node!.Drivers.docker?.Healthy, true);
    assert.match(node!.Attributes["driver.docker.version"] ?? "", /^\d+\./);
    await cli.run(["job", "run", specs.plugin]);
    await pluginHealthy();
    await cli.run(["volume", "create", specs.volume]);
    await cli.run(["job", "run", specs.app]);
    appAlloc = await allocOf(cli, "app", "running", 90_000);
    const target = await publishedTarget(dataDir);
    await eventually("the app's write in the volume", async () =>
      fs.existsSync(path.join(target, "x")) ? true : undefined,
    );
    assert.equal(fs.readFileSync(path.join(target, "x"), "utf8"), "hi\n");
    const logs = await eventually("the app's output in alloc logs", async () => {
      const r = await runCli(["alloc", "logs", appAlloc.ID, "app"], cli.env);
      return r.code === 0 && r.stdout.includes("app up") ? r.stdout : undefined;
    });
    assert.equal(logs, "app up\n");
    const byTask = await containersByTask();
    assert.equal(byTask.plugin?.length, 1, JSON.stringify(byTask));
    assert.equal(byTask.app?.length, 1, JSON.stringify(byTask));
  },
);

step("kill -9 and restart: the same containers re-attached, no second one, the CSI mounts kept", async () => {
  const target = await publishedTarget(dataDir);
  const mountId = mountIdAt(target);
  const before = await containersByTask();
  await crashAgent(agent!);
  assert.deepEqual(await containersByTask(), before, "the containers outlive the agent");
  startAgent();
  await nodeReady();
  await pluginHealthy();
  await eventually("the agent to re-attach the app", async () =>
    fs.readFileSync(logFile, "utf8").includes("volume still mounted, reusing it") ? true : undefined,
  );
  // Give a wrong restore (a second container, a restart, a remount) time to show.
  await new Promise((r) => setTimeout(r, 3000));
  assert.deepEqual(await containersByTask(), before, "the same containers, running, and no other");
  assert.equal(mountIdAt(target), mountId, "the same CSI mount");
  const app = await allocOf(cli, "app", "running");
  const started = app.TaskStates.app!.Events.filter((e) => e.Type === "Started");
  assert.equal(started.length, 1, "the app was not started again");
  const logs = await runCli(["alloc", "logs", appAlloc.ID, "app"], cli.env);
  assert.equal(logs.stdout, "app up\n", "no line written twice by the re-attached log stream");
});

step("alloc exec runs in the container through the Engine", async () => {
  const r = await runCli(["alloc", "exec", "-task", "app", appAlloc.ID, "/bin/cat", "/data/x"], cli.env);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "hi\n");
});

step("stopping the jobs removes every container and unmounts the volume", async () => {
  await cli.run(["job", "stop", "app"]);
  await allocOf(cli, "app", "complete", 90_000);
  // The volume is released (NodeUnpublish, NodeUnstage) before its plugin goes.
  await eventually("every claim to be released", async () => {
    const v = await cli.get<VolumeView>("/v1/volume/csi/vol1?claims=true");
    return v && claimCount(v) === 0 ? v : undefined;
  });
  await cli.run(["volume", "delete", "vol1"]);
  await cli.run(["job", "stop", "plugin"]);
  await allocOf(cli, "plugin", "complete", 90_000);
  await eventually("every container to be removed", async () =>
    (await dockerd.containers()).length === 0 ? true : undefined,
  );
  await eventually("nothing mounted below the alloc dirs", async () =>
    (await mountsUnder(dataDir)).length === 0 ? true : undefined,
  );
});
