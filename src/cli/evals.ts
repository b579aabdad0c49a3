/**
 * Placement failures as Nomad prints them (its formatAllocMetrics), shared by `job status` and
 * `eval status`: one `Task Group "web" (failed to place N allocations):` header per failed group,
 * then one `* ...` line per reason.
 */
import type { AllocationMetric, Evaluation } from "../api/index.js";
import { shortId, table } from "./format.js";

/** Nomad's %q, close enough for IDs, classes and constraint strings. */
const q = (s: string) => JSON.stringify(s);

/** Entries of a count map (null allowed) sorted by key, so output never depends on JSON order. */
function sorted(m: Record<string, number> | null | undefined): [string, number][] {
  return Object.entries(m ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The reason lines of one group's metrics, each starting with `prefix`. */
export function formatAllocMetrics(m: AllocationMetric, prefix: string): string[] {
  const out: string[] = [];
  if (m.NodesEvaluated === 0) out.push(`${prefix}* No nodes were eligible for evaluation`);
  for (const [dc, n] of sorted(m.NodesAvailable)) {
    if (n === 0) out.push(`${prefix}* No nodes are available in datacenter ${q(dc)}`);
  }
  for (const [cls, n] of sorted(m.ClassFiltered))
    out.push(`${prefix}* Class ${q(cls)}: ${n} nodes excluded by filter`);
  for (const [c, n] of sorted(m.ConstraintFiltered))
    out.push(`${prefix}* Constraint ${q(c)}: ${n} nodes excluded by filter`);
  if (m.NodesExhausted > 0) out.push(`${prefix}* Resources exhausted on ${m.NodesExhausted} nodes`);
  for (const [cls, n] of sorted(m.ClassExhausted))
    out.push(`${prefix}* Class ${q(cls)} exhausted on ${n} nodes`);
  for (const [dim, n] of sorted(m.DimensionExhausted))
    out.push(`${prefix}* Dimension ${q(dim)} exhausted on ${n} nodes`);
  for (const dim of m.QuotaExhausted ?? []) out.push(`${prefix}* Quota limit hit ${q(dim)}`);
  return out;
}

/** Every failed group of the eval, by name, each followed by a blank line except the last. */
export function failedPlacementLines(ev: Evaluation): string[] {
  const groups = Object.keys(ev.FailedTGAllocs ?? {}).sort();
  const out: string[] = [];
  groups.forEach((tg, i) => {
    const m = ev.FailedTGAllocs![tg]!;
    const noun = m.CoalescedFailures > 0 ? "allocations" : "allocation";
    out.push(`Task Group ${q(tg)} (failed to place ${m.CoalescedFailures + 1} ${noun}):`);
    out.push(...formatAllocMetrics(m, "  "));
    if (i < groups.length - 1) out.push("");
  });
  return out;
}

export function hasFailures(ev: Evaluation): boolean {
  return Object.keys(ev.FailedTGAllocs ?? {}).length > 0;
}

/** Nomad's "Placement Failures" column: true/false, or "N/A - In Progress" for a blocked eval. */
export function evalFailureStatus(ev: Evaluation): string {
  return ev.Status === "blocked" ? "N/A - In Progress" : String(hasFailures(ev));
}

/**
 * What `job status` shows as "Placement Failure", as Nomad decides it: only while the job has a
 * blocked eval, the latest eval with failures (by CreateIndex; the blocked eval, whose failures the
 * scheduler refreshes, wins a tie with the eval that created it).
 */
export function latestFailedEval(evals: Evaluation[]): Evaluation | undefined {
  if (!evals.some((e) => e.Status === "blocked")) return undefined;
  let latest: Evaluation | undefined;
  for (const e of evals) {
    if (!hasFailures(e)) continue;
    if (
      !latest ||
      e.CreateIndex > latest.CreateIndex ||
      (e.CreateIndex === latest.CreateIndex && e.ModifyIndex > latest.ModifyIndex)
    )
      latest = e;
  }
  return latest;
}

/** The "Placement Failure" section of `job status`, or nothing. */
export function placementFailureSection(evals: Evaluation[]): string[] {
  const ev = latestFailedEval(evals);
  return ev ? ["", "Placement Failure", ...failedPlacementLines(ev)] : [];
}

/** The "Evaluations" table `job status -verbose` shows; `evals` newest first. */
export function evaluationsSection(evals: Evaluation[], verbose: boolean): string[] {
  const rows = [["ID", "Priority", "Triggered By", "Status", "Placement Failures"]];
  for (const e of evals) {
    rows.push([shortId(e.ID, verbose), String(e.Priority), e.TriggeredBy, e.Status, evalFailureStatus(e)]);
  }
  return ["", "Evaluations", ...table(rows)];
}
