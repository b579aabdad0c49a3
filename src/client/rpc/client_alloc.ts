/**
 * The ClientAlloc.* handlers: what `alloc logs|exec|signal|restart` need of an alloc running on
 * this node (Nomad's client FS and alloc endpoints, reached through the server over the agent's own
 * connection: nodes accept no inbound connections).
 *
 * Logs: client_alloc_logs.ts (also of allocs whose files outlived their runner). Exec runs a
 * command non-interactively inside the task: for exec-driver tasks in the task's mount namespace
 * and root (nsenter into a process of the task), for raw_exec in the task dir; with the task's
 * environment (read from its process); inside the task's cgroup(s) when it has them (the task's
 * memory and CPU limits hold for it: spawn_joined.ts); a driver with its own exec (docker: the
 * Engine's exec API, inside the container) runs it instead. Output is returned whole, capped.
 */
import { BerthError, notFound } from "../../structs/errors.js";
import type { ClientMethods } from "../../structs/rpc.js";
import type { Logger } from "../../internal/log.js";
import type { TaskDriver, TaskExecProcess, TaskHandle } from "../drivers/driver.js";
import type { TaskRunnerLike } from "../allocrunner/alloc_runner_config.js";
import { cgroupFromState } from "../drivers/shared/cgroups/manager.js";
import { spawnJoined } from "../drivers/shared/cgroups/spawn_joined.js";
import { logSource, readLog } from "./client_alloc_logs.js";
import type { AllocAccess, ClientAllocPeer } from "./alloc_peer.js";
import { registerAllocStatsHandler } from "./client_alloc_stats.js";
import { registerAllocFsHandlers } from "./client_alloc_fs.js";
import { registerExecSessionHandlers } from "./client_exec_session.js";
import { childrenOf } from "../drivers/shared/proc.js";
import { signalNumber, taskCommand } from "./task_process.js";

/** What exec keeps of each of stdout and stderr. */
export const MAX_EXEC_OUTPUT = 4 << 20;

/**
 * `driverOf`: the driver of a task's handle, for drivers with their own exec (TaskDriver.exec).
 * `allocsDir`: `<data dir>/alloc`, where logs of allocs with no task runner here are read from
 * (client_alloc_logs.ts); absent, reading those answers 404.
 */
export function registerClientAllocHandlers(
  peer: ClientAllocPeer,
  allocs: (id: string) => AllocAccess | undefined,
  log: Logger,
  driverOf?: (name: string) => TaskDriver | undefined,
  allocsDir?: string,
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
      const driver = driverOf?.(handle.driver);
      if (driver?.signal) {
        await driver.signal(handle, req.Signal);
        continue;
      }
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
    const a = allocs(req.AllocID);
    const runner = a ? { root: a.root, task: a.task(req.Task) } : undefined;
    return readLog(req, await logSource(req, runner, allocsDir));
  });

  peer.handle("ClientAlloc.Exec", async (req, signal) => {
    const a = alloc(req.AllocID);
    const tr = task(a, req.AllocID, req.Task);
    const handle = tr.runningHandle?.() ?? null;
    if (!handle) throw new BerthError("ERR_CONFLICT", `task ${JSON.stringify(req.Task)} is not running`);
    if (req.Command.length === 0) throw new BerthError("ERR_VALIDATION", "Command: a command is required");
    log.info("exec in task", { alloc: req.AllocID, task: req.Task, command: req.Command[0] });
    const driver = driverOf?.(handle.driver);
    if (driver?.exec) {
      const proc = await driver.exec(handle, req.Command, { tty: false, height: 0, width: 0 });
      return execThroughDriver(proc, req, signal);
    }
    return execIn(handle, `${a.root}/${req.Task}`, req, signal);
  });

  registerAllocStatsHandler(peer, allocs, driverOf);
  registerAllocFsHandlers(peer, allocs, allocsDir);
  registerExecSessionHandlers(
    peer,
    (allocId, name) => {
      const a = alloc(allocId);
      return { runner: task(a, allocId, name), taskDir: `${a.root}/${name}` };
    },
    log,
    driverOf,
  );
}

/** The command run through the task's driver: its stdin sent whole, its output kept up to the cap. */
async function execThroughDriver(
  proc: TaskExecProcess,
  req: ClientMethods["ClientAlloc.Exec"][0],
  signal: AbortSignal,
): Promise<ClientMethods["ClientAlloc.Exec"][1]> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const keep = (into: Buffer[]) => (chunk: Buffer) => {
    if (into.reduce((n, b) => n + b.length, 0) < MAX_EXEC_OUTPUT) into.push(chunk);
  };
  proc.stdout.on("data", keep(out));
  proc.stderr.on("data", keep(err));
  const timer = setTimeout(() => proc.kill(), req.TimeoutMs);
  const onAbort = () => proc.kill();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    proc.stdin.on("error", () => undefined);
    proc.stdin.end(Buffer.from(req.Stdin, "base64"));
    const code = await proc.exited;
    return {
      Stdout: Buffer.concat(out).subarray(0, MAX_EXEC_OUTPUT).toString("base64"),
      Stderr: Buffer.concat(err).subarray(0, MAX_EXEC_OUTPUT).toString("base64"),
      ExitCode: code,
    };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}

/** Runs the command in the task (see the file comment); resolves with its output and exit code. */
async function execIn(
  handle: TaskHandle,
  taskDir: string,
  req: ClientMethods["ClientAlloc.Exec"][0],
  signal: AbortSignal,
): Promise<ClientMethods["ClientAlloc.Exec"][1]> {
  const { file, args, cwd, env } = await taskCommand(handle, taskDir, req.Command);
  const child = await spawnJoined(cgroupFromState(handle.state.cgroup), file, args, { env, cwd, signal });
  return new Promise((resolve, reject) => {
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
      reject(e);
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
