/**
 * Mount table reads from /proc/self/mountinfo (this process's own mount namespace and root, so it
 * is right when the plugin runs chrooted or in its own namespace). Paths are octal-decoded (`\040`
 * is a space). Field 4 is the root of the mount within its filesystem (for a bind mount, the source
 * directory relative to that filesystem), field 5 the mount point.
 */
import fs from "node:fs/promises";
import path from "node:path";

export interface MountEntry {
  root: string;
  mountPoint: string;
  options: string[];
  fsType: string;
  source: string;
}

export function decodeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    const fields = line.split(" ");
    const sep = fields.indexOf("-");
    if (sep < 6 || fields.length < sep + 3) continue;
    out.push({
      root: decodeMountPath(fields[3]!),
      mountPoint: decodeMountPath(fields[4]!),
      options: fields[5]!.split(","),
      fsType: fields[sep + 1]!,
      source: decodeMountPath(fields[sep + 2]!),
    });
  }
  return out;
}

export async function readMounts(): Promise<MountEntry[]> {
  return parseMountinfo(await fs.readFile("/proc/self/mountinfo", "utf8"));
}

/** The topmost mount at exactly `p` (after resolving symlinks of its parent), or null. */
export async function mountAt(p: string): Promise<MountEntry | null> {
  const target = await canonical(p);
  const mounts = await readMounts();
  for (let i = mounts.length - 1; i >= 0; i--) if (mounts[i]!.mountPoint === target) return mounts[i]!;
  return null;
}

/** Every mount point at or below `dir`, deepest first. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const base = await canonical(dir);
  const prefix = base.endsWith("/") ? base : base + "/";
  return (await readMounts())
    .map((m) => m.mountPoint)
    .filter((m) => m === base || m.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
}

/** realpath of `p`, or of its nearest existing ancestor joined with the rest. */
async function canonical(p: string): Promise<string> {
  const abs = path.resolve(p);
  try {
    return await fs.realpath(abs);
  } catch {
    const parent = path.dirname(abs);
    return parent === abs ? abs : path.join(await canonical(parent), path.basename(abs));
  }
}
