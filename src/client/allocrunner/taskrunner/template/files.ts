/**
 * Where a template reads and writes, as Nomad's template hook resolves it (taskenv.ClientPath): the
 * path is `${NOMAD_*}`-interpolated with the host's paths; a relative one is taken from the task
 * dir, and so is an absolute destination (Nomad joins it under the task dir); the result must stay
 * inside the alloc dir ("template source/destination path escapes alloc directory").
 *
 * The task owns its directories and can plant links there at any time, so both the read and the
 * write walk from the alloc dir through directory handles without following links (no_follow.ts).
 * The output is written to a temporary file in the destination's directory, given its mode, and
 * renamed over the destination: a reader never sees half a file, and a link at the destination is
 * replaced, not followed.
 */
import { constants, type Stats } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { openDirNoFollow } from "../../../allocdir/no_follow.js";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;

/** consul-template has no limit; one keeps a stray source from filling the agent's memory. */
export const MAX_TEMPLATE_SOURCE_BYTES = 16 * 1024 * 1024;

/** A path below the alloc dir: its directory components and file name, relative to the alloc dir. */
export interface AllocRelPath {
  dir: string[];
  file: string;
  /** The absolute host path, for messages. */
  shown: string;
}

/**
 * Resolves a template path already interpolated with host paths. `joinAbsolute`: an absolute path
 * outside the alloc dir is taken under the task dir (Nomad does so for destinations only).
 */
export function resolveTemplatePath(
  interpolated: string,
  taskDir: string,
  allocRoot: string,
  joinAbsolute: boolean,
  what: "source" | "destination",
): AllocRelPath {
  let p = interpolated;
  if (!path.isAbsolute(p) || (joinAbsolute && escapes(path.normalize(p), allocRoot)))
    p = path.join(taskDir, p);
  p = path.normalize(p);
  if (escapes(p, allocRoot)) throw new Error(`template ${what} path escapes alloc directory`);
  const parts = path.relative(allocRoot, p).split(path.sep);
  const file = parts.pop();
  if (!file || file === "." || p.endsWith("/"))
    throw new Error(`template ${what} path ${JSON.stringify(interpolated)} names a directory`);
  return { dir: parts, file, shown: p };
}

function escapes(p: string, root: string): boolean {
  const rel = path.relative(root, p);
  return rel === "" || rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel);
}

function at(dir: fs.FileHandle, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** Reads a template source: a regular file, reached without following links. */
export async function readTemplateSource(allocRoot: string, p: AllocRelPath): Promise<string> {
  const dir = await openDirNoFollow(allocRoot, p.dir);
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(at(dir, p.file), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new Error(`source ${p.shown} does not exist`, { cause: err });
    if (code === "ELOOP")
      throw new Error(`source ${p.shown} is a symlink; berth does not follow links`, { cause: err });
    throw err;
  } finally {
    await dir.close();
  }
  try {
    const st: Stats = await fh.stat();
    if (!st.isFile()) throw new Error(`source ${p.shown} is not a regular file`);
    if (st.size > MAX_TEMPLATE_SOURCE_BYTES)
      throw new Error(`source ${p.shown} is larger than ${MAX_TEMPLATE_SOURCE_BYTES} bytes`);
    return await fh.readFile("utf8");
  } finally {
    await fh.close();
  }
}

/**
 * Writes `content` at the destination with `mode` (creating missing directories 0755), through a
 * temporary file renamed over it.
 */
export async function writeTemplateOutput(
  allocRoot: string,
  p: AllocRelPath,
  content: string,
  mode: number,
  /** Who owns the file (-1: unchanged, the agent's); absent: the agent's user. */
  owner?: { uid: number; gid: number },
): Promise<void> {
  const dir = await openDirNoFollow(allocRoot, p.dir, { create: true });
  const tmp = `.${p.file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const fh = await fs.open(at(dir, tmp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      await fh.writeFile(content);
      // chown before chmod: a chown clears set-id bits the mode may ask for.
      if (owner) await fh.chown(owner.uid, owner.gid);
      await fh.chmod(mode);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(at(dir, tmp), at(dir, p.file));
  } catch (err) {
    await fs.rm(at(dir, tmp), { force: true }).catch(() => undefined);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EISDIR" || code === "ENOTEMPTY")
      throw new Error(`destination ${p.shown} is a directory`, { cause: err });
    throw err;
  } finally {
    await dir.close();
  }
}

/** Nomad's `perms`: octal, at most 12 bits ("0644", "755"). */
export function parsePerms(perms: string): number {
  if (perms === "") return 0o644;
  if (!/^[0-7]{1,4}$/.test(perms)) throw new Error(`Failed to parse ${JSON.stringify(perms)} as octal`);
  return parseInt(perms, 8);
}
