/**
 * `berth logmon …`: a task's log collector (Nomad's logmon), one process per task start, started
 * detached by the agent (logmon_process.ts) so it outlives an agent restart. It reads the task's
 * two FIFOs (`.<task>.stdout.fifo`, `.<task>.stderr.fifo` in `<alloc dir>/<task>/logs/`) and
 * appends what comes to the rotated files (rotator.ts). The task holds the FIFOs' write ends; the
 * agent only opens them to hand them to the task, so killing the agent neither loses nor repeats a
 * byte and the task never notices. It exits 0 once both FIFOs reached end of file: every process
 * that held a write end (the task and whatever inherited its stdout) has closed it.
 *
 * Contract with the agent: a FIFO is opened for reading before this process writes anything, and
 * its open waits for the first writer (the agent's probe, logmon_process.ts waitReady).
 */
import { constants } from "node:fs";
import type fs from "node:fs/promises";
import { open } from "node:fs/promises";
import { parseArgs } from "node:util";
import { openDirNoFollow } from "../allocdir/no_follow.js";
import { atDir, fifoName, LOG_TYPES, logBase } from "./log_files.js";
import { RotatingWriter } from "./rotator.js";

export interface LogmonConfig {
  /** The alloc dir (`<data dir>/alloc/<alloc id>`), no task can replace it. */
  allocDir: string;
  task: string;
  maxFiles: number;
  maxFileBytes: number;
}

export const LOGMON_USAGE =
  "Usage: berth logmon --alloc-dir <dir> --task <name> --max-files <n> --max-file-bytes <bytes>";

export function parseLogmonArgs(argv: string[]): LogmonConfig {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      "alloc-dir": { type: "string" },
      task: { type: "string" },
      "max-files": { type: "string" },
      "max-file-bytes": { type: "string" },
    },
  });
  const count = (name: string, v: string | undefined): number => {
    if (v === undefined || !/^[1-9]\d{0,15}$/.test(v))
      throw new Error(`--${name} must be a positive integer`);
    return Number(v);
  };
  const allocDir = values["alloc-dir"] ?? "";
  const task = values.task ?? "";
  if (!allocDir.startsWith("/")) throw new Error("--alloc-dir must be an absolute path");
  if (task === "" || task.includes("/") || task === "." || task === "..")
    throw new Error("--task must name a task");
  return {
    allocDir,
    task,
    maxFiles: count("max-files", values["max-files"]),
    maxFileBytes: count("max-file-bytes", values["max-file-bytes"]),
  };
}

/**
 * Collects both streams until each FIFO's writers are gone. Both files are opened before either
 * FIFO, so a refused file (a link the task planted) fails the start before the agent's probe
 * finds a reader.
 */
export async function runLogmon(cfg: LogmonConfig): Promise<void> {
  const rel = [cfg.task, "logs"];
  const writers: RotatingWriter[] = [];
  try {
    for (const type of LOG_TYPES) {
      writers.push(
        await RotatingWriter.open({
          anchor: cfg.allocDir,
          rel,
          base: logBase(cfg.task, type),
          maxFiles: cfg.maxFiles,
          maxFileBytes: cfg.maxFileBytes,
        }),
      );
    }
    await Promise.all(
      LOG_TYPES.map((type, i) => pump(cfg.allocDir, rel, fifoName(cfg.task, type), writers[i]!)),
    );
  } finally {
    await Promise.all(writers.map((w) => w.close()));
  }
}

async function pump(anchor: string, rel: string[], fifoFile: string, writer: RotatingWriter): Promise<void> {
  const fifo = await openFifoReader(anchor, rel, fifoFile);
  try {
    for await (const chunk of fifo.createReadStream({ autoClose: false })) {
      await writer.write(chunk as Buffer);
    }
  } finally {
    await fifo.close();
  }
}

/** Opens the FIFO for reading (waiting, on a pool thread, for its first writer); refuses anything else. */
async function openFifoReader(anchor: string, rel: string[], name: string): Promise<fs.FileHandle> {
  const dir = await openDirNoFollow(anchor, rel);
  let fh: fs.FileHandle;
  try {
    fh = await open(atDir(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW);
  } finally {
    await dir.close();
  }
  if (!(await fh.stat()).isFIFO()) {
    await fh.close();
    throw new Error(`${[anchor, ...rel, name].join("/")} is not a FIFO`);
  }
  return fh;
}

/** `argv` is what follows `logmon`. Resolves with the process exit code. */
export async function logmonMain(argv: string[]): Promise<number> {
  let cfg: LogmonConfig;
  try {
    cfg = parseLogmonArgs(argv);
  } catch (err) {
    process.stderr.write(`logmon: ${(err as Error).message}\n${LOGMON_USAGE}\n`);
    return 2;
  }
  // Detached from the agent's session: a hangup is not ours to act on.
  process.on("SIGHUP", () => undefined);
  try {
    await runLogmon(cfg);
    return 0;
  } catch (err) {
    process.stderr.write(`logmon: ${(err as Error).message}\n`);
    // The other stream's FIFO open may still wait on a pool thread for a writer: exit anyway.
    process.exit(1);
  }
}
