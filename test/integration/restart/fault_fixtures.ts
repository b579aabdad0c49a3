/**
 * Pieces of the fault-injection run: a seeded PRNG, the per-volume CSI ordering check over a
 * csi-hostpath call log, the faults a round injects, and the batch job spec it runs.
 */
import type { CallRecord } from "../../../src/csi/hostpath/call_log.js";

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

/** Codes the client retries on any node call (DESIGN.md invariants). */
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
