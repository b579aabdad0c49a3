/**
 * Spawning a process that runs inside an existing task's cgroup(s) from its first instruction:
 * what `alloc exec` needs so that a session is held to the task's memory and CPU limits (as
 * Nomad's executor runs exec sessions in the task's cgroup) instead of running unlimited in the
 * agent's own cgroup.
 *
 * Node cannot run code between fork and exec, so the process is spawned HELD, as the drivers hold a
 * task at start (start_gate.ts): a host `/bin/sh` reads one line from fd 3, a pipe only the agent
 * holds; the agent writes the shell's pid to the cgroup's `cgroup.procs` (every controller's
 * directory on v1: TaskCgroup.addPid) and only then says "go", and the shell closes fd 3 and execs
 * the command in its own place (same pid, so the command and everything it forks are inside). When
 * the move fails the held shell is killed and the error is thrown: a session never runs outside
 * the limits. A shell that reads EOF or anything but "go" (the agent died) exits 125, running
 * nothing.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { BerthError } from "../../../../structs/errors.js";
import type { TaskCgroup } from "./cgroup_fs.js";

export type PipedChild = ChildProcessByStdio<Writable, Readable, Readable>;

/** The held shell: "go" on fd 3, then the command in its place. */
export const HOLD_UNTIL_JOINED_SH = `IFS= read -r __berth_go <&3 || __berth_go=
exec 3<&-
[ "$__berth_go" = go ] || exit 125
exec "$@"`;

export interface SpawnJoinedOptions {
  env: Record<string, string>;
  cwd: string | undefined;
  /** Aborting kills the process (as spawn's own `signal`). */
  signal?: AbortSignal;
}

/**
 * Spawns `file args` with stdin, stdout and stderr piped; with `cgroup`, inside it (see the module
 * comment), without, as a plain spawn. Resolves once the command may run; rejects with an
 * ERR_VALIDATION naming the command when it cannot be found, or ERR_DRIVER when the process
 * cannot be moved into the cgroup (nothing is left running then).
 */
export async function spawnJoined(
  cgroup: TaskCgroup | null,
  file: string,
  args: string[],
  opts: SpawnJoinedOptions,
): Promise<PipedChild> {
  const base = { env: opts.env, cwd: opts.cwd, signal: opts.signal };
  if (cgroup === null) {
    const child = spawn(file, args, { ...base, stdio: ["pipe", "pipe", "pipe"] });
    await spawned(child, file);
    return child;
  }
  // The shell would report a missing command only as its own exit 127: check first, as spawn does.
  if ((await resolveCommand(file, opts.env.PATH, opts.cwd)) === null) throw commandNotFound(file);
  const child = spawn("/bin/sh", ["-c", HOLD_UNTIL_JOINED_SH, "sh", file, ...args], {
    ...base,
    stdio: ["pipe", "pipe", "pipe", "pipe"],
  }) as unknown as PipedChild;
  await spawned(child, "/bin/sh");
  const gate = child.stdio[3] as Writable | null;
  try {
    if (!gate) throw new Error("no gate pipe");
    await cgroup.addPid(child.pid!);
  } catch (err) {
    child.kill("SIGKILL");
    throw new BerthError(
      "ERR_DRIVER",
      `cannot move the exec session into the task's cgroup: ${(err as Error).message}`,
    );
  }
  gate.on("error", () => undefined);
  gate.end("go\n");
  return child;
}

/** Resolves once the process runs; rejects with the spawn error (ENOENT: the command is missing). */
function spawned(child: PipedChild, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (e) =>
      reject((e as NodeJS.ErrnoException).code === "ENOENT" ? commandNotFound(file) : e),
    );
  });
}

function commandNotFound(file: string): BerthError {
  return new BerthError("ERR_VALIDATION", `Command: ${JSON.stringify(file)} not found`);
}

/**
 * Where `file` is found as execvp finds it: a name with a slash as given (relative to `cwd`), any
 * other on `PATH` (the host's default when unset); null when nothing executable is there.
 */
export async function resolveCommand(
  file: string,
  pathVar: string | undefined,
  cwd: string | undefined,
): Promise<string | null> {
  const executable = async (p: string) =>
    fs.access(p, fs.constants.X_OK).then(
      () => fs.stat(p).then((st) => st.isFile()),
      () => false,
    );
  if (file.includes("/")) {
    const p = path.resolve(cwd ?? process.cwd(), file);
    return (await executable(p)) ? p : null;
  }
  for (const dir of (pathVar ?? "/usr/local/bin:/usr/bin:/bin").split(":")) {
    const p = path.resolve(cwd ?? process.cwd(), dir === "" ? "." : dir, file);
    if (await executable(p)) return p;
  }
  return null;
}
