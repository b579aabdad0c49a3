/**
 * The volumewatcher's memory of which volumes hold claims, by the allocs and nodes the claims name,
 * so a change to an alloc or a node leads straight to the volumes whose claims it can decide —
 * without reading any volume that has none. Pure (no I/O).
 *
 * It stays exact because every change to a volume's claims is a write of that volume, which the
 * watcher's next pass reads (the store's volumesModifiedSince) and records here with `set`; a
 * volume deleted is forgotten when a pass finds it gone. Claims name their alloc and node, so the
 * claims of an alloc that was garbage collected, or on a node that went down, are still found.
 */
import { liveClaims, type CSIVolume } from "../../structs/volume.js";

export interface IndexedVolume {
  namespace: string;
  id: string;
}

export class ClaimIndex {
  private readonly volumes = new Map<string, IndexedVolume & { allocs: string[]; nodes: string[] }>();
  private readonly byAlloc = new Map<string, Set<string>>();
  private readonly byNode = new Map<string, Set<string>>();

  get size(): number {
    return this.volumes.size;
  }

  /** Records the volume's claims (live and past) under `key`; a volume with none is forgotten. */
  set(key: string, vol: CSIVolume): void {
    this.forget(key);
    const claims = [...liveClaims(vol), ...Object.values(vol.PastClaims)];
    if (claims.length === 0) return;
    const allocs = [...new Set(claims.map((c) => c.AllocationID))];
    const nodes = [...new Set(claims.map((c) => c.NodeID))];
    this.volumes.set(key, { namespace: vol.Namespace, id: vol.ID, allocs, nodes });
    for (const a of allocs) add(this.byAlloc, a, key);
    for (const n of nodes) add(this.byNode, n, key);
  }

  forget(key: string): void {
    const prev = this.volumes.get(key);
    if (!prev) return;
    this.volumes.delete(key);
    for (const a of prev.allocs) remove(this.byAlloc, a, key);
    for (const n of prev.nodes) remove(this.byNode, n, key);
  }

  get(key: string): IndexedVolume | undefined {
    return this.volumes.get(key);
  }

  /** Keys of the volumes with a claim of one of `allocIds`. */
  ofAllocs(allocIds: Iterable<string>): Set<string> {
    return union(this.byAlloc, allocIds);
  }

  /** Keys of the volumes with a claim on one of `nodeIds`. */
  ofNodes(nodeIds: Iterable<string>): Set<string> {
    return union(this.byNode, nodeIds);
  }

  clear(): void {
    this.volumes.clear();
    this.byAlloc.clear();
    this.byNode.clear();
  }
}

function add(m: Map<string, Set<string>>, k: string, v: string): void {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(v);
}

function remove(m: Map<string, Set<string>>, k: string, v: string): void {
  const s = m.get(k);
  if (!s) return;
  s.delete(v);
  if (s.size === 0) m.delete(k);
}

function union(m: Map<string, Set<string>>, keys: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const k of keys) for (const v of m.get(k) ?? []) out.add(v);
  return out;
}
