/**
 * The one reader of mountinfo (proc(5)): every layer that asks "what is mounted where" uses it.
 * /proc/self/mountinfo is this process's own mount namespace and root, so it is right when the
 * reader runs chrooted or in its own namespace. Paths in it are canonical (no symlinks) and
 * octal-escaped by the kernel (`\040` space, `\011` tab, `\012` newline, `\134` backslash); they are
 * decoded here. Field 4 is the root of the mount within its filesystem (for a bind mount, the
 * source directory relative to that filesystem), field 5 the mount point, fields 7.. up to the
 * "-" separator the optional fields (`shared:N`, `master:N`).
 *
 * Paths asked about are made canonical the same way before they are compared, so a caller that
 * names a directory through a symlink sees the same mounts as one that names it directly.
 */
import fs from "node:fs/promises";
import path from "node:path";

export interface MountEntry {
  /** Mount ID (field 1). */
  id: string;
  /** Root of the mount within its filesystem, decoded. */
  root: string;
  /** Mount point in the reader's view, decoded. */
  mountPoint: string;
  /** Per-mount options (field 6), e.g. `rw`, `ro`, `nosuid`. */
  options: string[];
  /** Optional fields, e.g. `shared:3`, `master:2`. */
  optional: string[];
  fsType: string;
  /** Mount source, decoded. */
  source: string;
  /** Per-superblock options (the last field), e.g. a v1 cgroup mount's controllers. */
  superOptions: string[];
}

export const SELF_MOUNTINFO = "/proc/self/mountinfo";

/** Decodes the kernel's octal escapes (`\040` → space). */
export function decodeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    const f = line.split(" ");
    // The separator comes after the six fixed fields and any optional ones.
    const sep = f.indexOf("-", 6);
    if (sep < 0 || f.length < sep + 3) continue;
    out.push({
      id: f[0]!,
      root: decodeMountPath(f[3]!),
      mountPoint: decodeMountPath(f[4]!),
      options: f[5]!.split(","),
      optional: f.slice(6, sep),
      fsType: f[sep + 1]!,
      source: decodeMountPath(f[sep + 2]!),
      superOptions: (f[sep + 3] ?? "").split(",").filter(Boolean),
    });
  }
  return out;
}

/** The mounts of `file` (this process's by default), in mount order. */
export async function readMounts(file = SELF_MOUNTINFO): Promise<MountEntry[]> {
  return parseMountinfo(await fs.readFile(file, "utf8"));
}

/**
 * The topmost mount at exactly `p`, or null. The parent of `p` is resolved with realpath, the last
 * component is not: a symlink is never a mount point, so a symlink at `p` pointing at some other
 * mount does not make `p` count as mounted.
 */
export async function mountAt(p: string, mounts?: MountEntry[]): Promise<MountEntry | null> {
  const target = await canonicalParent(p);
  const all = mounts ?? (await readMounts());
  for (let i = all.length - 1; i >= 0; i--) if (all[i]!.mountPoint === target) return all[i]!;
  return null;
}

/**
 * The mount point of the mount that holds `p` (`findmnt -T`): the deepest mount point that is `p`
 * or one of its ancestors, `p` made canonical first. "/" when nothing deeper holds it.
 */
export async function mountHolding(p: string, mounts?: MountEntry[]): Promise<string> {
  const target = await canonicalPath(p);
  let best = "/";
  for (const m of mounts ?? (await readMounts())) {
    const mp = m.mountPoint;
    if (mp.length > best.length && (target === mp || target.startsWith(mp.endsWith("/") ? mp : mp + "/")))
      best = mp;
  }
  return best;
}

/** Whether `p` is a mount point (see mountAt). */
export async function isMountPoint(p: string, mounts?: MountEntry[]): Promise<boolean> {
  return (await mountAt(p, mounts)) !== null;
}

/**
 * Every mount point at or below `dir`, canonical, deepest first. `dir` is resolved with realpath
 * once (a missing tail is kept as given), so a symlinked `dir` or ancestor finds its mounts.
 */
export async function mountsUnder(dir: string, mounts?: MountEntry[]): Promise<string[]> {
  const base = await canonicalPath(dir);
  const prefix = base.endsWith("/") ? base : base + "/";
  return (mounts ?? (await readMounts()))
    .map((m) => m.mountPoint)
    .filter((m) => m === base || m.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
}

/** realpath of `p`, or of its nearest existing ancestor joined with the rest. */
export async function canonicalPath(p: string): Promise<string> {
  const abs = path.resolve(p);
  try {
    return await fs.realpath(abs);
  } catch {
    const parent = path.dirname(abs);
    return parent === abs ? abs : path.join(await canonicalPath(parent), path.basename(abs));
  }
}

/** `p` with its parent made canonical and its last component kept as is. */
async function canonicalParent(p: string): Promise<string> {
  const abs = path.resolve(p);
  const parent = path.dirname(abs);
  return parent === abs ? abs : path.join(await canonicalPath(parent), path.basename(abs));
}
