/**
 * Poststop tasks run however early an alloc is stopped (Nomad's task coordinator opens the poststop
 * gate once every other task is dead), through a server and a node agent as two processes, the real
 * csi-hostpath plugin and exec tasks that mount its volume:
 * 1. the job is stopped while its prestart task still runs (the main task never started): the
 *    poststop task runs with the volume, reads what prestart wrote, and only then is the volume
 *    unpublished and its claim released;
 * 2. the node agent dies (SIGKILL) while the poststop task of a stopped alloc runs: the restarted
 *    agent restores the stopped alloc, re-attaches to the poststop task and lets it finish (it is
 *    not killed), then releases the volume;
 * 3. the job is stopped while the node agent is down: the restarted agent restores the stopped
 *    alloc, kills its main task, runs the poststop task with the volume, then releases it.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before } from "node:test";
import { crashAgent, eventually } from "../../helpers/agent_process.js";
import {
  allocOf,
  callLog,
  claimCount,
  Cli,
  pluginAndVolume,
  publishedTarget,
  sleepers,
  SplitAgents,
  Steps,
  VOLUME,
  writeSpecs,
  type AllocView,
  type VolumeView,
} from "./restart_fixtures.js";

const SLEEP = 86_407;
const agents = new SplitAgents("poststop-stop");
const { dir, clientDir } = agents;
let cli: Cli;
let pluginAlloc: AllocView;
const steps = new Steps();
const step = steps.step.bind(steps);

/** An exec task mounting the volume at /data, running `script`; `hook` makes it a lifecycle task. */
function task(name: string, script: string, hook?: string): string {
  return `    task "${name}" {
      driver = "exec"
${hook ? `      lifecycle {\n        hook = "${hook}"\n      }\n` : ""}      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(script)}]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
`;
}

function writeJob(name: string, tasks: string): string {
  const file = path.join(dir, `${name}.hcl`);
  fs.writeFileSync(
    file,
    `job "${name}" {
  type = "service"
  group "app" {
    volume "data" {
      type            = "csi"
      source          = "${VOLUME}"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
${tasks}  }
}
`,
  );
  return file;
}

interface FullAlloc extends AllocView {
  TaskStates: Record<
    string,
    {
      State: string;
      Failed: boolean;
      FinishedAt: string | null;
      Events: { Type: string; DisplayMessage: string }[];
    }
  >;
}

async function released(): Promise<void> {
  await eventually(
    "the volume's claim to be released",
    async () => {
      const v = await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
      return v && claimCount(v) === 0 ? v : undefined;
    },
    60_000,
  );
}

/** The volume's NodeUnpublish calls since `from` (call log index), with their end times. */
function unpublishesSince(from: number): number[] {
  return callLog(clientDir, pluginAlloc.ID)
    .slice(from)
    .filter((c) => c.method === "NodeUnpublishVolume")
    .map((c) => c.time);
}

/** The poststop task ran to a successful end, and the volume was unpublished only after it. */
async function assertPoststopThenRelease(job: string, allocId: string, calls: number): Promise<void> {
  const a = await allocOf(cli, job, "complete");
  assert.equal(a.ID, allocId);
  const full = (await cli.get<FullAlloc>(`/v1/allocation/${allocId}`))!;
  const post = full.TaskStates.cleanup!;
  assert.equal(post.State, "dead");
  assert.equal(post.Failed, false, JSON.stringify(post.Events));
  assert.ok(
    post.Events.some((e) => e.Type === "Started"),
    `the poststop task started: ${JSON.stringify(post.Events)}`,
  );
  await released();
  const unpublished = unpublishesSince(calls);
  assert.equal(unpublished.length, 1, "the volume was unpublished once");
  assert.ok(
    unpublished[0]! >= Date.parse(post.FinishedAt!),
    "the volume was unpublished after the poststop task ended",
  );
}

before(async () => {
  await agents.start();
  cli = agents.cli;
  await agents.nodeReady();
  const specs = writeSpecs(dir, SLEEP);
  pluginAlloc = await pluginAndVolume(cli, specs);
});

after(async () => {
  await agents.cleanUp(steps.failed, SLEEP);
});

