/**
 * The Jepsen-style checker's pure parts (no I/O): each takes what the run recorded and returns the
 * violations it finds as readable lines (empty: none), so a failing run prints what went wrong.
 *
 * - writerOverlaps: from the volume's own write log (`<alloc id> <unix ns>` per line, appended by
 *   every writer), each alloc's writes form an interval [first, last]; two allocs whose intervals
 *   intersect wrote the single-writer volume at the same time. Intervals are the hull of an
 *   alloc's writes on purpose: an alloc that stopped writing and wrote again after another alloc
 *   had written still held the volume in between.
 * - publishViolations: from the plugin's call log, a ControllerPublishVolume to node X while the
 *   volume is attached to node Y (by the successful ControllerPublish/Unpublish calls before it).
 *   A publish the plugin refused with FAILED_PRECONDITION counts too: it was sent, and a plugin
 *   without that guard would have attached the volume to a second node.
 * - nodeCallOrder: the CSI node calls' order per (volume, node): the one-node check of
 *   fault_fixtures.ts (orderingViolations), run on each node's calls apart — two nodes stage one
 *   volume in turn, and a node that comes back releases its own staging while the other holds it.
 * - doubleRunning: samples of a count=1 job's allocs with more than one running.
 * - lostAcks: operations that returned 2xx and are not visible at the end.
 */
import type { CallRecord } from "../../../src/csi/hostpath/call_log.js";
import { orderingViolations } from "../restart/fault_fixtures.js";

export interface WriteInterval {
  alloc: string;
  /** Unix nanoseconds of the first and last write. */
  first: bigint;
  last: bigint;
  writes: number;
}

/** Parses the write log; malformed lines (a torn last line) are returned apart. */
export function parseWriteLog(text: string): { writes: { alloc: string; ns: bigint }[]; bad: string[] } {
  const writes: { alloc: string; ns: bigint }[] = [];
  const bad: string[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const m = /^([0-9a-f-]{8,}) (\d{10,})$/.exec(line);
    if (m) writes.push({ alloc: m[1]!, ns: BigInt(m[2]!) });
    else bad.push(line);
  }
  return { writes, bad };
}

/** Each alloc's interval, in order of first write. */
export function writeIntervals(writes: { alloc: string; ns: bigint }[]): WriteInterval[] {
  const by = new Map<string, WriteInterval>();
  for (const w of writes) {
    const i = by.get(w.alloc);
    if (!i) by.set(w.alloc, { alloc: w.alloc, first: w.ns, last: w.ns, writes: 1 });
    else {
      if (w.ns < i.first) i.first = w.ns;
      if (w.ns > i.last) i.last = w.ns;
      i.writes++;
    }
  }
  return [...by.values()].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
}

const ms = (ns: bigint) => Number(ns / 1_000_000n);

/** Every pair of allocs whose write intervals intersect, with the overlap and the writes in it. */
export function writerOverlaps(writes: { alloc: string; ns: bigint }[]): string[] {
  const iv = writeIntervals(writes);
  const out: string[] = [];
  for (let i = 0; i < iv.length; i++) {
    for (let j = i + 1; j < iv.length; j++) {
      const a = iv[i]!;
      const b = iv[j]!;
      if (b.first > a.last) continue;
      const from = b.first;
      const to = a.last < b.last ? a.last : b.last;
      const inside = (id: string) =>
        writes.filter((w) => w.alloc === id && w.ns >= from && w.ns <= to).length;
      out.push(
        `allocs ${a.alloc} and ${b.alloc} both wrote the volume for ${ms(to - from)} ms ` +
          `(from ${new Date(ms(from)).toISOString()} to ${new Date(ms(to)).toISOString()}; ` +
          `${inside(a.alloc)} and ${inside(b.alloc)} writes in that window)`,
      );
    }
  }
  return out;
}

/** ControllerPublishVolume to a node while the volume is attached to another (see the file comment). */
export function publishViolations(calls: CallRecord[]): string[] {
  const attached = new Map<string, Set<string>>();
  const out: string[] = [];
  calls.forEach((c, i) => {
    if (c.fault === true || c.volume_id === "") return;
    const nodes = attached.get(c.volume_id) ?? new Set<string>();
    attached.set(c.volume_id, nodes);
    if (c.method === "ControllerPublishVolume") {
      const others = [...nodes].filter((n) => n !== c.node_id);
      if (others.length > 0 && (c.code === "OK" || c.code === "FAILED_PRECONDITION")) {
        out.push(
          `#${i} ${new Date(c.time).toISOString()} ControllerPublishVolume(${c.volume_id} → ${c.node_id}) ` +
            `${c.code} while attached to ${others.join(", ")}`,
        );
      }
      if (c.code === "OK") nodes.add(c.node_id);
    } else if (c.method === "ControllerUnpublishVolume" && c.code === "OK") {
      if (c.node_id === "") nodes.clear();
      else nodes.delete(c.node_id);
    }
  });
  return out;
}

export interface AllocSample {
  /** Unix ms of the answer. */
  at: number;
  server: string;
  running: string[];
}

/** Samples in which a count=1 job had more than one running alloc. */
export function doubleRunning(samples: AllocSample[]): string[] {
  return samples
    .filter((s) => s.running.length > 1)
    .map((s) => `${new Date(s.at).toISOString()} via ${s.server}: running ${s.running.join(", ")}`);
}

export interface AckedOp {
  kind: "job-register" | "volume-create" | "alloc-stop";
  /** The job, volume or alloc ID. */
  id: string;
  via: string;
  /** "ok" (2xx), or the failure: such an op is indeterminate, never checked. */
  outcome: string;
}

/** Acknowledged ops for which `visible` says false. */
export function lostAcks(ops: AckedOp[], visible: (op: AckedOp) => boolean): string[] {
  return ops
    .filter((o) => o.outcome === "ok" && !visible(o))
    .map((o) => `${o.kind} ${o.id} (acknowledged by ${o.via}) is not visible at the end`);
}

/** orderingViolations per node: each node's node calls checked apart, violations named by node. */
export function nodeCallOrder(calls: CallRecord[]): string[] {
  const nodes = new Set(calls.filter((c) => c.method.startsWith("Node")).map((c) => c.node_id));
  return [...nodes].flatMap((n) =>
    orderingViolations(calls.filter((c) => c.node_id === n)).map((v) => `node ${n}: ${v}`),
  );
}
