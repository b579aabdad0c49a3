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

export function runCli(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BERTH_BIN, ...args], {
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

export class AgentProcess {
  readonly child: ChildProcess;
  private exited: Promise<number | null>;

  constructor(args: string[], logFile: string) {
    const log = fs.openSync(logFile, "a");
    this.child = spawn(process.execPath, [BERTH_BIN, "agent", ...args], {
      cwd: REPO_ROOT,
      stdio: ["ignore", log, log],
      env: { ...process.env, BERTH_LOG_LEVEL: "debug" },
    });
    fs.closeSync(log);
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
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
