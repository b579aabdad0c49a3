/**
 * The ClientAlloc.* handlers: what `alloc logs|exec|signal|restart` need of an alloc running on
 * this node (Nomad's client FS and alloc endpoints, reached through the server over the agent's own
 * connection: nodes accept no inbound connections).
 *
 * Logs are read from the task's log files without following links (a task can replace them:
 * no_follow.ts). Exec runs a command non-interactively inside the task: for exec-driver tasks in
 * the task's mount namespace and root (nsenter into a process of the task), for raw_exec in the
 * task dir; with the task's environment (read from its process); output is returned whole, capped.
 */
import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import { BerthError, notFound } from "../../structs/errors.js";
import type { ClientMethods } from "../../structs/rpc.js";
import type { Logger } from "../../internal/log.js";
import type { TaskHandle } from "../drivers/driver.js";
import { findTool } from "../drivers/shared/proc.js";
import type { TaskRunnerLike } from "../allocrunner/alloc_runner_config.js";
import { openReadNoFollow } from "../allocdir/no_follow.js";

/** What the handlers need of one alloc on this node. */
export interface AllocAccess {
  /** `<dataDir>/alloc/<id>`: the anchor log reads start from. */
  root: string;
  taskNames(): string[];
  task(name: string): TaskRunnerLike | undefined;
}

export interface ClientAllocPeer {
  handle<M extends keyof ClientMethods>(
    method: M,
    fn: (params: ClientMethods[M][0], signal: AbortSignal) => Promise<ClientMethods[M][1]>,
  ): void;
}

/** A single read's cap: the server asks again from the new offset. */
export const MAX_LOG_READ = 1 << 20;
/** What exec keeps of each of stdout and stderr. */
export const MAX_EXEC_OUTPUT = 4 << 20;

export function registerClientAllocHandlers(
  peer: ClientAllocPeer,
  allocs: (id: string) => AllocAccess | undefined,
  log: Logger,
): void {
  const alloc = (id: string): AllocAccess => {
    const a = allocs(id);
    if (!a) throw notFound("allocation", id);
    return a;
  };
  const task = (a: AllocAccess, allocId: string, name: string): TaskRunnerLike => {
    const tr = a.task(name);
    if (!tr) throw notFound(`task in allocation ${allocId}:`, name);
    return tr;
  };
  /** The named task, or every task of the alloc that is running now. */
  const targets = (a: AllocAccess, allocId: string, name: string): TaskRunnerLike[] =>
    name
      ? [task(a, allocId, name)]
      : a
          .taskNames()
          .map((n) => a.task(n))
          .filter((t): t is TaskRunnerLike => t?.runningHandle?.() != null);

  peer.handle("ClientAlloc.Signal", async (req) => {
    const a = alloc(req.AllocID);
    for (const t of targets(a, req.AllocID, req.Task)) {
      const handle = t.runningHandle?.();
      if (!handle) throw new BerthError("ERR_CONFLICT", `task ${JSON.stringify(req.Task)} is not running`);
      t.emitEvent("Signaling", `Task being sent signal ${req.Signal}`, { signal: req.Signal });
      // The task's command only, as Nomad signals it: the handle's process is the driver's shell
      // parent, which would die of most signals and take the task's record with it.
      for (const pid of await childrenOf(handle.pid)) {
        try {
          process.kill(pid, req.Signal);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
        }
      }
    }
    log.info("alloc signalled", { alloc: req.AllocID, task: req.Task || "*", signal: req.Signal });
    return {};
  });

  peer.handle("ClientAlloc.Restart", async (req) => {
    const a = alloc(req.AllocID);
    const list = targets(a, req.AllocID, req.Task);
    for (const t of list) {
      if (!t.runningHandle?.() || !t.restart)
        throw new BerthError("ERR_CONFLICT", `task ${JSON.stringify(req.Task)} is not running`);
    }
    await Promise.all(list.map((t) => t.restart!("User requested restart")));
    log.info("alloc restarted", { alloc: req.AllocID, task: req.Task || "*" });
    return {};
  });

  peer.handle("ClientAlloc.ReadLog", async (req) => {
    const a = alloc(req.AllocID);
    const tr = task(a, req.AllocID, req.Task);
    const dead = tr.state().State === "dead";
    let fh;
    try {
      fh = await openReadNoFollow(a.root, [req.Task, "logs"], `${req.Task}.${req.Type}.0`);
    } catch (err) {
      // Not written yet (the task has not started): an empty read, not an error.
      if ((err as NodeJS.ErrnoException).code === "ENOENT")
        return { Data: "", Offset: 0, Size: 0, TaskDead: dead };
      throw err;
    }
    try {
      const size = (await fh.stat()).size;
      const from = req.Origin === "end" ? Math.max(0, size - req.Offset) : Math.min(req.Offset, size);
      const want = Math.max(0, Math.min(req.Limit, MAX_LOG_READ, size - from));
      const buf = Buffer.alloc(want);
      const { bytesRead } = await fh.read(buf, 0, want, from);
      return {
        Data: buf.subarray(0, bytesRead).toString("base64"),
        Offset: from,
        Size: size,
        TaskDead: dead,
      };
    } finally {
      await fh.close();
    }
  });

  peer.handle("ClientAlloc.Exec", async (req, signal) => {
    const a = alloc(req.AllocID);
    const tr = task(a, req.AllocID, req.Task);
    const handle = tr.runningHandle?.() ?? null;
    if (!handle) throw new BerthError("ERR_CONFLICT", `task ${JSON.stringify(req.Task)} is not running`);
    if (req.Command.length === 0) throw new BerthError("ERR_VALIDATION", "Command: a command is required");
    log.info("exec in task", { alloc: req.AllocID, task: req.Task, command: req.Command[0] });
    return execIn(handle, `${a.root}/${req.Task}`, req, signal);
  });
}

