/**
 * A kill -9 of the agent at any step of a task start never runs the task twice (issue 10). A real
 * `berth agent -server -client` is stopped at a step by the drivers' test hook
 * (BERTH_TEST_PAUSE_DIR, src/client/drivers/shared/start_gate.ts), killed with SIGKILL there and
 * started again on the same data dir:
 * 1. the csi_plugin task (csi-hostpath under exec), killed before its handle was persisted: after
 *    the restart exactly one plugin process runs and the plugin is healthy;
 * 2. one job whose tasks each stop at one step — before-persist, before-exec, after-exec — three
 *    exec tasks sharing a CSI volume and three raw_exec tasks, all caught by one crash: after the
 *    restart exactly one copy of each runs (after-exec: the very copy started before the crash,
 *    adopted; the others: none had run before), and after `job stop -purge` no copy runs, nothing
 *    of the allocs is mounted and the volume's claim is released;
 * 3. the plugin job purged: no plugin process left, nothing mounted under the test dir.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { AgentProcess, crashAgent, eventually, freePort } from "../../helpers/agent_process.js";
import {
  claimCount,
  cleanUp,
  Cli,
  keepLogIfFailed,
  sleepers,
  Steps,
  VOLUME,
  writeSpecs,
  type AllocView,
  type VolumeView,
} from "./restart_fixtures.js";

const STEPS = ["before-persist", "before-exec", "after-exec"] as const;
type Step = (typeof STEPS)[number];

/** The app job's tasks: one per driver and step, each running a `sleep` unique to this file. */
const TASKS = (["exec", "raw"] as const).flatMap((driver, d) =>
  STEPS.map((at, i) => ({ name: `${driver}-${at}`, driver, at, sleep: 86_431 + d * 3 + i })),
);

let dir: string;
let dataDir: string;
let pauseDir: string;
let logFile: string;
let args: string[];
let agent: AgentProcess | null = null;
let cli: Cli;
let specs: ReturnType<typeof writeSpecs>;
let appSpec: string;
let nodeId: string;
const steps = new Steps();
const step = steps.step.bind(steps);

/** (Re)starts the agent on the same data dir, with the pause hook armed by `<pauseDir>/at`. */
async function startAgent(): Promise<void> {
  agent = new AgentProcess(args, logFile, { BERTH_TEST_PAUSE_DIR: pauseDir });
  await eventually("the node to be ready", async () => {
    const nodes = await cli.get<{ ID: string; Status: string }[]>("/v1/nodes");
    return nodes?.find((n) => n.Status === "ready");
  });
}

/** Arms the hook: the next start of `task` that reaches step `at` stops there. */
function pauseAt(task: string, at: Step): void {
  fs.writeFileSync(path.join(pauseDir, `${task}.at`), `${at}\n`);
}

/** Disarms the hook (and forgets where starts stopped). */
function disarm(): void {
  for (const f of fs.readdirSync(pauseDir)) fs.rmSync(path.join(pauseDir, f));
}

/** Waits until every task in `tasks` stopped where it was asked to (the hook wrote `<task>.<at>`). */
async function paused(tasks: { name: string; at: Step }[]): Promise<void> {
  await eventually(`${tasks.map((t) => t.name).join(", ")} to stop`, async () =>
    tasks.every((t) => fs.existsSync(path.join(pauseDir, `${t.name}.${t.at}`))) ? true : undefined,
  );
}

/** The argv of every process, by pid. */
function processes(): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      out.set(pid, fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0"));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Processes running the plugin itself (not the shell parent or launcher whose argv names it). */
function pluginCopies(): number[] {
  return [...processes()]
    .filter(([, argv]) => argv.includes("csi-hostpath") && argv.includes(`--node-id=${nodeId}`))
    .filter(([, argv]) => !["sh", "unshare", "chroot", "env"].includes(path.basename(argv[0] ?? "")))
    .map(([pid]) => pid);
}

/** Processes whose command line names any of `words` (e.g. an alloc ID in a task's paths). */
function processesNaming(words: string[]): number[] {
  return [...processes()]
    .filter(([pid, argv]) => pid !== process.pid && words.some((w) => argv.join(" ").includes(w)))
    .map(([pid]) => pid);
}

/** The job's allocs still meant to run, once there are `count` and all are running. */
function runningAllocs(job: string, count: number): Promise<AllocView[]> {
  return eventually(`job ${job}'s ${count} allocs to be running`, async () => {
    const allocs = (await cli.get<AllocView[]>(`/v1/job/${job}/allocations`))?.filter(
      (a) => a.DesiredStatus === "run",
    );
    const failed = allocs?.find((a) => a.ClientStatus === "failed");
    if (failed) throw new Error(`alloc of ${job} failed: ${JSON.stringify(failed.TaskStates)}`);
    return allocs?.length === count && allocs.every((a) => a.ClientStatus === "running") ? allocs : undefined;
  });
}

function writeAppSpec(): string {
  const task = (t: (typeof TASKS)[number]): string =>
    t.driver === "exec"
      ? `    task "${t.name}" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hi > /data/${t.name}; exec sleep ${t.sleep}"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }`
      : `    task "${t.name}" {
      driver = "raw_exec"
      config {
        command = "sleep"
        args    = ["${t.sleep}"]
      }
    }`;
  const file = path.join(dir, "app-steps.hcl");
  fs.writeFileSync(
    file,
    `job "app" {
  type = "service"
  group "exec" {
    volume "data" {
      type            = "csi"
      source          = "${VOLUME}"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
${TASKS.filter((t) => t.driver === "exec")
  .map(task)
  .join("\n")}
  }
  group "raw" {
${TASKS.filter((t) => t.driver === "raw")
  .map(task)
  .join("\n")}
  }
}
`,
  );
  return file;
}

/** The pids running each task's command, by task name. */
function copies(): Record<string, number[]> {
  return Object.fromEntries(TASKS.map((t) => [t.name, sleepers(t.sleep)]));
}

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-task-start-crash-")));
  dataDir = path.join(dir, "data");
  pauseDir = path.join(dir, "pause");
  fs.mkdirSync(pauseDir);
  logFile = path.join(dir, "agent.log");
  const port = await freePort();
  cli = new Cli(`http://127.0.0.1:${port}`);
  args = ["-server", "-client", "-data-dir", dataDir, "-http-addr", `127.0.0.1:${port}`];
  specs = writeSpecs(dir, TASKS[0]!.sleep);
  appSpec = writeAppSpec();
});

