/**
 * Whether a plan made at index `from` is still the plan of the store as it is now, although other
 * writes landed since: on a busy cluster the nodes' claims and status updates land every few
 * milliseconds, and a pass that had to start again after each of them would place almost nothing.
 *
 * It is, when every write since `from` could only have freed what the plan relied on, never taken
 * it: no node, job, plugin, deployment or namespace was written (their tables' indexes have not
 * moved), no alloc was created (so no other pass placed anything; the allocs written are existing
 * ones changing status, which never makes an alloc hold more: resources are fixed at placement and
 * an alloc never comes back from terminal), and every volume written holds claims only of allocs
 * that existed at `from` (which the plan already counted as taking their volumes). A volume
 * deleted meanwhile is not seen here; its alloc then fails its claim, as it would had the delete
 * come right after the plan was written. O(records written since `from`).
 */
import type { ChangeReader, StateReader, Table } from "../state/store.js";

const UNTOUCHED: readonly Table[] = ["nodes", "jobs", "plugins", "deployments", "namespaces"];

export function stillValidSince(store: StateReader & ChangeReader, from: number): boolean {
  if (store.index() === from) return true;
  if (UNTOUCHED.some((t) => store.tableIndex(t) > from)) return false;
  for (const id of store.allocsModifiedSince(from)) {
    const a = store.getAlloc(id);
    if (!a || a.CreateIndex > from) return false;
  }
  for (const vol of store.volumesModifiedSince(from)) {
    if (vol.CreateIndex > from) return false;
    for (const claims of [vol.ReadClaims, vol.WriteClaims, vol.PastClaims]) {
      for (const allocId of Object.keys(claims)) {
        const a = store.getAlloc(allocId);
        if (a && a.CreateIndex > from) return false;
      }
    }
  }
  return true;
}
