/**
 * Shared pieces of the agent-restart tests: job and volume files written into the test's temp dir
 * (the hostpath plugin with a call log in its alloc's shared dir, and a service job whose exec task
 * keeps running with the volume mounted), CLI/HTTP helpers, mount identities from
 * /proc/self/mountinfo, and a cleanup that leaves no process or mount behind even after a failure.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { readCallLog, type CallRecord } from "../../../src/csi/hostpath/call_log.js";
import { hostpathPluginJob } from "../../builders/hostpath_plugin_job.js";
import {
  AgentProcess,
  crashAgent,
  eventually,
  freePort,
  killProcessGroupsUnder,
  runCli,
} from "../../helpers/agent_process.js";

/** The volume the app job claims, the app's task name and its `sleep` (unique per test file). */
export const VOLUME = "vol1";

/**
 * `pluginRestart`: a `restart { … }` block for the plugin task (e.g. a short delay, so a killed
 * plugin comes back quickly); `accessMode`: the volume's and the app's access mode.
 */
export function writeSpecs(
  dir: string,
  sleepSeconds: number,
  opts: { pluginRestart?: string; accessMode?: string } = {},
): { plugin: string; volume: string; app: string } {
  const accessMode = opts.accessMode ?? "single-node-writer";
  const plugin = path.join(dir, "plugin.hcl");
  fs.writeFileSync(
    plugin,
    hostpathPluginJob({
      jobType: "service",
      args: [
        "--node-id=${node.unique.id}",
        "--state-dir=${NOMAD_TASK_DIR}/hostpath",
        "--call-log=/alloc/calls.jsonl",
      ],
      ...(opts.pluginRestart ? { taskExtra: opts.pluginRestart } : {}),
    }),
  );
  const volume = path.join(dir, "volume.hcl");
  fs.writeFileSync(
    volume,
    `id        = "${VOLUME}"
name      = "${VOLUME}"
type      = "csi"
plugin_id = "hostpath"
capability {
  access_mode     = "${accessMode}"
  attachment_mode = "file-system"
}
`,
  );
  const app = path.join(dir, "app.hcl");
  fs.writeFileSync(
    app,
    `job "app" {
  type = "service"
  group "app" {
    volume "data" {
      type            = "csi"
      source          = "${VOLUME}"
      access_mode     = "${accessMode}"
      attachment_mode = "file-system"
    }
    task "app" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hi > /data/x; exec sleep ${sleepSeconds}"]
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

export class Cli {
  constructor(readonly addr: string) {}

  get env(): Record<string, string> {
    return { BERTH_ADDR: this.addr };
  }

  async run(args: string[]): Promise<string> {
    const r = await runCli(args, this.env);
    assert.equal(r.code, 0, `berth ${args.join(" ")} failed: ${r.stderr}\n${r.stdout}`);
    return r.stdout;
  }

  async get<T>(route: string): Promise<T | undefined> {
    const res = await fetch(`${this.addr}${route}`).catch(() => undefined);
    if (!res?.ok) return undefined;
    return (await res.json()) as T;
  }
}

export interface AllocView {
  ID: string;
  ClientStatus: string;
  DesiredStatus: string;
  TaskStates: Record<string, { State: string; Events: { Type: string; DisplayMessage: string }[] }>;
}

export interface VolumeView {
  ModifyIndex: number;
  /** The plugin's ID of the volume: what the call log records as volume_id. */
  ExternalID: string;
  WriteAllocs: Record<string, unknown>;
  ReadAllocs: Record<string, unknown>;
  WriteClaims: Record<string, unknown>;
  ReadClaims: Record<string, unknown>;
  PastClaims: Record<string, unknown>;
}

export function claimCount(v: VolumeView): number {
  return [v.ReadAllocs, v.WriteAllocs, v.ReadClaims, v.WriteClaims, v.PastClaims].reduce(
    // A map left out (no ?claims=true) throws rather than counting as no claim.
    (n, c) => n + Object.keys(c).length,
    0,
  );
}

/** The job's only alloc once its status is `status` (fails fast when it failed). */
export function allocOf(cli: Cli, job: string, status: string, timeoutMs = 60_000): Promise<AllocView> {
  return eventually(
    `job ${job}'s alloc to be ${status}`,
    async () => {
      const allocs = await cli.get<AllocView[]>(`/v1/job/${job}/allocations`);
      const a = allocs?.[0];
      if (a?.ClientStatus === "failed" && status !== "failed") {
        throw new Error(`alloc of ${job} failed: ${JSON.stringify(a.TaskStates)}`);
      }
      return a?.ClientStatus === status ? a : undefined;
    },
    timeoutMs,
  );
}

