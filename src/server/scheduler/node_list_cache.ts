/**
 * The node list a scheduling pass reads, parsed once per node write rather than once per plan: a
 * big pass plans in many batches, and re-reading 1,000 node records for each took 20–30 ms of a
 * blocked event loop every time. Valid because the nodes table's index moves on every node write
 * (store.ts tableIndex), so an unmoved index means the stored list is exactly what listNodes would
 * return now. Plans only read the records (they are never mutated).
 *
 * When the index has moved, the list follows by delta: the nodes written since (ChangeReader
 * nodesModifiedSince) are read again and put in their places, in ID order as listNodes has them.
 * A deletion lists nothing, so a list that may have missed one (nodesDeletedAt above the last
 * read) is read whole again, as is one where most nodes changed. So one fingerprint update of a
 * 5,000-node cluster costs one node's parse, not 5,000 (45 ms).
 *
 * Each change yields a new array: a pass holding the previous one across a yield keeps reading the
 * state it planned on.
 *
 * The cache is filled only outside write transactions (list), from committed state. Inside one
 * (cached) it is only read: the store's table index there counts the batch's earlier writes, and a
 * list read mid-batch could belong to writes that a failed batch rolls back, whose indexes are then
 * handed out again; a committed index is never handed out again.
 */
import type { Node } from "../../structs/node.js";
import type { StateStore } from "../state/store.js";

type NodeSource = Pick<
  StateStore,
  "tableIndex" | "listNodes" | "getNode" | "nodesModifiedSince" | "nodesDeletedAt"
>;

export class NodeListCache {
  private at = -1;
  private nodes: Node[] = [];
  /** How many whole reads and delta reads the cache has made (for tests and benchmarks). */
  readonly reads = { whole: 0, delta: 0 };

  /** listNodes of `store`, from the cache when the nodes table has not moved since it was read. */
  list(store: NodeSource): Node[] {
    const at = store.tableIndex("nodes");
    if (at === this.at) return this.nodes;
    const changed = this.at < 0 || store.nodesDeletedAt() > this.at ? undefined : this.follow(store);
    if (changed) {
      this.nodes = changed;
      this.reads.delta++;
    } else {
      this.nodes = store.listNodes();
      this.reads.whole++;
    }
    this.at = at;
    return this.nodes;
  }

  /** The cached list when it is still the nodes table's content (safe inside a transaction). */
  cached(store: Pick<StateStore, "tableIndex">): Node[] | undefined {
    return store.tableIndex("nodes") === this.at ? this.nodes : undefined;
  }

  /** The list with the nodes written since `at` in their places; undefined when a whole read is due. */
  private follow(store: NodeSource): Node[] | undefined {
    const ids = store.nodesModifiedSince(this.at);
    if (ids.length * 2 > this.nodes.length) return undefined;
    const next = this.nodes.slice();
    for (const id of ids) {
      const node = store.getNode(id);
      // Gone again since the deletion check: only a whole read is sure to match.
      if (!node) return undefined;
      const at = positionOf(next, id);
      if (at < next.length && next[at]!.ID === id) next[at] = node;
      else next.splice(at, 0, node);
    }
    return next;
  }
}

/** Where `id` is, or belongs, in `nodes` sorted by ID as SQLite sorts text (bytes of UTF-8). */
function positionOf(nodes: readonly Node[], id: string): number {
  let lo = 0;
  let hi = nodes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareUtf8(nodes[mid]!.ID, id) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Compares as SQLite's BINARY collation does: by UTF-8 bytes, which is code point order. JavaScript's
 * `<` compares UTF-16 units, which differs for characters above U+FFFF against U+E000–U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}
