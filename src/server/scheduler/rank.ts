/**
 * Picks the node for one alloc as Nomad's generic stack does: the feasibility checks
 * (feasibility.ts), then distinct_hosts and distinct_property, then ranking — binpack (Nomad's
 * default algorithm: fuller nodes first, and a node without room for the alloc's CPU, memory or
 * cores is exhausted), job anti-affinity (a penalty per alloc of the same job and group already on
 * the node), node affinity (matched weights over the sum of |weights|) and spread — the scores
 * averaged (Nomad's ScoreNormalizationIterator). The highest wins; ties go to the first node
 * visited. Which nodes are visited, and how many ranked options are enough, is the NodeSample's
 * (node_sample.ts: every node of a small cluster, Nomad's shuffled limited sample of a big one).
 * Pure over the PlanContext apart from the sample's position; O(1) per node with the plan's usage
 * index (proposed_usage.ts), else O(allocs on each node) once per plan; plus O(allocs of the job)
 * per placement.
 */
import type { AllocatedResources, Allocation } from "../../structs/alloc.js";
import {
  DISTINCT_HOSTS,
  checkOperand,
  resolveTarget,
  type Constraint,
  type ConstraintCache,
} from "../../structs/constraint.js";
import { recordExhausted, recordNode, type AllocMetric } from "../../structs/eval.js";
import type { Job, TaskGroup } from "../../structs/job.js";
import type { Affinity } from "../../structs/job_stanzas.js";
import type { Node } from "../../structs/node.js";
import { allocateGroup, binPackScore, fitGroup, type Usage } from "../../structs/resources_fit.js";
import { constraintCache, feasibilityFor, type PlanContext } from "./feasibility.js";
import { MAX_SKIP, SKIP_SCORE_THRESHOLD, type NodeSample } from "./node_sample.js";
import { proposedUsageFor } from "./proposed_usage.js";
import {
  SpreadScorer,
  countedJobAllocs,
  distinctProperties,
  distinctPropertyReason,
} from "./property_sets.js";

export interface Selection {
  node: Node;
  /** What the alloc gets on the node. */
  resources: AllocatedResources;
  /** The normalised score, and each scorer's part (Nomad's score names). */
  score: number;
  scores: Record<string, number>;
}

/** Nomad's hasDistinctHostsConstraint: RTarget "" or anything but a false boolean enables it. */
function distinctHosts(constraints: Constraint[] | undefined): boolean {
  const c = (constraints ?? []).find((x) => x.Operand === DISTINCT_HOSTS);
  if (!c) return false;
  return !["false", "0", "f", "F", "FALSE", "False"].includes(c.RTarget);
}

/** The job's, the group's and the tasks' affinities (Nomad's NodeAffinityIterator takes all three). */
function affinitiesOf(job: Job, group: TaskGroup): Affinity[] {
  return [
    ...(job.Affinities ?? []),
    ...(group.Affinities ?? []),
    ...group.Tasks.flatMap((t) => t.Affinities ?? []),
  ];
}

/** One ranked node: what it would use with the alloc, its normalised score and each scorer's part. */
type RankedOption = { node: Node; used: Usage; score: number; parts: (number | null)[] };

/** Nomad's ScoreNormalizationIterator: the mean of the scorers that apply. */
function normalised(parts: readonly (number | null)[]): number {
  let sum = 0;
  let n = 0;
  for (const p of parts) {
    if (p === null) continue;
    sum += p;
    n++;
  }
  return n === 0 ? 0 : sum / n;
}

/**
 * The per-node half of selectNode: checks one node (feasibility, distinct_hosts, distinct_property,
 * fit), records why it was filtered or exhausted in `metrics`, and scores it. `scored` says whether
 * a scorer beyond binpack may apply (affinity, spread), which changes how many options are enough.
 */
