/**
 * Nomad's property sets (scheduler/feasible/propertyset.go) and what reads them: how many of the
 * job's live and planned allocs sit on nodes with each value of an attribute, for
 * `distinct_property` (a feasibility limit) and `spread` (a score). A job-level distinct_property
 * counts every group's allocs, a group-level one and every spread only the group's. Allocs the
 * plan stops no longer count. Built once per placement from the job's allocs (O(allocs of the
 * job)), never per node.
 */
import { isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import { DISTINCT_PROPERTY, resolveTarget } from "../../structs/constraint.js";
import type { Job, TaskGroup } from "../../structs/job.js";
import type { Spread } from "../../structs/job_stanzas.js";
import type { Node } from "../../structs/node.js";
import type { PlanContext } from "./feasibility.js";

/** The job's allocs that count: this incarnation's live ones the plan keeps, and its placements. */
export function countedJobAllocs(ctx: PlanContext, job: Job): Allocation[] {
  const stopped = ctx.stopped ?? ctx.stopping;
  const live = ctx.state
    .allocsByJob(job.Namespace, job.ID)
    .filter((a) => a.Job.CreateIndex === job.CreateIndex && !isAllocTerminal(a) && !stopped.has(a.ID));
  return [...live, ...ctx.planned.filter((a) => a.JobID === job.ID && a.Namespace === job.Namespace)];
}

/** Values of one attribute over a set of allocs; values outside `targets` (if any) count as "*". */
export class PropertySet {
  readonly used = new Map<string, number>();

  constructor(
    readonly attribute: string,
    private readonly targets: ReadonlySet<string>,
    allocs: Allocation[],
    nodeOf: (id: string) => Node | undefined,
  ) {
    for (const a of allocs) {
      const node = nodeOf(a.NodeID);
      if (!node) continue;
      const [v, ok] = resolveTarget(attribute, node);
      if (!ok) continue;
      const key = this.targeted(v);
      this.used.set(key, (this.used.get(key) ?? 0) + 1);
    }
  }

  targeted(v: string): string {
    return this.targets.size === 0 || this.targets.has(v) ? v : "*";
  }

  /** The node's (targeted) value and how many counted allocs have it; null when it lacks the attribute. */
  usedCount(node: Node): { value: string; count: number } | null {
    const [v, ok] = resolveTarget(this.attribute, node);
    if (!ok) return null;
    const value = this.targeted(v);
    return { value, count: this.used.get(value) ?? 0 };
  }
}

export interface DistinctProperty {
  set: PropertySet;
  limit: number;
}

/** The job's and the group's distinct_property constraints over the counted allocs. */
export function distinctProperties(
  job: Job,
  group: TaskGroup,
  counted: () => Allocation[],
  nodeOf: (id: string) => Node | undefined,
): DistinctProperty[] {
  const out: DistinctProperty[] = [];
  const none = new Set<string>();
  for (const [constraints, groupOnly] of [
    [job.Constraints ?? [], false],
    [group.Constraints ?? [], true],
  ] as const) {
    for (const c of constraints) {
      if (c.Operand !== DISTINCT_PROPERTY) continue;
      const allocs = groupOnly ? counted().filter((a) => a.TaskGroup === group.Name) : counted();
      out.push({
        set: new PropertySet(c.LTarget, none, allocs, nodeOf),
        limit: c.RTarget === "" ? 1 : Number(c.RTarget),
      });
    }
  }
  return out;
}

/** Nomad's refusal for a node a distinct_property rules out, or null. */
export function distinctPropertyReason(props: DistinctProperty[], node: Node): string | null {
  for (const p of props) {
    const used = p.set.usedCount(node);
    if (!used) return `missing property ${JSON.stringify(p.set.attribute)}`;
    if (used.count >= p.limit)
      return `distinct_property: ${p.set.attribute}=${used.value} used by ${used.count} allocs`;
  }
  return null;
}

interface SpreadInfo {
  set: PropertySet;
  weight: number;
  /** Wanted allocs per value ("*" for the rest); empty: spread evenly. */
  desired: Map<string, number>;
}

/** The group's and the job's spreads, with Nomad's desired counts (percent × Count). */
export class SpreadScorer {
  private readonly infos: SpreadInfo[] = [];
  private readonly sumWeights: number;
  private lowestBoost = -1;

  constructor(
    job: Job,
    group: TaskGroup,
    counted: () => Allocation[],
    nodeOf: (id: string) => Node | undefined,
  ) {
    const spreads: Spread[] = [...(group.Spreads ?? []), ...(job.Spreads ?? [])];
    const mine = spreads.length > 0 ? counted().filter((a) => a.TaskGroup === group.Name) : [];
    for (const s of spreads) {
      const desired = new Map<string, number>();
      let sum = 0;
      for (const t of s.SpreadTarget) {
        const d = (t.Percent / 100) * group.Count;
        desired.set(t.Value, d);
        sum += d;
      }
      if (sum > 0 && sum < group.Count) desired.set("*", group.Count - sum);
      const targets = new Set(s.SpreadTarget.map((t) => t.Value));
      this.infos.push({
        set: new PropertySet(s.Attribute, targets, mine, nodeOf),
        weight: s.Weight,
        desired,
      });
    }
    this.sumWeights = spreads.reduce((n, s) => n + s.Weight, 0);
  }

  get active(): boolean {
    return this.infos.length > 0;
  }

  /** Nomad's "allocation-spread" score of placing one more alloc on the node. */
  score(node: Node): number {
    let total = 0;
    for (const info of this.infos) {
      const used = info.set.usedCount(node);
      if (!used) {
        total -= 1;
        continue;
      }
      if (info.desired.size === 0) {
        total += evenSpreadBoost(info.set, used.value);
        continue;
      }
      const desired = info.desired.get(used.value) ?? info.desired.get("*");
      if (desired === undefined) {
        total -= 1;
        continue;
      }
      if (desired === 0) {
        total += this.lowestBoost;
        continue;
      }
      const boost = ((desired - (used.count + 1)) / desired) * (info.weight / this.sumWeights);
      total += boost;
      if (boost < this.lowestBoost) this.lowestBoost = boost;
    }
    return total;
  }
}

/**
 * Nomad's evenSpreadScoreBoost: with no targets, a value below the least-used one is boosted by how
 * far below it is, the least-used one by how far the most-used is above it, and an even spread
 * gets the full penalty.
 */
function evenSpreadBoost(set: PropertySet, value: string): number {
  if (set.used.size === 0) return 0;
  const current = set.used.get(value) ?? 0;
  let min = 0;
  let max = 0;
  for (const n of set.used.values()) {
    if (min === 0 || n < min) min = n;
    if (max === 0 || n > max) max = n;
  }
  if (current !== min) return min === 0 ? -1 : (min - current) / min;
  if (min === max) return -1;
  if (min === 0) return 1;
  return (max - min) / min;
}
