/**
 * Which nodes one placement scores, as Nomad's generic stack chooses them on a big cluster:
 *
 * - **The order** is a shuffle of the ready nodes, seeded by the job and the store index the plan
 *   reads at (Nomad seeds by eval ID and index, "to aid in postmortem debugging"): the same state
 *   plans the same way, and two jobs do not pile onto the same nodes.
 * - **Each placement resumes** where the one before stopped (Nomad's StaticIterator keeps its
 *   offset across Select calls), wrapping round, so a pass's placements walk the whole list.
 * - **The limit:** a placement stops after `limitFor` nodes that pass feasibility and fit —
 *   max(2, ⌈log₂ n⌉) for a service job, 2 for a batch job ("the power of two choices"), and the
 *   larger of the group's count and 100 (Nomad's default node_limit_for_feasibility_checks) when
 *   the job has affinities or spreads, which need a wider view to be statistically right.
 * - **Skipping** (Nomad's LimitIterator): up to MAX_SKIP options whose score is ≤ 0 (a node that
 *   already runs the group, typically) are set aside and only taken if the nodes run out.
 *
 * berth's own floor: a cluster of at most SCORE_EVERY_NODE_UP_TO ready nodes is scored whole, in
 * the order given, from the first node each time (so placement there is deterministic, and ties go
 * to the first node). Scoring all is cheap at that size, and only ever picks a node Nomad could
 * pick; Kubernetes' scheduler scores every node of a cluster this small too (its
 * minFeasibleNodesToFind is 100). Above it, scoring every node for every alloc is what made
 * placement O(allocs × nodes) — 2.2 s of a 5 s pass of 1,000 allocs on 1,000 nodes.
 */
import type { Job, TaskGroup } from "../../structs/job.js";
import type { Node } from "../../structs/node.js";

/** Clusters up to this many ready nodes are scored whole, deterministically. */
export const SCORE_EVERY_NODE_UP_TO = 100;
/** Nomad's DefaultNodeLimitForFeasibilityChecks: the sample for jobs with affinities or spreads. */
export const NODE_LIMIT_FOR_FEASIBILITY_CHECKS = 100;
/** Nomad's skipScoreThreshold and maxSkip. */
export const SKIP_SCORE_THRESHOLD = 0;
export const MAX_SKIP = 3;

export class NodeSample {
  /** The nodes in visiting order. */
  readonly order: readonly Node[];
  /** True when every node is scored for every placement (a small cluster). */
  readonly whole: boolean;
  private offset = 0;

  constructor(nodes: readonly Node[], seed: string) {
    this.whole = nodes.length <= SCORE_EVERY_NODE_UP_TO;
    this.order = this.whole ? nodes : shuffled(nodes, seed);
  }

  /** How many ranked options a placement of `group` takes before it stops looking. */
  limitFor(job: Job, group: TaskGroup, hasAffinityOrSpread: boolean): number {
    if (this.whole) return Infinity;
    if (hasAffinityOrSpread) return Math.max(group.Count, NODE_LIMIT_FOR_FEASIBILITY_CHECKS);
    if (job.Type === "batch") return 2;
    return Math.max(2, Math.ceil(Math.log2(this.order.length)));
  }

  /**
   * Each node once, from where the previous placement stopped (the first node when `whole`); the
   * position a caller stops at (by leaving the loop) is where the next placement begins.
   */
  *visit(): Generator<Node, void, void> {
    const n = this.order.length;
    if (this.whole) {
      yield* this.order;
      return;
    }
    for (let seen = 0; seen < n; seen++) {
      const node = this.order[this.offset]!;
      this.offset = (this.offset + 1) % n;
      yield node;
    }
  }
}

/** A Fisher–Yates shuffle of a copy, driven by a PRNG seeded from `seed`. */
function shuffled(nodes: readonly Node[], seed: string): Node[] {
  const out = nodes.slice();
  const next = mulberry32(fnv1a(seed));
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** FNV-1a over the string's UTF-16 code units: a 32-bit seed. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a small, well-distributed 32-bit PRNG; returns floats in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
