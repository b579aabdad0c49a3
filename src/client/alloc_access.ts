/**
 * What the ClientAlloc.* handlers (rpc/client_alloc.ts) reach of an alloc this node runs: its dir
 * and its task runners, looked up in the alloc sync's runners. Undefined when the alloc has no
 * runner here (or a fake one without a dir).
 */
import { allocTaskGroup } from "../structs/alloc.js";
import type { AllocSync } from "./alloc_sync.js";
import type { AllocAccess } from "./rpc/alloc_peer.js";

export function allocAccess(sync: AllocSync | null, id: string): AllocAccess | undefined {
  const entry = sync?.runner(id);
  const r = entry?.runner;
  if (!entry || !r?.allocDir || !r.taskRunner) return undefined;
  const { allocDir, taskRunner } = r;
  return {
    root: allocDir.root,
    taskNames: () => (allocTaskGroup(entry.alloc)?.Tasks ?? []).map((t) => t.Name),
    task: (name) => taskRunner.call(r, name),
  };
}
