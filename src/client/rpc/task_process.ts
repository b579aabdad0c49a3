/**
 * Finding a running task's processes from its handle: the children of a process, the process of an
 * exec-driver task that runs in the task's own root, and the environment a task runs with. Used by
 * `alloc signal` and `alloc exec` (client_alloc.ts, client_exec_session.ts).
 */
import fs from "node:fs/promises";
import { BerthError } from "../../structs/errors.js";
import type { TaskHandle } from "../drivers/driver.js";
import { childrenOf, findTool } from "../drivers/shared/proc.js";
import { rootSafeEnv } from "../drivers/shared/root_env.js";

/**
 * How to run `command` inside the task: for an exec-driver task in its mount namespace, root and
 * working directory (nsenter into a process of the task), for raw_exec in the task dir; with the
 * task's environment as its process has it, except what no root process may run with
 * (rootSafeEnv: carried past the privilege drop for an exec-driver task, dropped for a raw_exec
 * task that runs as another user than the agent's).
 */
export async function taskCommand(
  handle: TaskHandle,
  taskDir: string,
  command: string[],
): Promise<{ file: string; args: string[]; cwd: string | undefined; env: Record<string, string> }> {
  const inside = await processInTaskRoot(handle.pid);
  const env = await environOf(inside ?? handle.pid);
  if (inside === null) {
    // raw_exec: the command runs as the agent's user on the host. A task that runs as another user
    // must not get the agent's root to load code through its environment (see rootSafeEnv).
    const owner = await credentialsOf(handle.pid);
    const safe = owner === null || owner.uid === 0 ? env : rootSafeEnv(env).safe;
    return { file: command[0]!, args: command.slice(1), cwd: taskDir, env: safe };
  }
  const nsenter = await findTool("nsenter");
  if (!nsenter) throw new BerthError("ERR_DRIVER", "exec into an exec-driver task needs nsenter");
  // As the task's own user, as Nomad's exec does: an exec task runs as nobody unless its job says
  // otherwise, and exec-ing into it must not hand out the agent's root inside the task's root.
  const owner = await credentialsOf(inside);
  const asUser = owner === null || owner.uid === 0 ? [] : ["-S", String(owner.uid), "-G", String(owner.gid)];
  // The helpers (the cgroup gate's shell, nsenter) run as root on the host: they get none of the
  // variables that load code; those reach the command through `env`, run in the task's root as its
  // user.
  const { safe, carried } = rootSafeEnv(env);
  const withCarried = carried.length === 0 ? command : ["env", "--", ...carried, ...command];
  return {
    file: nsenter,
    args: ["-t", String(inside), "-m", "-r", "-w", ...asUser, "--", ...withCarried],
    cwd: undefined,
    env: safe,
  };
}

/**
 * The effective uid and gid `pid` runs with (/proc/<pid>/status); null when it cannot be read (the
 * process is gone: the exec then fails on its own).
 */
export async function credentialsOf(pid: number): Promise<{ uid: number; gid: number } | null> {
  const status = await fs.readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+\\d+\\s+(\\d+)`, "m").exec(status)?.[1]);
  const uid = field("Uid");
  const gid = field("Gid");
  return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
}

/**
 * A process of the task whose root is not the host's: the exec driver's task runs chrooted in its
 * own mount namespace below the handle's process. null for a task that runs in the host's root
 * (raw_exec). Breadth-first over /proc/<pid>/task/<tid>/children.
 */
export async function processInTaskRoot(pid: number): Promise<number | null> {
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
export async function environOf(pid: number): Promise<Record<string, string>> {
  const raw = await fs.readFile(`/proc/${pid}/environ`).catch(() => Buffer.alloc(0));
  const env: Record<string, string> = {};
  for (const entry of raw.toString("utf8").split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/** The number of a signal that ended a command (its exit code is 128 + it). */
export function signalNumber(sig: NodeJS.Signals): number {
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
