/** Allocation reads. */
import type { Allocation } from "../../structs/alloc.js";
import { notFound } from "../../structs/errors.js";
import type { ServerDeps } from "../deps.js";

export class AllocEndpoint {
  constructor(private readonly deps: ServerDeps) {}

  list(namespace?: string): Allocation[] {
    return this.deps.store.listAllocs(namespace);
  }

  get(id: string): Allocation {
    const alloc = this.deps.store.getAlloc(id);
    if (!alloc) throw notFound("allocation", id);
    return alloc;
  }
}