/** Runs the command in the task (see the file comment); resolves with its output and exit code. */
async function execIn(
  handle: TaskHandle,
  taskDir: string,
  req: ClientMethods["ClientAlloc.Exec"][0],
  signal: AbortSignal,
): Promise<ClientMethods["ClientAlloc.Exec"][1]> {
  const inside = await processInTaskRoot(handle.pid);
  const env = await environOf(inside ?? handle.pid);
  let file: string;
  let args: string[];
  let cwd: string | undefined;
  if (inside !== null) {
    const nsenter = await findTool("nsenter");
    if (!nsenter) throw new BerthError("ERR_DRIVER", "exec into an exec-driver task needs nsenter");
    // Its mount namespace, its root (chroot) and its working directory.
    [file, args] = [nsenter, ["-t", String(inside), "-m", "-r", "-w", "--", ...req.Command]];
  } else {
    [file, args, cwd] = [req.Command[0]!, req.Command.slice(1), taskDir];
  }
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"], signal });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const keep = (into: Buffer[]) => (chunk: Buffer) => {
      if (into.reduce((n, b) => n + b.length, 0) < MAX_EXEC_OUTPUT) into.push(chunk);
    };
    child.stdout.on("data", keep(out));
    child.stderr.on("data", keep(err));
    const timer = setTimeout(() => child.kill("SIGKILL"), req.TimeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(
        (e as NodeJS.ErrnoException).code === "ENOENT"
          ? new BerthError("ERR_VALIDATION", `Command: ${JSON.stringify(req.Command[0])} not found`)
          : e,
      );
    });
    child.on("close", (code, sig) => {
      clearTimeout(timer);
      resolve({
        Stdout: Buffer.concat(out).subarray(0, MAX_EXEC_OUTPUT).toString("base64"),
        Stderr: Buffer.concat(err).subarray(0, MAX_EXEC_OUTPUT).toString("base64"),
        ExitCode: code ?? 128 + (sig ? signalNumber(sig) : 0),
      });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(Buffer.from(req.Stdin, "base64"));
  });
}

function signalNumber(sig: NodeJS.Signals): number {
  return (
    (
      {
        SIGHUP: 1,
        SIGINT: 2,
        SIGQUIT: 3,
        SIGKILL: 9,
        SIGTERM: 15,
      } as Partial<Record<NodeJS.Signals, number>>
    )[sig] ?? 0
  );
}

/** The direct children of `pid` (the task's command under the drivers' shell parent). */
async function childrenOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  const tids = await fs.readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  for (const tid of tids) {
    const kids = await fs.readFile(`/proc/${pid}/task/${tid}/children`, "utf8").catch(() => "");
    for (const k of kids.split(" ").filter(Boolean)) out.push(Number(k));
  }
  return out;
}

/**
 * A process of the task whose root is not the host's: the exec driver's task runs chrooted in its
 * own mount namespace below the handle's process. null for a task that runs in the host's root
 * (raw_exec). Breadth-first over /proc/<pid>/task/<tid>/children.
 */
async function processInTaskRoot(pid: number): Promise<number | null> {
  const queue = [pid];
  for (let seen = 0; queue.length > 0 && seen < 256; seen++) {
    const p = queue.shift()!;
    const root = await fs.readlink(`/proc/${p}/root`).catch(() => "/");
    if (root !== "/") return p;
    queue.push(...(await childrenOf(p)));
  }
  return null;
}

/** The environment the task runs with, as its process has it. */
async function environOf(pid: number): Promise<Record<string, string>> {
  const raw = await fs.readFile(`/proc/${pid}/environ`).catch(() => Buffer.alloc(0));
  const env: Record<string, string> = {};
  for (const entry of raw.toString("utf8").split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}