/** Starts the plugin job, waits until it is healthy, creates the volume. Returns the plugin alloc. */
export async function pluginAndVolume(
  cli: Cli,
  specs: { plugin: string; volume: string },
): Promise<AllocView> {
  await cli.run(["job", "run", specs.plugin]);
  await eventually(
    "plugin hostpath to be healthy",
    async () => {
      const p = await cli.get<{ NodesHealthy: number; ControllersHealthy: number }>(
        "/v1/plugin/csi/hostpath",
      );
      return p && p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? p : undefined;
    },
    60_000,
  );
  await cli.run(["volume", "create", specs.volume]);
  return allocOf(cli, "plugin", "running");
}

export function callLog(dataDir: string, pluginAllocId: string): CallRecord[] {
  return readCallLog(path.join(dataDir, "alloc", pluginAllocId, "alloc", "calls.jsonl"));
}

/** The methods called, optionally only those for one volume (by its ExternalID). */
export function methodsOf(calls: CallRecord[], externalId?: string): string[] {
  return calls.filter((c) => externalId === undefined || c.volume_id === externalId).map((c) => c.method);
}

/** The mount ID (field 1 of /proc/self/mountinfo) of the topmost mount at `p`, or null (also when `p` is gone). */
export function mountIdAt(p: string): string | null {
  if (!fs.existsSync(p)) return null;
  const target = fs.realpathSync(p);
  let id: string | null = null;
  for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const f = line.split(" ");
    if (f[4] === target) id = f[0]!;
  }
  return id;
}

/** The fields of the mounts at `mountPoint` in a mountinfo file (mount points in its process's view). */
export function mountsAt(mountinfo: string, mountPoint: string): string[][] {
  return fs
    .readFileSync(mountinfo, "utf8")
    .split("\n")
    .map((l) => l.split(" "))
    .filter((f) => f[4] === mountPoint);
}

/** The filesystem type of a mountinfo line's fields (the field after the "-" separator). */
export function fsTypeOf(fields: string[] | undefined): string | undefined {
  return fields?.[fields.indexOf("-", 6) + 1];
}

/**
 * A task's private copy of a dead FUSE mount is dead too, while a copy of hostpath's bind would
 * still show the volume and look like a new mount: stands a marked tmpfs over the task's `/data`,
 * in the task's own mount namespace, as that dead copy.
 */
export function standInStaleCopy(taskPid: number): void {
  const taskRoot = fs.readlinkSync(`/proc/${taskPid}/root`);
  execFileSync("nsenter", [
    "--target",
    String(taskPid),
    "--mount",
    "--",
    "/bin/sh",
    "-c",
    'mount -t tmpfs -o size=1m berth-stale "$1" && echo stale > "$1/x"',
    "sh",
    `${taskRoot}/data`,
  ]);
  assert.equal(fsTypeOf(mountsAt(`/proc/${taskPid}/mountinfo`, "/data").at(-1)), "tmpfs");
  assert.equal(fs.readFileSync(`/proc/${taskPid}/root/data/x`, "utf8"), "stale\n");
}

/**
 * The running task got the new mount in its own namespace: its /data is one mount again, a copy of
 * the publish at `target` (same device and root), showing what is written there now.
 */
export async function assertTaskSeesNewMount(taskPid: number, target: string): Promise<void> {
  const view = `/proc/${taskPid}/root/data`;
  await eventually(
    "the task to see the volume again",
    async () => (fs.readFileSync(path.join(view, "x"), "utf8") === "hi\n" ? true : undefined),
    30_000,
  );
  const fresh = mountsAt(`/proc/${taskPid}/mountinfo`, "/data");
  assert.equal(fresh.length, 1, `one mount at the task's /data: ${JSON.stringify(fresh)}`);
  assert.notEqual(fsTypeOf(fresh[0]), "tmpfs", "the task's /data mount is not the dead copy it had");
  const published = mountsAt("/proc/self/mountinfo", target).at(-1)!;
  assert.deepEqual(fresh[0]!.slice(2, 4), published.slice(2, 4), "a mount of the new publish");
  fs.writeFileSync(path.join(target, "after-remount"), "new\n");
  assert.equal(fs.readFileSync(path.join(view, "after-remount"), "utf8"), "new\n");
}

/** The pids of processes running exactly `sleep <seconds>` (the app task, found by its argv). */
export function sleepers(seconds: number): number[] {
  const want = `sleep\0${seconds}\0`;
  const out: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, "utf8") === want) out.push(pid);
    } catch {
      /* gone */
    }
  }
  return out;
}

