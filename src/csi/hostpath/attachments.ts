/**
 * Attachments of csi-hostpath's --attach-required mode: which node each volume is published to,
 * one file per (volume, node) at `<state-dir>/attachments/<volume id>/<node id, base64url>.json`.
 * They live in the state dir so a controller process and the node processes sharing that dir (the
 * emulated shared storage) see the same attachments. Node IDs are encoded, never joined raw.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { isVolumeId } from "./volumes.js";

export interface Attachment {
  volumeId: string;
  nodeId: string;
  /** The CSI access mode name it was published with (e.g. SINGLE_NODE_WRITER). */
  accessMode: string;
  readonly: boolean;
}

/** CSI access modes that allow the volume on one node only. */
export function isSingleNodeMode(mode: string): boolean {
  return mode.startsWith("SINGLE_NODE_");
}

export class AttachmentStore {
  constructor(readonly stateDir: string) {}

  private volumeDir(volumeId: string): string {
    if (!isVolumeId(volumeId)) throw new Error(`bad volume id ${JSON.stringify(volumeId)}`);
    return path.join(this.stateDir, "attachments", volumeId);
  }

  private fileOf(volumeId: string, nodeId: string): string {
    return path.join(this.volumeDir(volumeId), Buffer.from(nodeId).toString("base64url") + ".json");
  }

  /** Every attachment of the volume (none for an unknown or malformed id). */
  async list(volumeId: string): Promise<Attachment[]> {
    if (!isVolumeId(volumeId)) return [];
    let names: string[];
    try {
      names = await fs.readdir(this.volumeDir(volumeId));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    const out: Attachment[] = [];
    for (const n of names.filter((f) => f.endsWith(".json"))) {
      try {
        out.push(JSON.parse(await fs.readFile(path.join(this.volumeDir(volumeId), n), "utf8")) as Attachment);
      } catch (err) {
        // Removed between readdir and read by a concurrent unpublish: no longer attached.
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    }
    return out;
  }

  async get(volumeId: string, nodeId: string): Promise<Attachment | null> {
    return (await this.list(volumeId)).find((a) => a.nodeId === nodeId) ?? null;
  }

  /** Written atomically (temp file + rename). */
  async put(a: Attachment): Promise<void> {
    await fs.mkdir(this.volumeDir(a.volumeId), { recursive: true });
    const file = this.fileOf(a.volumeId, a.nodeId);
    await fs.writeFile(file + ".tmp", JSON.stringify(a) + "\n");
    await fs.rename(file + ".tmp", file);
  }

  /** Removes one attachment, or every attachment of the volume when `nodeId` is empty. Missing is fine. */
  async remove(volumeId: string, nodeId: string): Promise<void> {
    if (!isVolumeId(volumeId)) return;
    if (nodeId) await fs.rm(this.fileOf(volumeId, nodeId), { force: true });
    else await fs.rm(this.volumeDir(volumeId), { recursive: true, force: true });
  }
}
