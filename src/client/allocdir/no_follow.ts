/**
 * Creating and opening files below a directory a task can write to, without ever following a link.
 *
 * The agent runs as root; a task owns its task dir (under exec it is the task's root) and can put a
 * symlink (or a FIFO, or a hard link) wherever it likes there, at any moment, also while the agent
 * is creating or opening something. A path string checked with lstat and then opened is a race (the
 * task swaps the directory for a link between the two calls), and O_NOFOLLOW alone protects only the
 * last component: `logs/` itself may be the link.
 *
 * So every walk starts from an `anchor` the task cannot replace (the alloc dir: an exec task only
 * sees its task dir and /alloc; a raw_exec task runs as root on the host, where nothing can hold it
 * anyway) and goes one component at a time through open directory handles: each step opens
 * `/proc/self/fd/<parent fd>/<name>` with O_NOFOLLOW (plus O_DIRECTORY for directories). Once a
 * directory is open, renaming it or replacing its path with a link no longer changes what the handle
 * points to, so what is opened is always inside the directory that was checked — the race is closed,
 * not narrowed. Missing directories are created the same way (mkdir of `<fd path>/<name>` creates the
 * entry in that very directory and never follows a link at `name`: an existing link is EEXIST, and
 * the following O_NOFOLLOW open refuses it).
 */
import { constants } from "node:fs";
import fs from "node:fs/promises";
import { BerthError } from "../../structs/errors.js";

const { O_RDONLY, O_WRONLY, O_APPEND, O_CREAT, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

export interface NoFollowDirOptions {
  /** Create missing directories; otherwise a missing one is ENOENT. */
  create?: boolean;
  /**
   * Mode of the last directory when created (parents get 0755 before the umask, as `mkdir -p -m`):
   * set exactly, through the opened directory, whatever the agent's umask.
   */
  mode?: number;
}

/** The path of `name` inside the directory open as `dir`, resolved by the kernel through the fd. */
function at(dir: fs.FileHandle, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

function checkName(name: string): void {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    throw new BerthError("ERR_INTERNAL", `invalid path component ${JSON.stringify(name)}`);
  }
}

function refused(shown: string, why: string, cause?: unknown): BerthError {
  return new BerthError(
    "ERR_DRIVER",
    `${shown} ${why}; berth does not follow links or write through special files in a task's directories`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Opens the directory `anchor/rel[0]/…/rel[n-1]` (the anchor itself when `rel` is empty) and
 * returns its handle; no component below the anchor may be a symlink or anything but a directory.
 * The caller closes the handle.
 */
export async function openDirNoFollow(
  anchor: string,
  rel: readonly string[],
  opts: NoFollowDirOptions = {},
): Promise<fs.FileHandle> {
  rel.forEach(checkName);
  let dir = await fs.open(anchor, O_RDONLY | O_DIRECTORY);
  try {
    for (const [i, name] of rel.entries()) {
      const shown = [anchor, ...rel.slice(0, i + 1)].join("/");
      const last = i === rel.length - 1;
      let created = false;
      if (opts.create) {
        try {
          await fs.mkdir(at(dir, name), { mode: last ? (opts.mode ?? 0o755) : 0o755 });
          created = true;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        }
      }
      let next: fs.FileHandle;
      try {
        next = await fs.open(at(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ELOOP" || code === "ENOTDIR")
          throw refused(shown, "is a symlink or not a directory", err);
        throw err;
      }
      await dir.close();
      dir = next;
      if (created && last && opts.mode !== undefined) await dir.chmod(opts.mode);
    }
    return dir;
  } catch (err) {
    await dir.close();
    throw err;
  }
}

/** Creates the directories `anchor/rel…` that are missing, refusing links (see openDirNoFollow). */
export async function mkdirNoFollow(anchor: string, rel: readonly string[], mode?: number): Promise<void> {
  const dir = await openDirNoFollow(anchor, rel, { create: true, mode });
  await dir.close();
}

/**
 * Opens `anchor/rel…/file` for appending, creating it (mode 0644) and its missing directories. The
 * file must be a regular file with one link: a symlink is refused (O_NOFOLLOW), a FIFO cannot block
 * the agent (O_NONBLOCK: no reader is ENXIO, and fstat refuses it when there is one), and a hard link
 * the task made to a file elsewhere is refused by its link count.
 */
export async function openAppendNoFollow(
  anchor: string,
  rel: readonly string[],
  file: string,
): Promise<fs.FileHandle> {
  checkName(file);
  const shown = [anchor, ...rel, file].join("/");
  const dir = await openDirNoFollow(anchor, rel, { create: true });
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(at(dir, file), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o644);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw refused(shown, "is a symlink", err);
    if (code === "ENXIO" || code === "EISDIR") throw refused(shown, "is not a regular file", err);
    throw err;
  } finally {
    await dir.close();
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw refused(shown, "is not a regular file");
    if (st.nlink !== 1) throw refused(shown, `has ${st.nlink} hard links`);
    return fh;
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/**
 * Opens `anchor/rel…/file` for reading (logs a task can tamper with): the same walk and checks as
 * openAppendNoFollow, nothing created. A missing file is ENOENT.
 */
export async function openReadNoFollow(
  anchor: string,
  rel: readonly string[],
  file: string,
): Promise<fs.FileHandle> {
  checkName(file);
  const shown = [anchor, ...rel, file].join("/");
  const dir = await openDirNoFollow(anchor, rel);
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(at(dir, file), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw refused(shown, "is a symlink", err);
    throw err;
  } finally {
    await dir.close();
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw refused(shown, "is not a regular file");
    if (st.nlink !== 1) throw refused(shown, `has ${st.nlink} hard links`);
    return fh;
  } catch (err) {
    await fh.close();
    throw err;
  }
}
