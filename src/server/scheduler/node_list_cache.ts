/**
 * The node list a scheduling pass reads, parsed once per change of the nodes table rather than
 * once per plan: a big pass plans in many batches, and re-reading 1,000 node records for each took
 * 20–30 ms of a blocked event loop every time. Valid because the nodes table's index moves on
 * every node write (store.ts tableIndex), so an unmoved index means the stored list is exactly
 * what listNodes would return now. Plans only read the records (they are never mutated).
 *
 * The cache is filled only outside write transactions (list), from committed state. Inside one
 * (cached) it is only read: the store's table index there counts the batch's earlier writes, and a
 * list read mid-batch could belong to writes that a failed batch rolls back, whose indexes are then
 * handed out again; a committed index is never handed out again.
 */
import type { Node } from "../../structs/node.js";
import type { StateStore } from "../state/store.js";

export class NodeListCache {
  private at = -1;
  private nodes: Node[] = [];

  /** listNodes of `state`, from the cache when the nodes table has not moved since it was read. */
  list(store: Pick<StateStore, "tableIndex" | "listNodes">): Node[] {
    const at = store.tableIndex("nodes");
    if (at !== this.at) {
      this.nodes = store.listNodes();
      this.at = at;
    }
    return this.nodes;
  }

  /** The cached list when it is still the nodes table's content (safe inside a transaction). */
  cached(store: Pick<StateStore, "tableIndex">): Node[] | undefined {
    return store.tableIndex("nodes") === this.at ? this.nodes : undefined;
  }
}