after(async () => {
  await crashAgent(agent!).catch(() => undefined);
  keepLogIfFailed(steps.failed, logFile, `berth-task-start-crash-${process.pid}.log`);
  const left = await cleanUp([dir], TASKS[0]!.sleep);
  for (const t of TASKS) for (const pid of sleepers(t.sleep)) process.kill(pid, "SIGKILL");
  if (!steps.failed) assert.deepEqual(left, { pids: [], mounts: [] }, "the tests left nothing behind");
});

step(
  "a plugin task killed before its handle was persisted: one plugin process after the restart",
  async () => {
    pauseAt("plugin", "before-persist");
    await startAgent();
    nodeId = (await cli.get<{ ID: string }[]>("/v1/nodes"))![0]!.ID;
    await cli.run(["job", "run", specs.plugin]);
    await paused([{ name: "plugin", at: "before-persist" }]);
    const heldBefore = pluginCopies();
    await crashAgent(agent!);
    disarm();
    await startAgent();
    await eventually("plugin hostpath to be healthy", async () => {
      const p = await cli.get<{ NodesHealthy: number; ControllersHealthy: number }>(
        "/v1/plugin/csi/hostpath",
      );
      return p && p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? p : undefined;
    });
    assert.equal(pluginCopies().length, 1, `one plugin process: ${JSON.stringify(pluginCopies())}`);
    assert.deepEqual(heldBefore, [], "the held start had not run the plugin");
    await cli.run(["volume", "create", specs.volume]);
  },
);

step(
  "kill -9 with tasks at every step: exactly one copy of each; job stop -purge leaves nothing",
  async () => {
    for (const t of TASKS) pauseAt(t.name, t.at);
    await cli.run(["job", "run", appSpec]);
    await paused(TASKS);
    // After "go" the command runs: wait for it, so the crash hits a running start not yet returned.
    const ranBefore = await eventually("the after-exec tasks' commands to run", async () => {
      const c = copies();
      return TASKS.every((t) => t.at !== "after-exec" || c[t.name]!.length > 0) ? c : undefined;
    });
    await crashAgent(agent!);
    disarm();
    await startAgent();
    const allocs = await runningAllocs("app", 2);
    const running = await eventually("every task's command to run", async () => {
      const c = copies();
      return TASKS.every((t) => c[t.name]!.length > 0) ? c : undefined;
    });
    for (const t of TASKS) {
      const now = running[t.name]!;
      assert.equal(now.length, 1, `one copy of ${t.name}, killed at ${t.at}: ${JSON.stringify(now)}`);
      if (t.at === "after-exec") {
        assert.deepEqual(now, ranBefore[t.name], `${t.name}: the copy started before the crash was adopted`);
      } else {
        assert.deepEqual(ranBefore[t.name], [], `${t.name}: no command ran before its handle was persisted`);
      }
    }

    await cli.run(["job", "stop", "-purge", "app"]);
    const ids = allocs.map((a) => a.ID);
    await eventually("nothing of the app to run or be mounted, its claim released", async () => {
      const v = await cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`);
      const mounted = (await mountsUnder(dataDir)).filter((m) => ids.some((id) => m.includes(id)));
      const left = [...Object.values(copies()).flat(), ...processesNaming(ids)];
      return v && claimCount(v) === 0 && mounted.length === 0 && left.length === 0 ? true : undefined;
    });
  },
);

step("purging the plugin job leaves no plugin process and nothing mounted", async () => {
  await cli.run(["volume", "delete", VOLUME]);
  await cli.run(["job", "stop", "-purge", "plugin"]);
  await eventually("the plugin to be gone", async () => (pluginCopies().length === 0 ? true : undefined));
  assert.equal(await agent!.stop(30_000), 0, "the agent exits 0");
  assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
});
