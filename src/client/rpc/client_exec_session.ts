/**
 * Interactive `alloc exec` sessions on this node (the ClientAlloc.Exec* calls, rpc_exec.ts): the
 * server opens a session, forwards what the user types and the terminal's size, and polls the
 * output until the command has ended and everything it wrote has been fetched.
 *
 * A TTY session runs the command on a pseudo-terminal allocated by util-linux `script -q -e -c
 * <cmd> /dev/null` (Node has no pty of its own; the choice is argued in the README's design
 * notes). For an exec-driver task `script` itself runs inside the task (its mount namespace, root
 * and working directory), so the terminal comes from the task's own devpts and `tty` names it. The
 * size given at open is set by `stty` before the command runs (it sees it from its first
 * instruction); a later size is set from the host with `stty -F /proc/<pid>/fd/0` on the process
 * holding the terminal, which makes the kernel send SIGWINCH to the command's foreground group.
 *
 * A session spawned on the node runs inside the task's cgroup(s) (spawn_joined.ts), so the task's
 * memory and CPU limits hold for it too, as Nomad's executor runs them.
 *
 * Sessions end: when the command has ended and its output was fetched; on ExecClose (the user went
 * away: the command is killed); when nobody polled for IDLE_MS (a server that lost track).
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import type { Readable, Writable } from "node:stream";
import { BerthError, notFound } from "../../structs/errors.js";
import type { ClientMethods } from "../../structs/rpc.js";
import type { Logger } from "../../internal/log.js";
import type { TaskRunnerLike } from "../allocrunner/alloc_runner_config.js";
import type { TaskDriver, TaskHandle } from "../drivers/driver.js";
import { cgroupFromState } from "../drivers/shared/cgroups/manager.js";
import { type PipedChild, spawnJoined } from "../drivers/shared/cgroups/spawn_joined.js";
import { findTool } from "../drivers/shared/proc.js";
import { childrenOf } from "../drivers/shared/proc.js";
import { signalNumber, taskCommand } from "./task_process.js";

/** A session nobody polls for this long is killed. */
export const EXEC_SESSION_IDLE_MS = 60_000;
/** Output held for the next poll; past it the command's output is paused until it is fetched. */
const MAX_PENDING = 4 << 20;
/** Longest output poll the server may ask for. */
const MAX_WAIT_MS = 30_000;

/** Where the handlers are registered (the agent's connection to the server). */
export interface SessionPeer {
  handle<M extends keyof ClientMethods>(
    method: M,
    fn: (params: ClientMethods[M][0], signal: AbortSignal) => Promise<ClientMethods[M][1]>,
  ): void;
}

/** What a session drives: a process spawned on the node, or a command run through its driver. */
interface SessionProcess {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** The command's exit code, once it ended and its output streams closed. */
  exited: Promise<number>;
  resize(height: number, width: number): Promise<void>;
  kill(): void;
}

class Session {
  private readonly out: Buffer[] = [];
  private readonly err: Buffer[] = [];
  private pending = 0;
  private exitCode: number | null = null;
  private wake: (() => void) | null = null;
  private idle: NodeJS.Timeout;

  constructor(
    readonly id: string,
    readonly tty: boolean,
    private readonly proc: SessionProcess,
    private readonly onIdle: () => void,
  ) {
    this.idle = setTimeout(onIdle, EXEC_SESSION_IDLE_MS);
    this.idle.unref();
    const keep = (into: Buffer[]) => (chunk: Buffer) => {
      into.push(chunk);
      this.pending += chunk.length;
      if (this.pending > MAX_PENDING) {
        proc.stdout.pause();
        proc.stderr.pause();
      }
      this.notify();
    };
    proc.stdout.on("data", keep(this.out));
    proc.stderr.on("data", keep(this.err));
    proc.stdin.on("error", () => undefined);
    void proc.exited.then(
      (code) => this.finished(code),
      () => this.finished(-1),
    );
  }

  private finished(code: number): void {
    this.exitCode = code;
    this.notify();
  }

  write(data: Buffer, close: boolean): void {
    if (data.length > 0 && this.proc.stdin.writable) this.proc.stdin.write(data);
    if (close) this.proc.stdin.end();
  }

  /** What was written since the last poll, waiting up to `waitMs` for something. */
  async poll(waitMs: number, signal: AbortSignal): Promise<ClientMethods["ClientAlloc.ExecOutput"][1]> {
    this.idle.refresh();
    if (this.pending === 0 && this.exitCode === null) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(waitMs, MAX_WAIT_MS));
        signal.addEventListener("abort", done, { once: true });
        this.wake = done;
        function done() {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          resolve();
        }
      });
      this.wake = null;
    }
    const res = {
      Stdout: Buffer.concat(this.out.splice(0)).toString("base64"),
      Stderr: Buffer.concat(this.err.splice(0)).toString("base64"),
      Exited: this.exitCode !== null,
      ExitCode: this.exitCode ?? 0,
    };
    this.pending = 0;
    this.proc.stdout.resume();
    this.proc.stderr.resume();
    return res;
  }

  resize(height: number, width: number): Promise<void> {
    return this.proc.resize(height, width);
  }

  get ended(): boolean {
    return this.exitCode !== null;
  }

  kill(): void {
    clearTimeout(this.idle);
    if (this.exitCode === null) this.proc.kill();
  }

  private notify(): void {
    this.wake?.();
  }
}

/** A process spawned on the node as a session's process; a later size is set with `stty -F`. */
function childProcess(child: PipedChild): SessionProcess {
  return {
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    exited: new Promise((resolve) =>
      child.on("close", (code, sig) => resolve(code ?? 128 + (sig ? signalNumber(sig) : 0))),
    ),
    resize: (height, width) => resizeTerminal(child.pid!, height, width),
    kill: () => child.kill("SIGKILL"),
  };
}

