/**
 * Pieces of the fault-injection run: a seeded PRNG, the per-volume CSI ordering check over a
 * csi-hostpath call log, the faults a round injects, the batch job spec it runs, and the wait for
 * a round's end that both runs (one server, three servers) share.
 */
import assert from "node:assert/strict";
import type { CallRecord } from "../../../src/csi/hostpath/call_log.js";
import { eventually } from "../../helpers/agent_process.js";
import { claimCount, type AllocView, type Cli, type VolumeView } from "./restart_fixtures.js";

/** mulberry32: a small seeded PRNG, so a failing run can be replayed with its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Ordering violations in a call log, per volume, over successful calls in log order (the plugin
 * runs one call per volume at a time, so completion order is execution order):
 * - a NodePublishVolume with no successful NodeStageVolume since the last NodeUnstageVolume;
 * - a NodeUnstageVolume while a target published since then has not been unpublished;
 * - at the end, a volume still staged or a target still published.
 */
export function orderingViolations(calls: CallRecord[]): string[] {
  const out: string[] = [];
  const state = new Map<string, { staged: boolean; published: Set<string> }>();
  calls.forEach((c, i) => {
    if (c.code !== "OK" || !c.method.startsWith("Node") || c.volume_id === "") return;
    let v = state.get(c.volume_id);
    if (!v) {
      v = { staged: false, published: new Set() };
      state.set(c.volume_id, v);
    }
    const target = c.target ?? "";
    if (c.method === "NodeStageVolume") v.staged = true;
    else if (c.method === "NodePublishVolume") {
      if (!v.staged) out.push(`#${i} ${c.volume_id}: NodePublishVolume of ${target} while not staged`);
      v.published.add(target);
    } else if (c.method === "NodeUnpublishVolume") v.published.delete(target);
    else if (c.method === "NodeUnstageVolume") {
      if (v.published.size > 0)
        out.push(`#${i} ${c.volume_id}: NodeUnstageVolume while ${[...v.published].join(", ")} published`);
      v.staged = false;
    }
  });
  for (const [id, v] of state) {
    if (v.staged) out.push(`${id}: still staged at the end`);
    if (v.published.size > 0) out.push(`${id}: ${[...v.published].join(", ")} still published at the end`);
  }
  return out;
}

export const NODE_METHODS = [
  "NodeStageVolume",
  "NodePublishVolume",
  "NodeUnpublishVolume",
  "NodeUnstageVolume",
] as const;

/** Codes the client retries on any node call (docs/design.md invariants). */
const RETRYABLE = ["UNAVAILABLE", "ABORTED", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED"];

/**
 * One round's faults: each node method fails 1–3 times with a retryable code with probability
 * 1/2; releases (unpublish/unstage, retried until they succeed) may also get INTERNAL; about one
 * round in eight hangs one method past the client's call deadline (`hangMs`).
 */
export function roundFaults(rand: () => number, hangMs: number): Record<string, object> {
  const faults: Record<string, object> = {};
  for (const m of NODE_METHODS) {
    if (rand() < 0.5) continue;
    const release = m === "NodeUnpublishVolume" || m === "NodeUnstageVolume";
    const codes = release ? [...RETRYABLE, "INTERNAL"] : RETRYABLE;
    faults[m] = { code: codes[Math.floor(rand() * codes.length)], times: 1 + Math.floor(rand() * 3) };
  }
  if (rand() < 0.125) {
    const m = NODE_METHODS[Math.floor(rand() * NODE_METHODS.length)]!;
    faults[m] = { hangMs, times: 1 };
  }
  return faults;
}

/**
 * A batch job of `count` allocs, alloc N writing to its own volume `vols[N]` (per_alloc) and
 * exiting. `marker` is in the task's argv so leftover task processes can be found.
 */
export function batchJob(id: string, count: number, marker: string): string {
  return `job "${id}" {
  type = "batch"
  group "g" {
    count = ${count}
    restart {
      attempts = 0
      mode     = "fail"
    }
    volume "data" {
      type            = "csi"
      source          = "vols"
      per_alloc       = true
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo ${id} > /data/f; : ${marker}"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`;
}

export function volumeSpec(id: string): string {
  return `id        = "${id}"
name      = "${id}"
type      = "csi"
plugin_id = "hostpath"
capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
`;
}

/**
 * The end of a round: waits (90 s) until the job's `pool` allocs have all ended and no volume of
 * `vols` holds a claim, then asserts every alloc completed. A timeout names the allocs not
 * complete with their statuses and task events. `cli` is asked again for each poll (the
 * several-servers run reaches whichever server is alive).
 */
export async function awaitRoundEnd(
  cli: () => Cli,
  job: string,
  vols: readonly string[],
  pool: number,
  round: number,
): Promise<AllocView[]> {
  let seen: AllocView[] = [];
  const allocs = await eventually(
    `round ${round}: ${job}'s allocs to end and every volume to be released`,
    async () => {
      const c = cli();
      const as = await c.get<AllocView[]>(`/v1/job/${job}/allocations`);
      seen = as ?? seen;
      if (!as || as.length !== pool) return undefined;
      if (as.some((a) => !["complete", "failed", "lost"].includes(a.ClientStatus))) return undefined;
      for (const id of vols) {
        const v = await c.get<VolumeView>(`/v1/volume/csi/${encodeURIComponent(id)}?claims=true`);
        if (!v || claimCount(v) !== 0) return undefined;
      }
      return as;
    },
    90_000,
    100,
  ).catch((err: unknown) => {
    const stuck = seen
      .filter((a) => a.ClientStatus !== "complete")
      .map((a) => ({ id: a.ID, status: a.ClientStatus, tasks: a.TaskStates }));
    throw new Error(`${(err as Error).message}; not complete: ${JSON.stringify(stuck)}`, {
      cause: err,
    });
  });
  const bad = allocs.filter((a) => a.ClientStatus !== "complete");
  assert.deepEqual(
    bad.map((a) => ({ id: a.ID, status: a.ClientStatus, states: a.TaskStates })),
    [],
    `round ${round}: every alloc completes`,
  );
  return allocs;
}
