/**
 * `berth alloc fs [options] <alloc> [<path>]`, as Nomad's (command/alloc_fs.go): the alloc dir's
 * listing at `path` (default: the alloc dir itself) as `Mode Size Modified Time Name`, a file's
 * bytes, or with `-stat` one entry's `Mode Size Modified Time Content Type Name`. `-H` prints sizes
 * in bytes; `-tail` prints the end of a file (`-n` lines, default 10, or `-c` bytes); `-f` keeps
 * printing what is appended (polling the file: berth has no fs stream route) until interrupted.
 * File bytes pass the CLI's terminal escaping like every other line it prints.
 */
import { allocFsList, allocFsStat, readAllocFile, type AllocFileInfo } from "../../api/alloc_fs.js";
import { fail, type Command, type Parsed } from "../command.js";
import { findAlloc } from "../alloc_target.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { bytes, table } from "../format.js";
import type { CommandIO } from "../io.js";

export interface AllocFsArgs extends Parsed {
  id: string;
  path: string;
  stat: boolean;
  follow: boolean;
  machine: boolean;
  tail: boolean;
  lines: number | undefined;
  bytes: number | undefined;
}

/** Nomad's guess of bytes per line (`-tail -n N` reads N × this from the end). */
const BYTES_PER_LINE = 120;
/** How often `-f` asks whether the file grew. */
export const FOLLOW_POLL_MS = 500;

function count(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`-${flag} must be a non-negative integer`);
  return Number(v);
}

export const allocFs: Command<AllocFsArgs> = {
  usage: "Usage: berth alloc fs [options] <allocation> [<path>]",
  help: "Lists the alloc dir at <path> (default: its root), or prints the file there. -stat shows the entry's stat instead; -H prints sizes in bytes; -tail prints the file's end (-n <lines>, default 10, or -c <bytes>); -f keeps printing what is appended.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      stat: { type: "boolean" },
      f: { type: "boolean" },
      H: { type: "boolean" },
      tail: { type: "boolean" },
      n: { type: "string" },
      c: { type: "string" },
      verbose: { type: "boolean" },
    });
    expectArgs(positionals, 1, 2, "<allocation> [<path>]");
    const p: AllocFsArgs = {
      address: values.address,
      id: positionals[0]!,
      path: positionals[1] ?? "/",
      stat: values.stat ?? false,
      follow: values.f ?? false,
      machine: values.H ?? false,
      tail: values.tail ?? false,
      lines: count("n", values.n),
      bytes: count("c", values.c),
    };
    if (p.lines !== undefined && p.bytes !== undefined)
      throw new UsageError("Both -n and -c are not allowed");
    return p;
  },
  async run(p, io) {
    let allocId: string;
    let file: AllocFileInfo;
    try {
      allocId = (await findAlloc(io, p.id)).ID;
      file = await allocFsStat(io.api, allocId, p.path);
    } catch (err) {
      return fail(io, "reading the alloc dir", err);
    }
    const size = (n: number) => (p.machine ? String(n) : bytes(n));
    const name = (f: AllocFileInfo) => (f.IsDir ? `${f.Name}/` : f.Name);
    if (p.stat) {
      const row = [file.FileMode, size(file.Size), file.ModTime, file.ContentType, name(file)];
      for (const l of table([["Mode", "Size", "Modified Time", "Content Type", "Name"], row])) io.stdout(l);
      return 0;
    }
    try {
      if (file.IsDir) {
        const files = await allocFsList(io.api, allocId, p.path);
        const rows = files.map((f) => [f.FileMode, size(f.Size), f.ModTime, name(f)]);
        for (const l of table([["Mode", "Size", "Modified Time", "Name"], ...rows])) io.stdout(l);
        return 0;
      }
      return await printFile(io, allocId, p, file.Size);
    } catch (err) {
      return fail(io, "reading file", err);
    }
  },
};

async function printFile(io: CommandIO, allocId: string, p: AllocFsArgs, fileSize: number): Promise<number> {
  const printer = lineSplitter(io);
  let offset = 0;
  const lines = p.tail && p.bytes === undefined ? (p.lines ?? 10) : undefined;
  if (p.tail) offset = Math.max(0, fileSize - (p.bytes ?? (lines ?? 10) * BYTES_PER_LINE));
  if (lines !== undefined) {
    const chunks: Uint8Array[] = [];
    for await (const c of readAllocFile(io.api, allocId, p.path, { offset })) chunks.push(c);
    const data = Buffer.concat(chunks);
    offset += data.length;
    const all = data.toString("utf8").split("\n");
    if (all.at(-1) === "") all.pop();
    for (const l of all.slice(-lines)) printer.line(l);
  } else {
    for await (const c of readAllocFile(io.api, allocId, p.path, p.tail ? { offset } : {})) {
      offset += c.length;
      printer.write(c);
    }
  }
  while (p.follow) {
    await (io.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))))(FOLLOW_POLL_MS);
    for await (const c of readAllocFile(io.api, allocId, p.path, { offset })) {
      offset += c.length;
      printer.write(c);
    }
  }
  printer.end();
  return 0;
}

/** Whole lines out of a byte stream (a line split across chunks is printed once complete). */
function lineSplitter(io: CommandIO) {
  let pending = "";
  const decoder = new TextDecoder();
  return {
    line: (l: string) => io.stdout(l),
    write(chunk: Uint8Array) {
      pending += decoder.decode(chunk, { stream: true });
      const parts = pending.split("\n");
      pending = parts.pop()!;
      for (const l of parts) io.stdout(l);
    },
    end() {
      pending += decoder.decode();
      if (pending !== "") io.stdout(pending);
      pending = "";
    },
  };
}
