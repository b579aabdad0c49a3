/**
 * Hostpath volumes: a directory `<state-dir>/volumes/<id>` and its metadata `<state-dir>/meta/<id>.json`.
 * The id is derived from the CreateVolume name (so CreateVolume is idempotent by name without an
 * index) and is checked against a strict pattern before it is ever joined into a path.
 */
import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";

export interface HostpathVolume {
  id: string;
  name: string;
  capacityBytes: number;
  createdAt: string;
  /** What the volume was filled from at creation (clone or restore); absent for an empty volume. */
  contentSource?: { snapshotId: string } | { volumeId: string };
  /** Segments it is accessible from, from CreateVolume's accessibility_requirements (topology.ts). */
  accessibleTopology?: Record<string, string>[];
  /** CSI mutable_parameters, from CreateVolume or ControllerModifyVolume (modify_features.ts). */
  mutableParameters?: Record<string, string>;
}

const ID_RE = /^hp-[0-9a-f]{24}$/;

export function volumeIdFor(name: string): string {
  return "hp-" + crypto.createHash("sha256").update(name).digest("hex").slice(0, 24);
}

export function isVolumeId(id: string): boolean {
  return ID_RE.test(id);
}

export class VolumeStore {
  constructor(readonly stateDir: string) {}

  dirOf(id: string): string {
    if (!isVolumeId(id)) throw new Error(`bad volume id ${JSON.stringify(id)}`);
    return path.join(this.stateDir, "volumes", id);
  }

  private metaOf(id: string): string {
    if (!isVolumeId(id)) throw new Error(`bad volume id ${JSON.stringify(id)}`);
    return path.join(this.stateDir, "meta", id + ".json");
  }

  async init(): Promise<void> {
    await fs.mkdir(path.join(this.stateDir, "volumes"), { recursive: true });
    await fs.mkdir(path.join(this.stateDir, "meta"), { recursive: true });
  }

  /** Null for an unknown or malformed id. */
  async get(id: string): Promise<HostpathVolume | null> {
    if (!isVolumeId(id)) return null;
    try {
      return JSON.parse(await fs.readFile(this.metaOf(id), "utf8")) as HostpathVolume;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  async count(): Promise<number> {
    return (await fs.readdir(path.join(this.stateDir, "meta"))).filter((f) => f.endsWith(".json")).length;
  }

  /** Every volume id, sorted (ListVolumes pages through this order). */
  async list(): Promise<string[]> {
    const names = await fs.readdir(path.join(this.stateDir, "meta"));
    return names
      .filter((f) => f.endsWith(".json"))
      .map((f) => f.slice(0, -".json".length))
      .filter(isVolumeId)
      .sort();
  }

  /**
   * Directory first (then `fill`, which copies a clone's or snapshot's content into it), metadata
   * last, written atomically: a volume exists once its metadata does, so a crash half-way leaves no
   * volume and a retried create starts over. Also rewrites the metadata of an existing volume
   * (expansion), leaving its directory alone when there is no `fill`.
   */
  async create(v: HostpathVolume, fill?: (dir: string) => Promise<void>): Promise<void> {
    const dir = this.dirOf(v.id);
    if (fill) await fs.rm(dir, { recursive: true, force: true });
    // A new volume's root is writable by every user (0777, whatever the plugin's umask): the plugin
    // runs as root, the tasks that mount the volume as their own users (exec's default is nobody),
    // and a hostpath volume has no uid/gid mount options to map them. An existing root (expansion)
    // keeps whatever mode its users gave it.
    if ((await fs.mkdir(dir, { recursive: true })) !== undefined) await fs.chmod(dir, 0o777);
    if (fill) await fill(dir);
    const meta = this.metaOf(v.id);
    await fs.writeFile(meta + ".tmp", JSON.stringify(v) + "\n");
    await fs.rename(meta + ".tmp", meta);
  }

  /** Metadata first, so a half-deleted volume reads as gone and a retry finishes the job. */
  async delete(id: string): Promise<void> {
    await fs.rm(this.metaOf(id), { force: true });
    await fs.rm(this.dirOf(id), { recursive: true, force: true });
  }
}
