/**
 * Waiting for this server's view of the state to reach an index another server wrote at. With
 * etcd every server reads from its own replica (state/etcd_store.ts), which applies the others'
 * commits a moment after they land: a pass the leader runs for a follower must see the follower's
 * write first (MinIndex), and a follower answering with the leader's eval must see that eval.
 */
import { TABLES, type StateStore } from "../state/store.js";

export type IndexedStore = Pick<StateStore, "index" | "waitFor">;

/** Longest single wait: a commit that moves no table still ends the wait within this. */
const RECHECK_MS = 100;

/** Resolves true once `store.index()` ≥ `index`, false when `timeoutMs` passes first. */
export async function awaitIndex(
  store: IndexedStore,
  index: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (store.index() < index) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await store.waitFor(TABLES, store.index(), signal, Math.min(left, RECHECK_MS));
  }
  return true;
}
