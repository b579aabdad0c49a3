/**
 * What a Jepsen-style run records when a fault's recovery wait times out: each live server's view
 * of the nodes, the plugin (its per-node instances), the plugin job's and the app's allocs and the
 * evaluations, written as one JSON file in the run's dir (`state-<n>.json`, kept with the logs by
 * BERTH_JEPSEN_KEEP=1), so a stuck run can be read after the fact. Read-only: it changes nothing.
 */
import fs from "node:fs";
import path from "node:path";
import { getWithin, type JepsenCluster } from "./cluster.js";
import { APP } from "./workload.js";

const ROUTES = [
  "/v1/status/leader",
  "/v1/nodes",
  "/v1/plugin/csi/hostpath",
  "/v1/job/plugin/allocations",
  `/v1/job/${APP}/allocations`,
  "/v1/evaluations",
];

/** Dumps every live server's answers to ROUTES (and each node's full record); returns the file. */
export async function dumpState(cluster: JepsenCluster, label: string): Promise<string> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const s of cluster.live()) {
    const view: Record<string, unknown> = {};
    for (const r of ROUTES) view[r] = (await getWithin<unknown>(s.base, r, 5000)) ?? null;
    const nodes = (view["/v1/nodes"] ?? []) as { ID: string }[];
    for (const n of nodes)
      view[`/v1/node/${n.ID}`] = (await getWithin<unknown>(s.base, `/v1/node/${n.ID}`, 5000)) ?? null;
    out[s.name] = view;
  }
  const file = path.join(cluster.dir, `state-${label}.json`);
  fs.writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), label, servers: out }, null, 1));
  return file;
}
