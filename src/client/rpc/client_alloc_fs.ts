/**
 * ClientFS.List / Stat / ReadAt: Nomad's client FS endpoints (`alloc fs`) on this node's alloc dirs.
 *
 * The alloc dir is the one of a runner this agent has, else `<data dir>/alloc/<id>` when it is
 * still on disk (a finished alloc's files, as logs read them: client_alloc_logs.ts). The request's
 * path is confined lexically (allocdir/fs_path.ts) and then walked one component at a time through
 * open directory handles without following a link (allocdir/no_follow.ts): a task that plants a
 * symlink, or swaps a directory for one mid-walk, makes the request fail, never read outside its
 * alloc dir. A link at the end of the path is shown by stat and in listings (mode `L…`) but is
 * neither listed through nor read. Files in a task's secrets dir are never read (403). Which allocs
 * a caller may read is the server's check (read-fs in the alloc's namespace), made before it asks.
 */
import fs from "node:fs/promises";
import type { Stats } from "node:fs";
import { BerthError, notFound } from "../../structs/errors.js";
import { isValidId } from "../../structs/ids.js";
import { goFileMode } from "../../structs/file_mode.js";
import { sniffContentType, SNIFF_LEN } from "../../structs/content_sniff.js";
import { MAX_FS_READ, type AllocFileInfo } from "../../structs/rpc_fs.js";
import { allocPathParts, isSecretsPath } from "../allocdir/fs_path.js";
import { openDirNoFollow, openReadNoFollow } from "../allocdir/no_follow.js";
import type { AllocAccess, ClientAllocPeer } from "./alloc_peer.js";

/** Where an alloc's dir is: the walk starts at `anchor` and goes through `prefix` first. */
interface AllocRoot {
  anchor: string;
  prefix: string[];
  name: string;
}

export function registerAllocFsHandlers(
  peer: ClientAllocPeer,
  allocs: (id: string) => AllocAccess | undefined,
  allocsDir: string | undefined,
): void {
  const rootOf = async (id: string): Promise<AllocRoot> => {
    const a = allocs(id);
    if (a) return { anchor: a.root, prefix: [], name: id };
    if (allocsDir === undefined || !isValidId(id)) throw notFound("allocation", id);
    try {
      await (await openDirNoFollow(allocsDir, [id])).close();
    } catch (err) {
      if (isMissing(err)) throw notFound("allocation", id);
      throw err;
    }
    return { anchor: allocsDir, prefix: [id], name: id };
  };

  peer.handle("ClientFS.Stat", async (req) => {
    const root = await rootOf(req.AllocID);
    const parts = allocPathParts(req.Path);
    return guarded(req.Path, () => statOne(root, parts));
  });

  peer.handle("ClientFS.List", async (req) => {
    const root = await rootOf(req.AllocID);
    const parts = allocPathParts(req.Path);
    return guarded(req.Path, async () => {
      const dir = await openDirNoFollow(root.anchor, [...root.prefix, ...parts]);
      try {
        const names = (await fs.readdir(fdPath(dir))).sort();
        const out: AllocFileInfo[] = [];
        for (const name of names) {
          try {
            out.push(infoOf(name, await fs.lstat(`${fdPath(dir)}/${name}`), ""));
          } catch (err) {
            if (!isMissing(err)) throw err; // removed while listed: left out
          }
        }
        return out;
      } finally {
        await dir.close();
      }
    });
  });

  peer.handle("ClientFS.ReadAt", async (req) => {
    const root = await rootOf(req.AllocID);
    const parts = allocPathParts(req.Path);
    if (parts.length === 0)
      throw new BerthError("ERR_VALIDATION", "path: must name a file", { field: "path" });
    if (isSecretsPath(parts))
      throw new BerthError("ERR_PERMISSION_DENIED", `Reading secret file prohibited: ${req.Path}`);
    if (!Number.isSafeInteger(req.Offset) || req.Offset < 0)
      throw new BerthError("ERR_VALIDATION", "offset: must be a non-negative integer", { field: "offset" });
    return guarded(req.Path, async () => {
      const fh = await openReadNoFollow(root.anchor, [...root.prefix, ...parts.slice(0, -1)], parts.at(-1)!);
      try {
        const size = (await fh.stat()).size;
        const want = Math.max(0, Math.min(req.Limit, MAX_FS_READ, size - req.Offset));
        const buf = Buffer.alloc(want);
        const { bytesRead } = want > 0 ? await fh.read(buf, 0, want, req.Offset) : { bytesRead: 0 };
        return { Data: buf.subarray(0, bytesRead).toString("base64"), Size: size };
      } finally {
        await fh.close();
      }
    });
  });
}

/** The entry at `parts` (the alloc dir itself when empty), its link not followed. */
async function statOne(root: AllocRoot, parts: string[]): Promise<AllocFileInfo> {
  const parent = await openDirNoFollow(root.anchor, [...root.prefix, ...parts.slice(0, -1)]);
  try {
    const name = parts.at(-1);
    // The alloc dir itself through its handle (the /proc fd path is a link lstat would show).
    const st = name === undefined ? await parent.stat() : await fs.lstat(`${fdPath(parent)}/${name}`);
    const shown = name ?? root.name;
    let head: Uint8Array | null = null;
    if (st.isFile() && !isSecretsPath(parts)) {
      head = await readHead(root, parts).catch(() => null);
    }
    return infoOf(shown, st, sniffContentType(shown, st.isDirectory(), head));
  } finally {
    await parent.close();
  }
}

async function readHead(root: AllocRoot, parts: string[]): Promise<Uint8Array> {
  const fh = await openReadNoFollow(root.anchor, [...root.prefix, ...parts.slice(0, -1)], parts.at(-1)!);
  try {
    const buf = Buffer.alloc(SNIFF_LEN);
    const { bytesRead } = await fh.read(buf, 0, SNIFF_LEN, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

function infoOf(name: string, st: Stats, contentType: string): AllocFileInfo {
  return {
    Name: name,
    IsDir: st.isDirectory(),
    Size: st.size,
    FileMode: goFileMode(st.mode),
    ModTime: st.mtime.toISOString(),
    ContentType: contentType,
  };
}

function fdPath(fh: fs.FileHandle): string {
  return `/proc/self/fd/${fh.fd}`;
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * Runs one walk, naming the request's path (never the host's) in its errors: a missing entry is
 * 404; a link or a non-directory on the way, or a file that is not a regular one, is 400.
 */
async function guarded<T>(path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof BerthError && err.code === "ERR_DRIVER") {
      throw new BerthError(
        "ERR_VALIDATION",
        `path ${JSON.stringify(path)} is not a directory, or goes through a symlink or a special file: berth does not follow links in an alloc dir`,
        { field: "path" },
      );
    }
    if (isMissing(err))
      throw new BerthError("ERR_NOT_FOUND", `no such file or directory: ${JSON.stringify(path)}`);
    throw err;
  }
}
