/**
 * `PUT /v1/system/gc` (Nomad's force GC): one collection pass with every threshold 0, so whatever
 * may ever be collected goes now (allocs and jobs still holding a claim, live jobs' history and
 * nodes that are not down stay). It runs as one state transaction on the server asked; the leader's
 * periodic pass is the same code with the configured thresholds.
 */
import type { Logger } from "../../internal/log.js";
import type { StateStore } from "../state/store.js";
import { collectOnce, FORCE_GC } from "./collector.js";

export interface SystemGc {
  /** Runs the forced pass; what it removed. */
  force(): Promise<{ jobs: string[]; allocs: string[]; nodes: string[]; evals: string[] }>;
}

export function systemGc(store: StateStore, log: Logger): SystemGc {
  return { force: () => collectOnce(store, log, Date.now(), FORCE_GC) };
}
