/**
 * The scheduler's per-node usage index: for every node, what its live allocs hold — CPU MHz,
 * memory MiB, reserved cores and the CSI volumes they use — kept by deltas from the store's
 * ChangeReader (allocsModifiedSince), so a plan reads a node's usage in O(1) instead of reading
 * and summing the node's allocs (Nomad's ProposedAllocs costs, paid per node per plan before).
 *
 * Contract:
 * - After `refresh(store)` (synchronous) the index equals a from-scratch recount of the store's
 *   live allocs (not isAllocTerminal) at `store.index()`: each node's sums are the sums of
 *   usageOf(AllocatedResources) of its live allocs, and its volumes count, per volume, the live
 *   allocs on it whose task group requests that volume (per_alloc sources resolved to `Source[N]`).
 * - Each alloc's contribution is remembered by ID; a put alloc replaces its old contribution (on
 *   its old node, should it have moved) with its new one, none once terminal.
 * - Deleted records are not listed by the ChangeReader, so a live alloc's contribution is taken
 *   off when the index reads the put that made it terminal. That is enough because the store's
 *   only writer of deletes, the garbage collector (gc/decide.ts allocCollectable), deletes an alloc
 *   only once it has been terminal and unchanged for its threshold (an hour by default), and the
 *   scheduler refreshes the index at least every USAGE_REFRESH_MS (far shorter), besides before
 *   every pass: the terminal put is always read before the delete. Nodes are not held.
 * - `catchUp` does the same reading in slices, yielding to the event loop between them, so a first
 *   read of a large store (every alloc once) never holds the loop; `refresh` after it is a small
 *   delta. Records read across yields may be newer than the index the slice started from; a later
 *   delta lists them again and their contribution is replaced, so the result is still exact.
 */
import { performance } from "node:perf_hooks";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { allocIndex, allocTaskGroup, isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import { volumeSourceForAlloc } from "../../structs/job.js";
import { usageOf, type Usage } from "../../structs/resources_fit.js";
import type { ChangeReader, StateReader } from "../state/store.js";

/** The key of a CSI volume in the index: namespace and ID. */
export function volumeKey(namespace: string, id: string): string {
  return `${namespace}\u0000${id}`;
}

/** What one live alloc holds on its node. */
export interface Contribution {
  nodeId: string;
  usage: Usage;
  /** volumeKey of each CSI volume its group requests, once per request. */
  volumes: string[];
}

/** What a node's live allocs hold together. Read-only to callers. */
export interface NodeTotals {
  cpu: number;
  memoryMB: number;
  /** Reserved cores, once per alloc task that reserved each (a multiset). */
  cores: number[];
  /** volumeKey → how many live allocs on the node request it. */
  volumes: Map<string, number>;
  /** How many live allocs the node has. */
  allocs: number;
}

/** What a plan reads of the index. */
export interface NodeUsageView {
  /** The store index the view equals a recount at. */
  readonly index: number;
  /** The node's totals; undefined when it has no live alloc. */
  node(nodeId: string): Readonly<NodeTotals> | undefined;
  /** A live alloc's contribution; undefined when the alloc is not live (or unknown). */
  contribution(allocId: string): Readonly<Contribution> | undefined;
}

/** The CSI volumes an alloc's group requests, as volumeKeys. */
export function allocVolumeKeys(a: Allocation): string[] {
  const out: string[] = [];
  const group = allocTaskGroup(a);
  for (const r of Object.values(group?.Volumes ?? {})) {
    if (r.Type === "csi") out.push(volumeKey(a.Namespace, volumeSourceForAlloc(r, allocIndex(a))));
  }
  return out;
}

/**
 * The longest the scheduler leaves the index unrefreshed (see the file comment: it must stay well
 * under the garbage collector's alloc threshold).
 */
export const USAGE_REFRESH_MS = 30_000;

/** Longest synchronous stretch of catchUp between two yields. */
const SLICE_MS = 5;

export class NodeUsageIndex implements NodeUsageView {
  private at = 0;
  private readonly byAlloc = new Map<string, Contribution>();
  private readonly byNode = new Map<string, NodeTotals>();
  private catching: Promise<void> | null = null;

  get index(): number {
    return this.at;
  }

  node(nodeId: string): Readonly<NodeTotals> | undefined {
    return this.byNode.get(nodeId);
  }

  contribution(allocId: string): Readonly<Contribution> | undefined {
    return this.byAlloc.get(allocId);
  }

  /** Every node with live allocs (for tests and recounts). */
  nodes(): ReadonlyMap<string, Readonly<NodeTotals>> {
    return this.byNode;
  }

  /** Brings the index to `store.index()` in one synchronous stretch: O(allocs changed since). */
  refresh(store: StateReader & ChangeReader): void {
    const upTo = store.index();
    if (upTo === this.at) return;
    for (const id of store.allocsModifiedSince(this.at)) this.apply(id, store.getAlloc(id));
    this.at = upTo;
  }

  /**
   * Reads what changed in slices, yielding between them, until little is left; then `refresh`
   * (synchronous) finishes the job in the caller's turn.
   */
  catchUp(store: StateReader & ChangeReader): Promise<void> {
    // Concurrent passes share one catch-up: reading the same records twice would only waste time.
    this.catching ??= this.readSlices(store).finally(() => {
      this.catching = null;
    });
    return this.catching;
  }

  private async readSlices(store: StateReader & ChangeReader): Promise<void> {
    for (;;) {
      const upTo = store.index();
      if (upTo === this.at) return;
      const ids = store.allocsModifiedSince(this.at);
      if (ids.length < 256) return;
      let slice = performance.now();
      for (const id of ids) {
        if (performance.now() - slice >= SLICE_MS) {
          await yieldToLoop();
          slice = performance.now();
        }
        this.apply(id, store.getAlloc(id));
      }
      // Every alloc put up to `upTo` was read, at `upTo` or later (see the file comment).
      this.at = upTo;
    }
  }

  private apply(id: string, alloc: Allocation | undefined): void {
    const old = this.byAlloc.get(id);
    if (old) {
      this.subtract(old);
      this.byAlloc.delete(id);
    }
    if (!alloc || isAllocTerminal(alloc) || !alloc.NodeID) return;
    const c: Contribution = {
      nodeId: alloc.NodeID,
      usage: usageOf(alloc.AllocatedResources),
      volumes: allocVolumeKeys(alloc),
    };
    this.byAlloc.set(id, c);
    let t = this.byNode.get(c.nodeId);
    if (!t) {
      t = { cpu: 0, memoryMB: 0, cores: [], volumes: new Map(), allocs: 0 };
      this.byNode.set(c.nodeId, t);
    }
    t.cpu += c.usage.cpu;
    t.memoryMB += c.usage.memoryMB;
    t.cores.push(...c.usage.cores);
    for (const v of c.volumes) t.volumes.set(v, (t.volumes.get(v) ?? 0) + 1);
    t.allocs++;
  }

  private subtract(c: Contribution): void {
    const t = this.byNode.get(c.nodeId);
    if (!t) return;
    t.cpu -= c.usage.cpu;
    t.memoryMB -= c.usage.memoryMB;
    for (const core of c.usage.cores) {
      const i = t.cores.indexOf(core);
      if (i >= 0) t.cores.splice(i, 1);
    }
    for (const v of c.volumes) {
      const n = (t.volumes.get(v) ?? 0) - 1;
      if (n > 0) t.volumes.set(v, n);
      else t.volumes.delete(v);
    }
    t.allocs--;
    if (t.allocs === 0) this.byNode.delete(c.nodeId);
  }
}
