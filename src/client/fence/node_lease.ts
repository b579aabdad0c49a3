/**
 * The node's lease with the servers, as the node sees it: when it last *sent* a heartbeat or a
 * registration that a server acknowledged, and the heartbeat TTL that server handed it. The age
 * is read on the monotonic clock (performance.now()), so a wall-clock step never shortens it.
 *
 * It is written to `<data dir>/client/lease.json` (wall time and TTL) on every renewal, so an agent
 * that restarts while cut off from the servers goes on counting from the last renewal of the
 * process before it, not from its own start; the wall clock is used only across that restart,
 * where no monotonic clock survives. A file that cannot be read is an agent that never renewed:
 * its lease starts at the agent's start with the default TTL.
 */
import fs from "node:fs/promises";
import { readFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { Logger } from "../../internal/log.js";
import { PRIVATE_FILE_MODE } from "../../internal/private_files.js";

/** The TTL assumed before any server named one (the servers' default heartbeat TTL). */
export const DEFAULT_LEASE_TTL_MS = 30_000;

interface StoredLease {
  renewedAtWallMs: number;
  ttlMs: number;
}

export class NodeLease {
  private renewedAt: number;
  private ttl: number;
  private writing: Promise<void> = Promise.resolve();

  /** `file`: where the lease is kept across restarts; null keeps it in memory only (simulated nodes). */
  constructor(
    private readonly file: string | null,
    private readonly log: Logger,
  ) {
    const stored = file === null ? null : readStored(file);
    const now = performance.now();
    this.ttl = stored?.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    this.renewedAt = stored ? now - Math.max(0, Date.now() - stored.renewedAtWallMs) : now;
  }

  /** The TTL of the last renewal (the servers' heartbeat TTL). */
  get ttlMs(): number {
    return this.ttl;
  }

  /** How long ago the last acknowledged renewal was sent (ms). */
  ageMs(now = performance.now()): number {
    return Math.max(0, now - this.renewedAt);
  }

  /** A renewal sent at `sentAt` (performance.now()) was acknowledged with `ttlMs`. */
  renewed(sentAt: number, ttlMs: number): void {
    if (sentAt < this.renewedAt) return;
    this.renewedAt = sentAt;
    this.ttl = ttlMs;
    if (this.file === null) return;
    const record: StoredLease = {
      renewedAtWallMs: Date.now() - (performance.now() - sentAt),
      ttlMs,
    };
    const file = this.file;
    this.writing = this.writing.then(() =>
      writeStored(file, record).catch((err: unknown) =>
        this.log.warn("could not record the node's lease renewal", { file, error: err }),
      ),
    );
  }

  /** Resolves once the renewals recorded so far are on disk (agent shutdown, tests). */
  flushed(): Promise<void> {
    return this.writing;
  }
}

export function leaseFile(clientDir: string): string {
  return path.join(clientDir, "lease.json");
}

function readStored(file: string): StoredLease | null {
  try {
    const v = JSON.parse(readFileSync(file, "utf8")) as Partial<StoredLease>;
    const ok =
      typeof v.renewedAtWallMs === "number" &&
      Number.isFinite(v.renewedAtWallMs) &&
      typeof v.ttlMs === "number" &&
      v.ttlMs > 0;
    return ok ? { renewedAtWallMs: v.renewedAtWallMs!, ttlMs: v.ttlMs! } : null;
  } catch {
    return null;
  }
}

async function writeStored(file: string, record: StoredLease): Promise<void> {
  const tmp = `${file}.tmp`;
  await fs.writeFile(tmp, JSON.stringify(record), { mode: PRIVATE_FILE_MODE });
  await fs.rename(tmp, file);
}
