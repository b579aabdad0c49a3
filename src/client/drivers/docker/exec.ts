/**
 * `alloc exec` into a docker task through the Engine's exec API: an exec instance in the task's
 * container (its namespaces, root, user and environment), started with the connection hijacked
 * for stdin and output; without a TTY the output is Docker's multiplexed stream, split into stdout
 * and stderr. The exit code is the exec instance's, read once the output has ended.
 *
 * A TTY's size is sent at start (ConsoleSize, Engine API 1.42+) and by a resize right after it.
 * The Engine has no call to kill an exec: kill() closes the connection, which hangs up a TTY
 * command and closes the standard input of any other.
 */
import type { Duplex } from "node:stream";
import { PassThrough } from "node:stream";
import type Docker from "dockerode";
import { BerthError } from "../../../structs/errors.js";
import type { TaskExecProcess } from "../driver.js";
import { FrameParser } from "./log_stream.js";

export async function execInContainer(
  docker: Docker,
  containerId: string,
  command: string[],
  opts: { tty: boolean; height: number; width: number },
): Promise<TaskExecProcess> {
  const container = docker.getContainer(containerId);
  const exec = await container.exec({
    Cmd: command,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: opts.tty,
  });
  const sized = opts.tty && opts.height > 0 && opts.width > 0;
  const conn: Duplex = await exec.start({
    hijack: true,
    stdin: true,
    Tty: opts.tty,
    // Engine API 1.42+ (Docker 23+) starts the terminal at this size; older ones ignore it and
    // get the resize below, which a command reading its size at once may miss.
    ...(sized ? { ConsoleSize: [opts.height, opts.width] } : {}),
  });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  if (opts.tty) {
    // A terminal has no end of input: its end is the EOF character (^D), as util-linux script
    // sends it. Half-closing the hijacked connection would make the Engine drop the output.
    stdin.on("data", (d: Buffer) => conn.write(d));
    stdin.once("end", () => conn.write("\x04"));
  } else {
    stdin.pipe(conn);
  }
  conn.on("error", () => undefined);
  if (opts.tty) {
    conn.pipe(stdout);
    conn.once("end", () => stderr.end());
  } else {
    const parser = new FrameParser();
    conn.on("data", (chunk: Buffer) => {
      for (const f of parser.push(chunk)) (f.stream === 2 ? stderr : stdout).write(f.payload);
    });
    conn.once("end", () => {
      stdout.end();
      stderr.end();
    });
  }
  const ended = new Promise<void>((resolve) => conn.once("close", () => resolve()));
  const resize = async (height: number, width: number): Promise<void> => {
    if (opts.tty && height > 0 && width > 0) await exec.resize({ h: height, w: width });
  };
  // As Docker's CLI does: the exec may not be running yet, so the first resizes can be refused.
  for (let i = 0; sized && i < 10; i++) {
    const ok = await resize(opts.height, opts.width).then(
      () => true,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  return {
    stdin,
    stdout,
    stderr,
    exited: ended.then(() => exitCodeOf(exec)),
    resize,
    kill: () => conn.destroy(),
  };
}

/** The exec's exit code; it may take a moment after the connection closed to be recorded. */
async function exitCodeOf(exec: Docker.Exec): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const info = await exec.inspect();
    if (!info.Running && info.ExitCode !== null) return info.ExitCode;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new BerthError("ERR_DRIVER", "the exec's exit code was not recorded");
}