function nodeRanker(
  ctx: PlanContext,
  job: Job,
  group: TaskGroup,
  index: number,
  allocId: string,
  metrics: AllocMetric,
): { rank: (node: Node) => RankedOption | null; scored: boolean } {
  const cache = constraintCache(ctx);
  const nodeCache = new Map<string, Node | undefined>();
  const nodeOf = (id: string) => {
    if (!nodeCache.has(id)) nodeCache.set(id, ctx.state.getNode(id));
    return nodeCache.get(id);
  };
  let counted: Allocation[] | undefined;
  const jobAllocs = () => (counted ??= countedJobAllocs(ctx, job));
  const jobDistinct = distinctHosts(job.Constraints);
  const groupDistinct = distinctHosts(group.Constraints);
  const props = distinctProperties(job, group, jobAllocs, nodeOf);
  const spread = new SpreadScorer(job, group, jobAllocs, nodeOf);
  const affinities = affinitiesOf(job, group);
  const sumWeight = affinities.reduce((n, a) => n + Math.abs(a.Weight), 0);
  const feasible = feasibilityFor(ctx, job, group, index, allocId);
  const proposed = proposedUsageFor(ctx, job);
  const rank = (node: Node): RankedOption | null => {
    let reason = feasible(node);
    if (reason) {
      recordNode(metrics, node, reason);
      return null;
    }
    const { used, ofJob, ofGroup } = proposed(node.ID, group.Name);
    if ((jobDistinct && ofJob > 0) || (groupDistinct && ofGroup > 0)) reason = DISTINCT_HOSTS;
    if (!reason && props.length > 0) reason = distinctPropertyReason(props, node);
    recordNode(metrics, node, reason);
    if (reason) return null;
    const fit = fitGroup(node, used, group);
    if (!fit.fit) {
      recordExhausted(metrics, node, fit.dimension);
      return null;
    }
    // Nomad's scorer names, in its order; a scorer that does not apply adds no score.
    const parts: (number | null)[] = [
      binPackScore(node, fit.util),
      ofGroup > 0 ? -(ofGroup + 1) / group.Count : null,
      affinities.length > 0 ? affinityScore(cache, affinities, sumWeight, node) : null,
      spread.active ? spread.score(node) || null : null,
    ];
    return { node, used, score: normalised(parts), parts };
  };
  return { rank, scored: affinities.length > 0 || spread.active };
}

/**
 * The best of the sample's nodes, `limit` ranked options at most (the first best wins ties).
 * Nomad's LimitIterator: low-scored options wait, and are taken only if the nodes run out.
 */
function bestOf(
  sample: NodeSample,
  limit: number,
  rank: (node: Node) => RankedOption | null,
): RankedOption | null {
  let best: RankedOption | null = null;
  let seen = 0;
  const consider = (o: RankedOption) => {
    seen++;
    if (!best || o.score > best.score) best = o;
  };
  const skipped: RankedOption[] = [];
  for (const node of sample.visit()) {
    const option = rank(node);
    if (!option) continue;
    if (!sample.whole && option.score <= SKIP_SCORE_THRESHOLD && skipped.length < MAX_SKIP) {
      skipped.push(option);
      continue;
    }
    consider(option);
    if (seen >= limit) return best;
  }
  for (const o of skipped) if (seen < limit) consider(o);
  return best;
}

export function selectNode(
  ctx: PlanContext,
  sample: NodeSample,
  job: Job,
  group: TaskGroup,
  index: number,
  allocId: string,
  metrics: AllocMetric,
): Selection | null {
  const { rank, scored } = nodeRanker(ctx, job, group, index, allocId, metrics);
  const best = bestOf(sample, sample.limitFor(job, group, scored), rank);
  return best ? selection(best, group) : null;
}

function selection(best: RankedOption, group: TaskGroup): Selection {
  const scores: Record<string, number> = {};
  best.parts.forEach((p, i) => {
    if (p !== null) scores[SCORERS[i]!] = p;
  });
  return {
    node: best.node,
    score: best.score,
    scores,
    resources: allocateGroup(best.node, best.used, group),
  };
}

const SCORERS = ["binpack", "job-anti-affinity", "node-affinity", "allocation-spread"];

/** Nomad's "node-affinity": the weights of the affinities the node matches over the sum of |weights|. */
function affinityScore(
  cache: ConstraintCache,
  affinities: Affinity[],
  sumWeight: number,
  node: Node,
): number {
  let total = 0;
  for (const a of affinities) {
    const [l, lOk] = resolveTarget(a.LTarget, node);
    const [r, rOk] = resolveTarget(a.RTarget, node);
    if (checkOperand(cache, a.Operand, l, r, lOk, rOk)) total += a.Weight;
  }
  return total / sumWeight;
}
