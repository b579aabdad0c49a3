/** What a command needs from the world, passed in so commands run as plain functions in tests. */
import { readFile, writeFile } from "node:fs/promises";
import type { ApiClient } from "../api/index.js";
import { terminalSafe } from "./format.js";

export interface CommandIO {
  stdout(line: string): void;
  stderr(line: string): void;
  api: ApiClient;
  /** Reads a spec file; "-" is standard input. */
  readFile(path: string): Promise<string>;
  /** Unix milliseconds, for "3m ago" columns. */
  now(): number;
  /**
   * Creates `path` with `text`, failing with EEXIST when it exists (`job init`, `volume init` never
   * overwrite); absent: the command cannot write files.
   */
  writeNewFile?(path: string, text: string): Promise<void>;
  /** Reads a file's bytes ("-" is standard input): a dispatch payload; absent: readFile's text. */
  readFileBytes?(path: string): Promise<Buffer>;
  /** Standard input when it is piped (not a terminal), whole; absent: none. */
  readStdin?(): Promise<Buffer>;
  /** Waits between polls (monitors, `-f`); absent: a real timer. Tests pass a short one. */
  sleep?(ms: number): Promise<void>;
  /** The environment (`NOMAD_VAR_*` for jobspec variables); absent: none. */
  env?: NodeJS.ProcessEnv;
  /** The process's own streams, for an interactive session (`alloc exec -t`); absent: none. */
  terminal?: TerminalIO;
}

/** Raw streams of an interactive session: bytes pass as they are (a terminal's own escapes too). */
export interface TerminalIO {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  stderr: NodeJS.WritableStream;
}

async function stdinBytes(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function readFileOrStdin(path: string): Promise<string> {
  if (path !== "-") return readFile(path, "utf8");
  return (await stdinBytes()).toString("utf8");
}

/**
 * Writes whole lines to a terminal-facing stream: the one place every line the CLI prints passes,
 * escaped (format.ts terminalSafe, newlines and tabs kept) so nothing a server sent — a node name,
 * a task event, an error — can reach the terminal as a control sequence, whichever command printed it.
 */
export function lineWriter(stream: Pick<NodeJS.WritableStream, "write">): (line: string) => void {
  return (line) => {
    stream.write(terminalSafe(line, true) + "\n");
  };
}

export function processIO(api: ApiClient): CommandIO {
  return {
    stdout: lineWriter(process.stdout),
    stderr: lineWriter(process.stderr),
    api,
    readFile: readFileOrStdin,
    readFileBytes: (path) => (path === "-" ? stdinBytes() : readFile(path)),
    writeNewFile: (path, text) => writeFile(path, text, { flag: "wx" }),
    readStdin: async () =>
      process.stdin.isTTY ? Buffer.alloc(0) : Buffer.from(await readFileOrStdin("-"), "utf8"),
    now: () => Date.now(),
    env: process.env,
    terminal: { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
  };
}

/** 128 + SIGPIPE (13): the status of a Unix tool whose reader went away (`berth ... | head`). */
export const BROKEN_PIPE_EXIT_CODE = 141;

/**
 * A reader that closes its end early (`head`, `grep -q`) makes the next write fail with EPIPE, which
 * Node raises as an 'error' event: unhandled, a stack trace. A Unix tool dies of SIGPIPE quietly
 * instead; Node ignores SIGPIPE, so the CLI exits with SIGPIPE's status at once, printing nothing
 * (stderr may be the broken pipe too). Other stream errors are not ours to hide: they are rethrown.
 * For the CLI commands only: an agent must not skip its shutdown because its log reader went away.
 */
export function exitQuietlyOnBrokenPipe(
  streams: NodeJS.WritableStream[] = [process.stdout, process.stderr],
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  for (const stream of streams) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EPIPE") return exit(BROKEN_PIPE_EXIT_CODE);
      throw err;
    });
  }
}
