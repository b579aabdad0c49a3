/**
 * `berth alloc logs [options] <alloc> [<task>]`, as Nomad's: a task's stdout (or `-stderr`), whole
 * or its end (`-tail` with `-n` lines or `-c` bytes), printed on stdout; with `-f`, followed as the
 * task writes. `-f` alone follows both files from their current end, stdout to stdout and stderr to
 * stderr. Output passes the CLI's terminal escaping like every other line it prints.
 */
import { streamLogs } from "../../api/index.js";
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
    const from = p.tail ? { origin: "end" as const, offset: p.bytes ?? (lines ?? 10) * BYTES_PER_LINE } : {};
    const printer = lineSplitter(io, false);
    try {
      if (lines !== undefined) {
        // The last N lines of the window, then (with -f) what the task writes from then on; what
        // it writes between the two requests is not shown (a plain stream has no offsets).
        const chunks: Uint8Array[] = [];
        for await (const c of streamLogs(io.api, allocId, { task, type, ...from })) chunks.push(c);
        const all = Buffer.concat(chunks).toString("utf8").split("\n");
        if (all.at(-1) === "") all.pop();
        for (const l of all.slice(-lines)) printer.line(l);
        if (!p.follow) return 0;
        const rest = { task, type, follow: true, origin: "end" as const, offset: 0 };
        for await (const c of streamLogs(io.api, allocId, rest)) printer.write(c);
        printer.end();
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
