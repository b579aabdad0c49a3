/**
 * csi-hostpath snapshots: a full copy of a volume's directory at `<state-dir>/snapshots/<id>` with
 * its metadata at `<state-dir>/snapshot-meta/<id>.json`. The id is derived from the snapshot name
 * (CreateSnapshot is idempotent by name) and checked against a strict pattern before any path join.
 * The copy lands in a temporary directory renamed into place, and the metadata is written last, so
 * a snapshot exists exactly when its metadata does.
 */
import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";

export interface HostpathSnapshot {
  id: string;
  name: string;
  sourceVolumeId: string;
  sizeBytes: number;
  /** Unix milliseconds. */
  createdAt: number;
}

const ID_RE = /^snap-[0-9a-f]{24}$/;

export function snapshotIdFor(name: string): string {
  return "snap-" + crypto.createHash("sha256").update(name).digest("hex").slice(0, 24);
}

export function isSnapshotId(id: string): boolean {
  return ID_RE.test(id);
}

export class SnapshotStore {
  constructor(readonly stateDir: string) {}

  dirOf(id: string): string {
    if (!isSnapshotId(id)) throw new Error(`bad snapshot id ${JSON.stringify(id)}`);
    return path.join(this.stateDir, "snapshots", id);
  }

  private metaOf(id: string): string {
    if (!isSnapshotId(id)) throw new Error(`bad snapshot id ${JSON.stringify(id)}`);
    return path.join(this.stateDir, "snapshot-meta", id + ".json");
  }

  /** Null for an unknown or malformed id. */
  async get(id: string): Promise<HostpathSnapshot | null> {
    if (!isSnapshotId(id)) return null;
    try {
      return JSON.parse(await fs.readFile(this.metaOf(id), "utf8")) as HostpathSnapshot;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  /** Every snapshot, sorted by id. */
  async list(): Promise<HostpathSnapshot[]> {
    let names: string[];
    try {
      names = await fs.readdir(path.join(this.stateDir, "snapshot-meta"));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    const ids = names
      .filter((f) => f.endsWith(".json"))
      .map((f) => f.slice(0, -".json".length))
      .filter(isSnapshotId)
      .sort();
    const out: HostpathSnapshot[] = [];
    for (const id of ids) {
      const s = await this.get(id);
      if (s) out.push(s);
    }
    return out;
  }

  /** Copies `sourceDir` and records the snapshot. */
  async create(snap: HostpathSnapshot, sourceDir: string): Promise<void> {
    const dir = this.dirOf(snap.id);
    const tmp = `${dir}.tmp-${crypto.randomBytes(4).toString("hex")}`;
    await fs.mkdir(path.join(this.stateDir, "snapshot-meta"), { recursive: true });
    await fs.cp(sourceDir, tmp, { recursive: true, preserveTimestamps: true });
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rename(tmp, dir);
    const meta = this.metaOf(snap.id);
    await fs.writeFile(meta + ".tmp", JSON.stringify(snap) + "\n");
    await fs.rename(meta + ".tmp", meta);
  }

  /** Metadata first, so a half-deleted snapshot reads as gone. Unknown ids are a no-op. */
  async delete(id: string): Promise<void> {
    if (!isSnapshotId(id)) return;
    await fs.rm(this.metaOf(id), { force: true });
    await fs.rm(this.dirOf(id), { recursive: true, force: true });
  }
}
