/**
 * Runs a real `berth agent` process and the real CLI for end-to-end tests, through the same
 * `bin/berth` launcher an operator uses.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const BERTH_BIN = path.join(REPO_ROOT, "bin", "berth");

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real CLI. `berth job run` is sent with `-detach` unless `opts.monitor`: the monitor
 * follows the job's deployment to its end (Nomad's default `min_healthy_time` is 10 s), which only
 * slows a test that polls for what it needs; the tests of the monitor itself ask for it.
 */
export function runCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
  opts: { monitor?: boolean } = {},
): Promise<CliResult> {
  const detach = !opts.monitor && args[0] === "job" && args[1] === "run" && !args.includes("-detach");
  const argv = detach ? ["job", "run", "-detach", ...args.slice(2)] : args;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BERTH_BIN, ...argv], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`berth ${args.join(" ")} timed out`));
    }, timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** The agent config that enables raw_exec, in Nomad's syntax (raw_exec is off by default). */
export const RAW_EXEC_CONFIG = 'plugin "raw_exec" {\n  config {\n    enabled = true\n  }\n}\n';

/** Writes RAW_EXEC_CONFIG to `file` and returns `-config FILE` for an agent's arguments. */
export function rawExecConfigArgs(file: string): string[] {
  fs.writeFileSync(file, RAW_EXEC_CONFIG);
  return ["-config", file];
}

export interface AgentProcessOptions {
  /**
   * A node agent started without -dev gets a config file that enables raw_exec (written beside its
   * log file as `<log>.raw_exec.hcl`, passed before the test's own -config files, which may still
   * disable it): most tests run raw_exec tasks, and the agent ships it disabled, as Nomad does.
   * false: the agent's own default (a test of that default).
   */
  rawExec?: boolean;
  /** The agent's open-file limit (soft and hard), set by util-linux `prlimit` before it starts. */
  nofile?: number;
  /** The `berth` launcher to run (another release's, in the upgrade test); this repo's by default. */
  bin?: string;
}

export class AgentProcess {
  readonly child: ChildProcess;
  private exited: Promise<number | null>;

  /** `env`: added to this process's environment for the agent (e.g. a test hook's variable). */
  constructor(
    args: string[],
    logFile: string,
    env: Record<string, string> = {},
    opts: AgentProcessOptions = {},
  ) {
    if (opts.rawExec !== false && args.includes("-client") && !args.includes("-dev")) {
      args = [...rawExecConfigArgs(logFile.replace(/(\.log)?$/, ".raw_exec.hcl")), ...args];
    }
    const log = fs.openSync(logFile, "a");
    const command = [process.execPath, opts.bin ?? BERTH_BIN, "agent", ...args];
    if (opts.nofile !== undefined) command.unshift("prlimit", `--nofile=${opts.nofile}:${opts.nofile}`, "--");
    this.child = spawn(command[0]!, command.slice(1), {
      cwd: REPO_ROOT,
      stdio: ["ignore", log, log],
      env: { ...process.env, BERTH_LOG_LEVEL: "debug", ...env },
    });
    fs.closeSync(log);
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  /** The agent's process ID (for a benchmark reading its CPU time). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends SIGINT and waits up to timeoutMs for a clean exit; returns the exit code. */
  async stop(timeoutMs = 60_000): Promise<number | null> {
    if (!this.running) return this.exited;
    this.child.kill("SIGINT");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  kill(): void {
    if (this.running) this.child.kill("SIGKILL");
  }
}

/** Waits until the CSI plugin's node side is healthy on at least one node (as the API reports it). */
export function pluginHealthy(addr: string, pluginId = "hostpath", timeoutMs = 60_000): Promise<true> {
  return eventually(
    `plugin ${pluginId} to be healthy`,
    async () => {
      const p = await getJson<{ NodesHealthy: number }>(addr, `/v1/plugin/csi/${pluginId}`).catch(() => null);
      return p && p.NodesHealthy >= 1 ? true : undefined;
    },
    timeoutMs,
  );
}

/** Polls `fn` until it returns a non-undefined value or the time runs out. */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ""}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Every file below dir whose name is `name`. */
export function findFiles(dir: string, name: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === name) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/**
 * SIGKILLs every process whose command line mentions `dir` (task processes an agent started there
 * are detached from it, so killing the agent alone would leave them running). Returns the pids.
 */
export function killProcessesUnder(dir: string): number[] {
  const killed: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (!cmdline.includes(dir)) continue;
    try {
      process.kill(pid, "SIGKILL");
      killed.push(pid);
    } catch {
      /* already gone */
    }
  }
  return killed;
}

