/**
 * `berth alloc logs [options] <alloc> [<task>]`, as Nomad's: a task's stdout (or `-stderr`), whole
 * or its end (`-tail` with `-n` lines or `-c` bytes), printed on stdout; with `-f`, followed as the
 * task writes. `-f` alone follows both files from their current end, stdout to stdout and stderr to
 * stderr. Output passes the CLI's terminal escaping like every other line it prints.
 *
 * `-tail -f` reads the tail in Nomad's frames, whose offsets say where the read ended, and follows
 * from exactly there: a line the task writes between the two requests is printed, not lost.
 */
import { streamLogs } from "../../api/index.js";
import { streamLogFrames } from "../../api/log_frames.js";
import { fail, type Command, type Parsed } from "../command.js";
import { findAlloc, taskOf } from "../alloc_target.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import type { CommandIO } from "../io.js";

export interface AllocLogsArgs extends Parsed {
  id: string;
  task: string | undefined;
  stderr: boolean;
  stdout: boolean;
  follow: boolean;
  tail: boolean;
  lines: number | undefined;
  bytes: number | undefined;
}

/** Nomad's guess of bytes per line: `-tail -n N` reads N × this from the end. */
const BYTES_PER_LINE = 120;

function count(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`-${flag} must be a non-negative integer`);
  return Number(v);
}

export const allocLogs: Command<AllocLogsArgs> = {
  usage: "Usage: berth alloc logs [options] <allocation> [<task>]",
  help: "Prints a task's stdout (-stderr: its stderr). -f follows the log as the task writes; -tail prints the end: -n <lines> (default 10) or -c <bytes>. -task names the task (or give it as the second argument); an alloc with one task needs none.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      stderr: { type: "boolean" },
      stdout: { type: "boolean" },
      f: { type: "boolean" },
      tail: { type: "boolean" },
      n: { type: "string" },
      c: { type: "string" },
      task: { type: "string" },
      verbose: { type: "boolean" },
    });
    expectArgs(positionals, 1, 2, "<allocation> [<task>]");
    if (values.task && positionals[1])
      throw new UsageError("give the task once: -task or the second argument");
    return {
      address: values.address,
      id: positionals[0]!,
      task: values.task ?? positionals[1],
      stderr: values.stderr ?? false,
      stdout: values.stdout ?? false,
      follow: values.f ?? false,
      tail: values.tail ?? false,
      lines: count("n", values.n),
      bytes: count("c", values.c),
    };
  },
  async run(p, io) {
    let task: string;
    let allocId: string;
    try {
      const alloc = await findAlloc(io, p.id);
      task = taskOf(alloc, p.task);
      allocId = alloc.ID;
    } catch (err) {
      return fail(io, "reading logs", err);
    }
    if (p.follow && !p.stderr && !p.stdout && !p.tail && p.lines === undefined && p.bytes === undefined) {
      return followBoth(io, allocId, task);
    }
    if (p.stderr && p.stdout) {
      io.stderr("Unable to support both stdout and stderr");
      return 1;
    }
    if (p.lines !== undefined && p.bytes !== undefined) {
      io.stderr("both -n and -c set");
      return 1;
    }
    const type: "stdout" | "stderr" = p.stderr ? "stderr" : "stdout";
    const lines = p.tail && p.bytes === undefined ? (p.lines ?? 10) : undefined;
    const tailBytes = p.bytes ?? (lines ?? 10) * BYTES_PER_LINE;
    const from = p.tail ? { origin: "end" as const, offset: tailBytes } : {};
    const printer = lineSplitter(io, false);
    try {
      if (p.tail && p.follow) return await tailThenFollow(io, allocId, task, type, tailBytes, lines);
      if (lines !== undefined) {
        const all = await readTail(io, allocId, task, type, tailBytes);
        for (const l of lastLines(all.data, lines)) printer.line(l);
        return 0;
      }
      for await (const c of streamLogs(io.api, allocId, { task, type, follow: p.follow, ...from }))
        printer.write(c);
      printer.end();
      return 0;
    } catch (err) {
      return fail(io, "reading logs", err);
    }
  },
};

/**
 * The window `offset` bytes from the end (across rotated files), and where that read ended: the
 * last frame's file and the offset in it.
 */
async function readTail(
  io: CommandIO,
  allocId: string,
  task: string,
  type: "stdout" | "stderr",
  offset: number,
): Promise<{ data: Buffer; end: { file: string; offset: number } | null }> {
  const chunks: Buffer[] = [];
  let end: { file: string; offset: number } | null = null;
  for await (const f of streamLogFrames(io.api, allocId, { task, type, origin: "end", offset })) {
    chunks.push(f.data);
    end = { file: f.file, offset: f.offset };
  }
  return { data: Buffer.concat(chunks), end };
}

function lastLines(data: Buffer, n: number): string[] {
  const all = data.toString("utf8").split("\n");
  if (all.at(-1) === "") all.pop();
  return all.slice(-n);
}

/**
 * `-tail -f`: the end of the log (its last `lines` lines, or all of the window when counting bytes),
 * then what follows, from the offset the first read ended at. A first read with no data saw an
 * empty log (the window reaches back to offset 0), so the follow starts at 0; only `-c 0` has no
 * offset to go on and follows from the end as it is then.
 */
async function tailThenFollow(
  io: CommandIO,
  allocId: string,
  task: string,
  type: "stdout" | "stderr",
  offset: number,
  lines: number | undefined,
): Promise<number> {
  const printer = lineSplitter(io, false);
  const tail = await readTail(io, allocId, task, type, offset);
  if (lines !== undefined) for (const l of lastLines(tail.data, lines)) printer.line(l);
  else printer.write(tail.data);
  // From the frame's own file: a rotation since the tail was read moves no byte (offsets into the
  // oldest file's start would).
  const from =
    tail.end !== null
      ? { origin: "start" as const, offset: tail.end.offset, file: tail.end.file || undefined }
      : offset > 0
        ? { origin: "start" as const, offset: 0 }
        : { origin: "end" as const, offset: 0 };
  for await (const c of streamLogs(io.api, allocId, { task, type, follow: true, ...from })) printer.write(c);
  printer.end();
  return 0;
}

/** `-f` alone: both files from their end, each to its own stream, until the task is dead. */
async function followBoth(io: CommandIO, allocId: string, task: string): Promise<number> {
  const follow = async (type: "stdout" | "stderr") => {
    const printer = lineSplitter(io, type === "stderr");
    for await (const c of streamLogs(io.api, allocId, { task, type, follow: true, origin: "end", offset: 0 }))
      printer.write(c);
    printer.end();
  };
  try {
    await Promise.all([follow("stdout"), follow("stderr")]);
    return 0;
  } catch (err) {
    return fail(io, "reading logs", err);
  }
}

/** Whole lines out of a byte stream (a line split across chunks is printed once complete). */
function lineSplitter(io: CommandIO, toStderr: boolean) {
  const out = (l: string) => (toStderr ? io.stderr(l) : io.stdout(l));
  let pending = "";
  const decoder = new TextDecoder();
  return {
    line: (l: string) => out(l),
    write(chunk: Uint8Array) {
      pending += decoder.decode(chunk, { stream: true });
      const parts = pending.split("\n");
      pending = parts.pop()!;
      for (const l of parts) out(l);
    },
    end() {
      pending += decoder.decode();
      if (pending !== "") out(pending);
      pending = "";
    },
  };
}