/** The app's published target on the host: the only per-alloc mount under the data dir. */
export async function publishedTarget(dataDir: string): Promise<string> {
  return eventually("the app's volume to be published", async () => {
    const m = (await mountsUnder(dataDir)).filter((p) => p.includes(`${path.sep}per-alloc${path.sep}`));
    return m.length === 1 ? m[0] : undefined;
  });
}

/**
 * After a test, pass or fail: kills every process started under `dirs` (process groups, so the
 * chrooted plugin and the app's `sleep` go too) and any stray `sleep <seconds>`, lazily unmounts
 * what is left (deepest first), and removes the dirs. Returns what it had to clean up.
 */
export async function cleanUp(
  dirs: string[],
  sleepSeconds: number,
): Promise<{ pids: number[]; mounts: string[] }> {
  const pids = dirs.flatMap((d) => killProcessGroupsUnder(d));
  for (const pid of sleepers(sleepSeconds)) {
    try {
      process.kill(pid, "SIGKILL");
      pids.push(pid);
    } catch {
      /* gone */
    }
  }
  const mounts: string[] = [];
  for (const d of dirs) {
    for (const m of await mountsUnder(d)) {
      mounts.push(m);
      try {
        execFileSync("umount", ["-l", m]);
      } catch {
        /* already gone */
      }
    }
  }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  return { pids, mounts };
}

/**
 * Tests of one file that share agents and run in order. A failing step marks the file failed, so
 * its `after` can keep the agents' log (see keepLogIfFailed).
 */
export class Steps {
  failed = false;

  step(name: string, fn: () => Promise<void>): void {
    test(name, async () => {
      try {
        await fn();
      } catch (err) {
        this.failed = true;
        throw err;
      }
    });
  }
}

/** When `failed`, copies `logFile` to `<tmp>/<keptName>` and says so on stderr. */
export function keepLogIfFailed(failed: boolean, logFile: string, keptName: string): void {
  if (!failed || !fs.existsSync(logFile)) return;
  const kept = path.join(os.tmpdir(), keptName);
  fs.copyFileSync(logFile, kept);
  process.stderr.write(`a test failed; the agent log is kept in ${kept}\n`);
}

/**
 * A server and a node agent as two processes (`-server -data-dir <dir>/server` plus
 * `serverFlags`, `-client -servers=… -data-dir <dir>/client` plus `clientFlags`), one log file, in
 * a fresh temp dir.
 */
export class SplitAgents {
  readonly dir: string;
  readonly clientDir: string;
  readonly logFile: string;
  server: AgentProcess | null = null;
  client: AgentProcess | null = null;
  cli!: Cli;
  private clientArgs: string[] = [];

  constructor(
    private readonly name: string,
    private readonly clientFlags: string[] = [],
    private readonly serverFlags: string[] = [],
  ) {
    this.dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `berth-${name}-`)));
    this.clientDir = path.join(this.dir, "client");
    this.logFile = path.join(this.dir, "agents.log");
  }

  /** Starts the server, waits until it answers, then starts the node agent. */
  async start(): Promise<void> {
    const port = await freePort();
    this.cli = new Cli(`http://127.0.0.1:${port}`);
    this.server = new AgentProcess(
      [
        "-server",
        "-data-dir",
        path.join(this.dir, "server"),
        "-http-addr",
        `127.0.0.1:${port}`,
        ...this.serverFlags,
      ],
      this.logFile,
    );
    this.clientArgs = [
      "-client",
      "-data-dir",
      this.clientDir,
      `-servers=127.0.0.1:${port}`,
      ...this.clientFlags,
    ];
    await eventually("the server to answer", () => this.cli.get<unknown[]>("/v1/nodes"));
    this.startClient();
  }

  /** (Re)starts the node agent on the same data dir. */
  startClient(): void {
    this.client = new AgentProcess(this.clientArgs, this.logFile);
  }

  async nodeReady(): Promise<void> {
    await eventually("the node to be ready", async () => {
      const nodes = await this.cli.get<{ Status: string }[]>("/v1/nodes");
      return nodes?.some((n) => n.Status === "ready") ? true : undefined;
    });
  }

  /** After the tests, pass or fail: both agents killed, the log kept on failure, nothing left. */
  async cleanUp(failed: boolean, sleepSeconds: number): Promise<void> {
    await crashAgent(this.client!).catch(() => undefined);
    await crashAgent(this.server!).catch(() => undefined);
    keepLogIfFailed(failed, this.logFile, `berth-${this.name}-${process.pid}.log`);
    await cleanUp([this.dir], sleepSeconds);
  }
}
