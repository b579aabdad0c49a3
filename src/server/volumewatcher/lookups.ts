/** One volumewatcher pass's reads of allocs and nodes: each read at most once per pass. */
import type { StateStore } from "../state/store.js";

/** The allocs and nodes one pass reads, each at most once. */
export class Lookups {
  private readonly allocs = new Map<string, ReturnType<StateStore["getAlloc"]>>();
  private readonly nodes = new Map<string, ReturnType<StateStore["getNode"]>>();
  constructor(private readonly store: StateStore) {}
  readonly alloc = (id: string) => {
    if (!this.allocs.has(id)) this.allocs.set(id, this.store.getAlloc(id));
    return this.allocs.get(id);
  };
  readonly node = (id: string) => {
    if (!this.nodes.has(id)) this.nodes.set(id, this.store.getNode(id));
    return this.nodes.get(id);
  };
}
