/**
 * Counts of the cluster's claims for metrics, kept by deltas as the volumewatcher reads volumes
 * (watcher.ts examine): every change to a volume's claims is a write of that volume, which the
 * watcher's next pass reads, so the counts follow the store without ever reading every volume —
 * a scrape costs O(1) for the totals, O(volumes with a pending release) for the oldest one and
 * O(volumes reporting usage) for the usage gauges. Pure (no I/O, `now` passed in).
 *
 * - Claims by mode: the live claims (read and write), whatever their release state.
 * - Pending releases: the claims the watcher sorted as to release or to wait for (decide.ts: any
 *   state past `taken`, a finished alloc, a down node), by claim state (the release walk's
 *   checkpoint), and by the step a claim's recorded ReleaseStatus says is failing or waiting.
 * - The oldest pending release: since when this server first saw it pending (a restarted server
 *   starts counting again at its first pass; the claim records no start time).
 * - Volume usage (`CSIVolume.Usage`, reported by the node for a published volume) and the
 *   controller's condition (`CSIVolume.ControllerCondition`, polled by the leader), read
 *   defensively: a record without them, or with malformed ones, has none. The abnormal flag is
 *   set when either side reports abnormal; a volume with only the controller's condition has no
 *   node and no figures.
 */
import type { ClaimState, CSIVolume, VolumeClaim } from "../../structs/volume.js";

export interface VolumeUsageFigures {
  namespace: string;
  volumeId: string;
  pluginId: string;
  nodeId: string;
  bytesUsed?: number;
  bytesAvailable?: number;
  bytesTotal?: number;
  inodesUsed?: number;
  inodesAvailable?: number;
  inodesTotal?: number;
  abnormal?: boolean;
}

export interface CensusSnapshot {
  claims: { read: number; write: number };
  pendingByState: Map<ClaimState, number>;
  failingByStep: Map<string, number>;
  /** Seconds the oldest pending release has been pending; 0 when none is. */
  oldestPendingSeconds: number;
  usage: VolumeUsageFigures[];
}

interface Pending {
  state: ClaimState;
  step: string | undefined;
  since: number;
}

interface Entry {
  read: number;
  write: number;
  pending: Map<string, Pending>;
  usage: VolumeUsageFigures | undefined;
}

export class ClaimCensus {
  private readonly entries = new Map<string, Entry>();
  private readonly withPending = new Set<string>();
  private readonly withUsage = new Set<string>();
  private read = 0;
  private write = 0;
  private readonly byState = new Map<ClaimState, number>();
  private readonly byStep = new Map<string, number>();

  /** Records what `vol` (stored under `key`) holds now; `pending` are its claims to release. */
  set(key: string, vol: CSIVolume, pending: readonly VolumeClaim[], now: number): void {
    const prev = this.entries.get(key);
    this.forget(key);
    const entry: Entry = {
      read: Object.keys(vol.ReadClaims).length,
      write: Object.keys(vol.WriteClaims).length,
      pending: new Map(),
      usage: usageOf(vol),
    };
    for (const c of pending) {
      const since = prev?.pending.get(c.AllocationID)?.since ?? now;
      entry.pending.set(c.AllocationID, { state: c.State, step: c.ReleaseStatus?.Step, since });
    }
    if (entry.read + entry.write + entry.pending.size === 0 && !entry.usage) return;
    this.entries.set(key, entry);
    this.add(entry, 1);
    if (entry.pending.size > 0) this.withPending.add(key);
    if (entry.usage) this.withUsage.add(key);
  }

  forget(key: string): void {
    const prev = this.entries.get(key);
    if (!prev) return;
    this.add(prev, -1);
    this.entries.delete(key);
    this.withPending.delete(key);
    this.withUsage.delete(key);
  }

  clear(): void {
    for (const key of [...this.entries.keys()]) this.forget(key);
  }

  snapshot(now: number): CensusSnapshot {
    let oldest = now;
    for (const key of this.withPending) {
      for (const p of this.entries.get(key)?.pending.values() ?? []) oldest = Math.min(oldest, p.since);
    }
    const usage: VolumeUsageFigures[] = [];
    for (const key of this.withUsage) {
      const u = this.entries.get(key)?.usage;
      if (u) usage.push(u);
    }
    return {
      claims: { read: this.read, write: this.write },
      pendingByState: new Map(this.byState),
      failingByStep: new Map(this.byStep),
      oldestPendingSeconds: Math.max(0, (now - oldest) / 1000),
      usage,
    };
  }

  private add(e: Entry, sign: 1 | -1): void {
    this.read += sign * e.read;
    this.write += sign * e.write;
    for (const p of e.pending.values()) {
      bump(this.byState, p.state, sign);
      if (p.step !== undefined) bump(this.byStep, p.step, sign);
    }
  }
}

function bump<K>(m: Map<K, number>, k: K, by: number): void {
  const n = (m.get(k) ?? 0) + by;
  if (n === 0) m.delete(k);
  else m.set(k, n);
}

/**
 * `vol.Usage` as the node reported it, with `vol.ControllerCondition`'s abnormal flag folded in ({NodeID, BytesUsed, BytesAvailable, BytesTotal, InodesUsed,
 * InodesAvailable, InodesTotal, Abnormal, Message, UpdateTime}), figures that are not finite
 * numbers left out; undefined when the volume has no usage object. The Message is never kept: it
 * is free text from a plugin and no metric label carries free text.
 */
function usageOf(vol: CSIVolume): VolumeUsageFigures | undefined {
  const u = (vol as { Usage?: unknown }).Usage;
  const cc = (vol as { ControllerCondition?: unknown }).ControllerCondition;
  const ctl = typeof cc === "object" && cc !== null ? (cc as { Abnormal?: unknown }).Abnormal : undefined;
  if (typeof u !== "object" || u === null) {
    // Only the controller's condition (ControllerGetVolume): no node, no figures.
    if (typeof ctl !== "boolean") return undefined;
    return { namespace: vol.Namespace, volumeId: vol.ID, pluginId: vol.PluginID, nodeId: "", abnormal: ctl };
  }
  const r = u as Record<string, unknown>;
  const num = (k: string) => {
    const v = r[k];
    return typeof v === "number" && Number.isFinite(v) ? v : undefined;
  };
  const out: VolumeUsageFigures = {
    namespace: vol.Namespace,
    volumeId: vol.ID,
    pluginId: vol.PluginID,
    nodeId: typeof r.NodeID === "string" ? r.NodeID : "",
  };
  const figures = [
    ["BytesUsed", "bytesUsed"],
    ["BytesAvailable", "bytesAvailable"],
    ["BytesTotal", "bytesTotal"],
    ["InodesUsed", "inodesUsed"],
    ["InodesAvailable", "inodesAvailable"],
    ["InodesTotal", "inodesTotal"],
  ] as const;
  for (const [from, to] of figures) {
    const v = num(from);
    if (v !== undefined) out[to] = v;
  }
  if (typeof r.Abnormal === "boolean") out.abnormal = r.Abnormal;
  // Abnormal when either side says so.
  if (typeof ctl === "boolean") out.abnormal = out.abnormal === true || ctl;
  return out;
}