/** Sets the terminal's size: `stty -F` on the process that has the terminal as its stdin. */
async function resizeTerminal(pid: number, height: number, width: number): Promise<void> {
  const stty = await findTool("stty");
  if (!stty) throw new BerthError("ERR_DRIVER", "resizing the terminal needs stty");
  const holder = await terminalHolder(pid);
  if (holder === null) return; // the command already ended
  await new Promise<void>((resolve, reject) => {
    const p = spawn(stty, ["-F", `/proc/${holder}/fd/0`, "rows", String(height), "cols", String(width)], {
      stdio: "ignore",
    });
    p.on("error", reject);
    p.on("close", () => resolve());
  });
}

/** The first process below `pid` whose standard input is a terminal (`script`'s child), or null. */
async function terminalHolder(pid: number): Promise<number | null> {
  const queue = await childrenOf(pid);
  for (let seen = 0; queue.length > 0 && seen < 64; seen++) {
    const p = queue.shift()!;
    // A pseudo-terminal slave (Unix98 pty majors 136–143), whatever its path in the task's root.
    const st = await fs.stat(`/proc/${p}/fd/0`).catch(() => null);
    const major = st ? Math.floor(st.rdev / 256) & 0xfff : -1;
    if (st?.isCharacterDevice() && major >= 136 && major <= 143) return p;
    queue.push(...(await childrenOf(p)));
  }
  return null;
}

/** `word` quoted for sh. */
function shQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The shell line `script` runs: the start size first (stty), then the command in its place. */
export function ttyShellLine(command: string[], height: number, width: number): string {
  const size = height > 0 && width > 0 ? `stty rows ${height} cols ${width} 2>/dev/null; ` : "";
  return `${size}exec ${command.map(shQuote).join(" ")}`;
}

/**
 * The command spawned on the node, in the task (task_process.ts) and its cgroup, on a `script`
 * terminal for a TTY.
 */
async function spawnInTask(
  handle: TaskHandle,
  taskDir: string,
  req: ClientMethods["ClientAlloc.ExecOpen"][0],
): Promise<SessionProcess> {
  let command = req.Command;
  if (req.Tty) {
    const script = await findTool("script");
    if (!script) throw new BerthError("ERR_DRIVER", "a TTY session needs util-linux script on the node");
    command = [script, "-q", "-e", "-c", ttyShellLine(req.Command, req.Height, req.Width), "/dev/null"];
  }
  const { file, args, cwd, env } = await taskCommand(handle, taskDir, command);
  // script runs the line with $SHELL: the task's own could be anything.
  if (req.Tty) env.SHELL = "/bin/sh";
  // Inside the task's cgroup(s) from its first instruction, when it has them (spawn_joined.ts).
  return childProcess(await spawnJoined(cgroupFromState(handle.state.cgroup), file, args, { env, cwd }));
}

/** `driverOf`: the driver of a task's handle, for drivers with their own exec (TaskDriver.exec). */
export function registerExecSessionHandlers(
  peer: SessionPeer,
  taskOf: (allocId: string, task: string) => { runner: TaskRunnerLike; taskDir: string },
  log: Logger,
  driverOf?: (name: string) => TaskDriver | undefined,
): void {
  const sessions = new Map<string, Session>();
  const session = (id: string): Session => {
    const s = sessions.get(id);
    if (!s) throw notFound("exec session", id);
    return s;
  };
  const end = (s: Session) => {
    s.kill();
    sessions.delete(s.id);
  };

  peer.handle("ClientAlloc.ExecOpen", async (req) => {
    const { runner, taskDir } = taskOf(req.AllocID, req.Task);
    const handle = runner.runningHandle?.() ?? null;
    if (!handle) throw new BerthError("ERR_CONFLICT", `task ${JSON.stringify(req.Task)} is not running`);
    if (req.Command.length === 0) throw new BerthError("ERR_VALIDATION", "Command: a command is required");
    const driver = driverOf?.(handle.driver);
    let proc: SessionProcess;
    if (driver?.exec) {
      // The driver's own way in (docker's exec API): it allocates the terminal itself.
      proc = await driver.exec(handle, req.Command, { tty: req.Tty, height: req.Height, width: req.Width });
    } else {
      proc = await spawnInTask(handle, taskDir, req);
    }
    const id = randomUUID();
    const s = new Session(id, req.Tty, proc, () => {
      log.warn("exec session not polled; killing it", { alloc: req.AllocID, task: req.Task });
      end(s);
    });
    sessions.set(id, s);
    log.info("exec session in task", {
      alloc: req.AllocID,
      task: req.Task,
      command: req.Command[0],
      tty: req.Tty,
    });
    return { SessionID: id };
  });

  peer.handle("ClientAlloc.ExecInput", async (req) => {
    const s = session(req.SessionID);
    s.write(Buffer.from(req.Stdin, "base64"), req.Close);
    if (req.Height > 0 && req.Width > 0 && s.tty && !s.ended) await s.resize(req.Height, req.Width);
    return {};
  });

  peer.handle("ClientAlloc.ExecOutput", async (req, signal) => {
    const s = session(req.SessionID);
    const res = await s.poll(req.WaitMs, signal);
    if (res.Exited) end(s);
    return res;
  });

  peer.handle("ClientAlloc.ExecClose", async (req) => {
    const s = sessions.get(req.SessionID);
    if (s) end(s);
    return {};
  });
}
