/**
 * The task's ends of its log FIFOs (`.<task>.<type>.fifo` in its logs dir): made by the agent,
 * read by logmon, written by the task. Everything goes through the logs dir reached without links
 * (no_follow.ts), and only a FIFO is accepted where a FIFO is expected.
 */
import { execFile } from "node:child_process";
import { constants } from "node:fs";
import type fs from "node:fs/promises";
import { lstat, open } from "node:fs/promises";
import { promisify } from "node:util";
import { BerthError } from "../../structs/errors.js";
import { openDirNoFollow } from "../allocdir/no_follow.js";
import { atDir } from "./log_files.js";

const { O_WRONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Makes the FIFO `name` in `anchor/rel…` unless one is there; anything else by that name is refused. */
export async function ensureFifo(anchor: string, rel: readonly string[], name: string): Promise<void> {
  const dir = await openDirNoFollow(anchor, rel);
  try {
    const p = atDir(dir, name);
    const st = await lstat(p).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return null;
      throw err;
    });
    if (st?.isFIFO()) return;
    if (st) throw refused(anchor, rel, name, "exists and is not a FIFO");
    // mkfifo reaches the dir through this process's fd (its own /proc/self is not ours).
    await promisify(execFile)("mkfifo", ["-m", "0600", "--", `/proc/${process.pid}/fd/${dir.fd}/${name}`]);
  } finally {
    await dir.close();
  }
}

/**
 * A write end of the FIFO, without waiting: ENXIO while no reader has it open (a collector not
 * started yet, or gone). The handle is non-blocking, so it is for holding, never for a task.
 */
export async function openFifoProbe(
  anchor: string,
  rel: readonly string[],
  name: string,
): Promise<fs.FileHandle> {
  return openFifo(anchor, rel, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK);
}

/**
 * A blocking write end for the task's stdout/stderr. Checked first with a probe, so a FIFO that
 * nobody reads is an error (no collector is running) instead of an open that never returns.
 */
export async function openFifoWriter(
  anchor: string,
  rel: readonly string[],
  name: string,
): Promise<fs.FileHandle> {
  let probe: fs.FileHandle;
  try {
    probe = await openFifoProbe(anchor, rel, name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENXIO")
      throw refused(anchor, rel, name, "has no log collector reading it");
    throw err;
  }
  try {
    // A reader is there and stays while the probe is held: this open returns at once.
    return await openFifo(anchor, rel, name, O_WRONLY | O_NOFOLLOW);
  } finally {
    await probe.close();
  }
}

async function openFifo(
  anchor: string,
  rel: readonly string[],
  name: string,
  flags: number,
): Promise<fs.FileHandle> {
  const dir = await openDirNoFollow(anchor, rel);
  let fh: fs.FileHandle;
  try {
    fh = await open(atDir(dir, name), flags);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw refused(anchor, rel, name, "is a symlink");
    throw err;
  } finally {
    await dir.close();
  }
  if (!(await fh.stat()).isFIFO()) {
    await fh.close();
    throw refused(anchor, rel, name, "is not a FIFO");
  }
  return fh;
}

function refused(anchor: string, rel: readonly string[], name: string, why: string): BerthError {
  return new BerthError("ERR_DRIVER", `log pipe ${[anchor, ...rel, name].join("/")} ${why}`);
}
