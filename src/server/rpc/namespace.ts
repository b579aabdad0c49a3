/**
 * Namespace endpoints (Nomad's Namespace.ListNamespaces / GetNamespace / UpsertNamespaces /
 * DeleteNamespaces). Every caller is allowed here; ACL checks are another layer's.
 *
 * Contracts:
 * - Upsert validates the whole record first (structs/namespace.ts) and writes it in one
 *   transaction; an unchanged record writes nothing and answers the index it was last written at.
 *   CreateIndex is kept across updates.
 * - Delete decides and deletes in ONE transaction: what lives in the namespace is read there, so a
 *   job or volume registered concurrently (whose own transaction reads the namespace) is either
 *   seen by the check or refused for the missing namespace, never left in a deleted one.
 *   A refused delete changes nothing.
 */
import { isAllocTerminal } from "../../structs/alloc.js";
import { BerthError, notFound } from "../../structs/errors.js";
import {
  DEFAULT_NAMESPACE,
  deleteRefusal,
  validateNamespace,
  type Namespace,
  type NamespaceContents,
} from "../../structs/namespace.js";
import type { StateReader, StateStore } from "../state/store.js";

export class NamespaceEndpoint {
  constructor(private readonly store: StateStore) {}

  /** By name; `prefix` keeps those whose name starts with it (Nomad's `?prefix=`). */
  list(prefix = ""): Namespace[] {
    return this.store.listNamespaces().filter((ns) => ns.Name.startsWith(prefix));
  }

  get(name: string): Namespace | undefined {
    return this.store.getNamespace(name);
  }

  /**
   * Creates or updates the namespace in the body. `pathName` is the name in the URL when the
   * route has one: the body must name the same namespace (Nomad's 400 otherwise). Resolves with
   * the index the record is stored at.
   */
  async upsert(input: unknown, pathName?: string): Promise<number> {
    const spec = validateNamespace(input);
    if (pathName !== undefined && spec.Name !== pathName) {
      throw new BerthError("ERR_VALIDATION", "Namespace name does not match request path", { field: "Name" });
    }
    const rec = await this.store.txn((tx) => tx.putNamespace(spec));
    return rec.ModifyIndex;
  }

  /** Deletes the namespace; refused (409, nothing changed) while anything lives in it. */
  async delete(name: string): Promise<number> {
    if (name === DEFAULT_NAMESPACE) {
      throw new BerthError("ERR_VALIDATION", deleteRefusal(name, emptyContents())!, { field: "name" });
    }
    await this.store.txn((tx) => {
      if (!tx.getNamespace(name)) throw notFound("namespace", name);
      const refusal = deleteRefusal(name, contentsOf(tx, name));
      if (refusal !== undefined) throw new BerthError("ERR_CONFLICT", refusal);
      tx.deleteNamespace(name);
    });
    return this.store.tableIndex("namespaces");
  }
}

function emptyContents(): NamespaceContents {
  return { liveJobs: [], liveAllocs: [], volumes: [] };
}

/** What holds the namespace, as deleteRefusal weighs it. */
export function contentsOf(state: StateReader, name: string): NamespaceContents {
  return {
    liveJobs: state
      .listJobs(name)
      .filter((j) => j.Status !== "dead")
      .map((j) => j.ID),
    liveAllocs: state
      .listAllocs(name)
      .filter((a) => !isAllocTerminal(a))
      .map((a) => a.ID),
    volumes: [
      ...state.listVolumes({ namespace: name }).map((v) => v.ID),
      ...state
        .listVolumeIntents()
        .filter((i) => i.Namespace === name)
        .map((i) => i.ID),
    ],
  };
}