step("stopped while its prestart task runs: poststop still runs with the volume, then release", async () => {
  const job = writeJob(
    "early",
    task("init", `echo from-init > /data/init; exec sleep ${SLEEP}`, "prestart") +
      task("main", "echo main-ran > /data/main; exec sleep 60") +
      task("cleanup", "cat /data/init; ls /data", "poststop"),
  );
  await cli.run(["job", "run", "-detach", job]);
  const running = await allocOf(cli, "early", "running");
  await eventually("the prestart task to run", async () => (sleepers(SLEEP).length === 1 ? true : undefined));
  const calls = callLog(clientDir, pluginAlloc.ID).length;
  await cli.run(["job", "stop", "-detach", "early"]);

  await assertPoststopThenRelease("early", running.ID, calls);
  assert.deepEqual(sleepers(SLEEP), [], "the prestart task was killed");
  const out = await cli.run(["alloc", "logs", running.ID, "cleanup"]);
  assert.equal(out, "from-init\ninit\n", "poststop saw the volume prestart wrote; main never ran");
  const full = (await cli.get<FullAlloc>(`/v1/allocation/${running.ID}`))!;
  assert.equal(
    full.TaskStates.main!.Events.some((e) => e.Type === "Started"),
    false,
    "the main task never started",
  );
});

step(
  "the agent dies while poststop runs: the restored, stopped alloc lets it finish, then releases",
  async () => {
    const job = writeJob(
      "crash",
      task("main", `exec sleep ${SLEEP}`) +
        task(
          "cleanup",
          "echo waiting; while [ ! -e /data/go ]; do sleep 0.1; done; echo finished",
          "poststop",
        ),
    );
    await cli.run(["job", "run", "-detach", job]);
    const running = await allocOf(cli, "crash", "running");
    await eventually("the main task to run", async () => (sleepers(SLEEP).length === 1 ? true : undefined));
    const calls = callLog(clientDir, pluginAlloc.ID).length;
    await cli.run(["job", "stop", "-detach", "crash"]);
    await eventually("the poststop task to run", async () => {
      const a = await cli.get<FullAlloc>(`/v1/allocation/${running.ID}`);
      return a?.TaskStates.cleanup?.State === "running" ? true : undefined;
    });
    await crashAgent(agents.client!);
    const logged = fs.readFileSync(agents.logFile, "utf8").length;

    agents.startClient();
    // The poststop task waits for this file in its volume: written once the new agent has taken
    // the task over (re-attached to its process), so it is that agent that must let it finish.
    await eventually("the new agent to re-attach to the poststop task", async () =>
      fs
        .readFileSync(agents.logFile, "utf8")
        .slice(logged)
        .includes("task.cleanup: re-attached to running task")
        ? true
        : undefined,
    );
    fs.writeFileSync(path.join(await publishedTarget(clientDir), "go"), "");
    await assertPoststopThenRelease("crash", running.ID, calls);
    assert.equal(await cli.run(["alloc", "logs", running.ID, "cleanup"]), "waiting\nfinished\n");
    const full = (await cli.get<FullAlloc>(`/v1/allocation/${running.ID}`))!;
    const killing = full.TaskStates.cleanup!.Events.filter((e) => e.Type === "Killing");
    assert.deepEqual(killing, [], "the restarted agent did not kill the poststop task");
  },
);

step("stopped while the node agent is down: the restored alloc runs poststop, then releases", async () => {
  const job = writeJob(
    "away",
    task("main", `echo hi > /data/x; exec sleep ${SLEEP}`) + task("cleanup", "cat /data/x", "poststop"),
  );
  await cli.run(["job", "run", "-detach", job]);
  const running = await allocOf(cli, "away", "running");
  await eventually("the main task to run", async () => (sleepers(SLEEP).length === 1 ? true : undefined));
  const calls = callLog(clientDir, pluginAlloc.ID).length;
  await crashAgent(agents.client!);
  await cli.run(["job", "stop", "-detach", "away"]);
  assert.equal(sleepers(SLEEP).length, 1, "the task still runs while its agent is away");

  agents.startClient();
  await agents.nodeReady();
  await assertPoststopThenRelease("away", running.ID, calls);
  assert.deepEqual(sleepers(SLEEP), [], "the main task was killed");
  assert.equal(await cli.run(["alloc", "logs", running.ID, "cleanup"]), "hi\n");
});