/**
 * SIGKILLs the whole process group of every process whose command line mentions `dir`, then the
 * process itself. Task processes are session leaders (the drivers start them detached), and what a
 * task execs (e.g. `sleep`, or a plugin chrooted into its task dir) no longer names `dir`, so
 * killing by command line alone would leave it running. Returns the pids matched.
 */
export function killProcessGroupsUnder(dir: string): number[] {
  const ownGroup = pgidOf(fs.readFileSync("/proc/self/stat", "utf8"));
  const matched: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let cmdline: string;
    let stat: string;
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue;
    }
    if (!cmdline.includes(dir)) continue;
    matched.push(pid);
    const pgid = pgidOf(stat);
    // An agent shares this test's group (it is not started detached): kill only the process then.
    for (const target of pgid > 1 && pgid !== ownGroup ? [-pgid, pid] : [pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
  }
  return matched;
}

/** SIGKILLs an agent (no graceful stop: the crash case) and waits until the process is gone. */
export async function crashAgent(agent: AgentProcess): Promise<void> {
  if (!agent.running) return;
  const gone = new Promise<void>((resolve) => agent.child.once("exit", () => resolve()));
  agent.kill();
  await gone;
}

/** The process group id in a /proc/<pid>/stat line (field 5). */
function pgidOf(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

/** GET `base + route` as JSON; throws with the status and body on a non-2xx answer. */
export async function getJson<T>(base: string, route: string): Promise<T> {
  const res = await fetch(base + route);
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${route}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** The last `lines` lines of a log file ("" when it does not exist), for failure reports. */
export function logTail(file: string, lines = 80): string {
  try {
    return fs.readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/**
 * One `-server` agent and `-client` agents named after `nodeNames`, each with its own data dir under
 * `dir` (`server`, and the node name lower-cased) and log file `<name>.log`, on a free loopback
 * port (`serverArgs` are added to the server's flags). Resolves once every node is registered and ready. On failure the processes keep running:
 * the caller's cleanup (`killProcessesUnder(dir)`) ends them, as it does after a passing test.
 */
export async function startCluster(
  dir: string,
  nodeNames: string[],
  timeoutMs = 30_000,
  serverArgs: string[] = [],
  clientArgs: string[] = [],
): Promise<{ addr: string; server: AgentProcess; clients: Map<string, AgentProcess> }> {
  const port = await freePort();
  const addr = `http://127.0.0.1:${port}`;
  const server = new AgentProcess(
    ["-server", "-data-dir", path.join(dir, "server"), "-http-addr", `127.0.0.1:${port}`, ...serverArgs],
    path.join(dir, "server.log"),
  );
  const clients = new Map<string, AgentProcess>();
  for (const name of nodeNames) {
    const lower = name.toLowerCase();
    clients.set(
      name,
      new AgentProcess(
        [
          "-client",
          "-data-dir",
          path.join(dir, lower),
          `-servers=127.0.0.1:${port}`,
          `-node-name=${name}`,
          ...clientArgs,
        ],
        path.join(dir, `${lower}.log`),
      ),
    );
  }
  try {
    await eventually(
      `nodes ${nodeNames.join(", ")} to be ready`,
      async () => {
        const nodes = await getJson<{ Name: string; Status: string }[]>(addr, "/v1/nodes");
        const ready = new Set(nodes.filter((n) => n.Status === "ready").map((n) => n.Name));
        return nodeNames.every((n) => ready.has(n)) ? true : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    // Say why: a server that exited at start (port taken, bad build) shows it in its log.
    const state = server.running
      ? "running"
      : `exited (${String(server.child.exitCode ?? server.child.signalCode)})`;
    throw new Error(
      `${(err as Error).message}; server ${state}; server log:\n${logTail(path.join(dir, "server.log"), 30)}`,
      { cause: err },
    );
  }
  return { addr, server, clients };
}

/**
 * A real `berth agent -dev` with the example's config (examples/hostpath/agent.hcl gives the node
 * the `hostpath-data` host volume examples/hostpath/plugin.hcl keeps its volumes in), state in
 * `dataDir`, log in `logFile`, on a free loopback port. Resolves once its node is ready.
 */
export async function startExampleDevAgent(
  dataDir: string,
  logFile: string,
  timeoutMs = 30_000,
): Promise<{ agent: AgentProcess; addr: string }> {
  const port = await freePort();
  const addr = `http://127.0.0.1:${port}`;
  const agent = new AgentProcess(
    [
      "-dev",
      "-config",
      path.join(REPO_ROOT, "examples/hostpath/agent.hcl"),
      "-data-dir",
      dataDir,
      "-http-addr",
      `127.0.0.1:${port}`,
    ],
    logFile,
  );
  await eventually(
    "the dev node to be ready",
    async () => {
      const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
      return nodes.some((n) => n.Status === "ready") ? true : undefined;
    },
    timeoutMs,
  );
  return { agent, addr };
}
