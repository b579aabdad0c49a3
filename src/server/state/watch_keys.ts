/**
 * Watch keys: names of single objects within a store table, which commits report and blocking
 * queries wait on (watch.ts). A key is `<table>/<kind>:<id>`; the text before the first `/` is
 * the table (a StateStore Table name).
 */
import type { CSIVolume } from "../../structs/volume.js";

/** An object within a table, `<table>/<kind>:<id>` (IDs never hold `/` or `:`, structs/ids.ts). */
export type WatchKey = `${string}/${string}`;

/** The keys the stores record and the readers wait on. */
export const watchKeys = {
  node: (id: string): WatchKey => `nodes/id:${id}`,
  job: (namespace: string, id: string): WatchKey => `jobs/id:${namespace}/${id}`,
  alloc: (id: string): WatchKey => `allocs/id:${id}`,
  /** Any alloc placed on (or moved off, or deleted from) the node. */
  allocsOfNode: (nodeId: string): WatchKey => `allocs/node:${nodeId}`,
  /**
   * An alloc of the node written by the server (placed, stopped, moved, deleted, marked lost):
   * every alloc write but a client's own status report (AllocModifyIndex, store.ts putAlloc).
   */
  serverAllocsOfNode: (nodeId: string): WatchKey => `allocs/node-server:${nodeId}`,
  /** Any alloc of the job. */
  allocsOfJob: (namespace: string, jobId: string): WatchKey => `allocs/job:${namespace}/${jobId}`,
  volume: (namespace: string, id: string): WatchKey => `volumes/id:${namespace}/${id}`,
  plugin: (id: string): WatchKey => `plugins/id:${id}`,
};

/** The keys an alloc write moves: the alloc, its node's allocs, its job's allocs. */
export function allocWatchKeys(a: {
  ID: string;
  NodeID: string;
  Namespace: string;
  JobID: string;
}): WatchKey[] {
  return [
    watchKeys.alloc(a.ID),
    watchKeys.allocsOfNode(a.NodeID),
    watchKeys.allocsOfJob(a.Namespace, a.JobID),
  ];
}

/**
 * What a volume's full answer is read from: the volume, its plugin (health and the derived
 * fields) and the allocs its claims name (Allocations, ReadAllocs/WriteAllocs). A new claim writes
 * the volume itself, so the allocs that are not claiming yet need no key.
 */
export function volumeWatchKeys(
  state: { getVolume(ns: string, id: string): CSIVolume | undefined },
  namespace: string,
  id: string,
): WatchKey[] {
  const keys = [watchKeys.volume(namespace, id)];
  const v = state.getVolume(namespace, id);
  if (!v) return keys;
  keys.push(watchKeys.plugin(v.PluginID));
  const allocs = new Set([
    ...Object.keys(v.ReadClaims),
    ...Object.keys(v.WriteClaims),
    ...Object.keys(v.PastClaims),
  ]);
  for (const a of allocs) keys.push(watchKeys.alloc(a));
  return keys;
}
