/**
 * `job plan`'s output as Nomad prints it (its formatJobDiff and formatDryRun, without colour): the
 * annotated diff (`+`, `-`, `+/-` markers, fields aligned, objects in braces, a group's updates in
 * parentheses), then "Scheduler dry-run:" with placement failures. Pure.
 */
import type {
  FieldDiff,
  JobDiff,
  JobPlanResponse,
  ObjectDiff,
  TaskDiff,
  TaskGroupDiff,
} from "../api/index.js";
import { formatAllocMetrics } from "./evals.js";

const sp = (n: number) => " ".repeat(Math.max(0, n));
const q = (s: string) => JSON.stringify(s);

function marker(type: string): [string, number] {
  switch (type) {
    case "Added":
      return ["+ ", 2];
    case "Deleted":
      return ["- ", 2];
    case "Edited":
      return ["+/- ", 4];
    default:
      return ["", 0];
  }
}

function longest(fields: FieldDiff[] | null, objects: ObjectDiff[] | null): [number, number] {
  let field = 0;
  let mark = 0;
  for (const f of fields ?? []) {
    field = Math.max(field, f.Name.length);
    mark = Math.max(mark, marker(f.Type)[1]);
  }
  for (const o of objects ?? []) mark = Math.max(mark, marker(o.Type)[1]);
  return [field, mark];
}

function fieldLine(f: FieldDiff, start: number, keyPad: number, valuePad: number): string {
  const value =
    f.Type === "Deleted" ? q(f.Old) : f.Type === "Edited" ? `${q(f.Old)} => ${q(f.New)}` : q(f.New);
  const notes = (f.Annotations ?? []).length > 0 ? ` (${f.Annotations!.join(", ")})` : "";
  return `${sp(start)}${marker(f.Type)[0]}${sp(keyPad)}${f.Name}: ${sp(valuePad)}${value}${notes}`;
}

function objectLines(o: ObjectDiff, start: number, keyPad: number): string[] {
  const [m, mLen] = marker(o.Type);
  return [
    `${sp(start)}${m}${sp(keyPad)}${o.Name} {`,
    ...aligned(o.Fields, o.Objects, start + keyPad + 2),
    `${sp(start + mLen + keyPad)}}`,
  ];
}

function aligned(fields: FieldDiff[] | null, objects: ObjectDiff[] | null, start: number): string[] {
  const [field, mark] = longest(fields, objects);
  return [
    ...(fields ?? []).map((f) => fieldLine(f, start, mark - marker(f.Type)[1], field - f.Name.length)),
    ...(objects ?? []).flatMap((o) => objectLines(o, start, mark - marker(o.Type)[1])),
  ];
}

function taskLines(t: TaskDiff, start: number, pad: number, verbose: boolean): string[] {
  const notes = (t.Annotations ?? []).length > 0 ? ` (${t.Annotations!.join(", ")})` : "";
  const head = `${sp(start)}${marker(t.Type)[0]}${sp(pad)}Task: ${q(t.Name)}${notes}`;
  if (t.Type === "None" || ((t.Type === "Added" || t.Type === "Deleted") && !verbose)) return [head];
  return [head, ...aligned(t.Fields, t.Objects, start + 2)];
}

function groupLines(g: TaskGroupDiff, pad: number, verbose: boolean): string[] {
  const updates = Object.keys(g.Updates ?? {})
    .sort()
    .map((u) => `${g.Updates![u]} ${u}`);
  const head = `${marker(g.Type)[0]}${sp(pad)}Task Group: ${q(g.Name)}${updates.length > 0 ? ` (${updates.join(", ")})` : ""}`;
  const start = pad + 2;
  const out = [head];
  if (g.Type === "Edited" || verbose) out.push(...aligned(g.Fields, g.Objects, start));
  const taskMark = Math.max(
    0,
    ...(g.Tasks ?? []).map((t) => marker(t.Type)[1]),
    longest(g.Fields, g.Objects)[1],
  );
  for (const t of g.Tasks ?? []) out.push(...taskLines(t, start, taskMark - marker(t.Type)[1], verbose));
  return out;
}

export function jobDiffLines(d: JobDiff, verbose: boolean): string[] {
  const out = [`${marker(d.Type)[0]}Job: ${q(d.ID)}`];
  const [, fieldMark] = longest(d.Fields, d.Objects);
  const mark = Math.max(fieldMark, ...(d.TaskGroups ?? []).map((g) => marker(g.Type)[1]));
  if (d.Type === "Edited" || verbose) out.push(...aligned(d.Fields, d.Objects, 0));
  for (const g of d.TaskGroups ?? []) out.push(...groupLines(g, mark - marker(g.Type)[1], verbose));
  return out;
}

export function dryRunLines(res: JobPlanResponse, jobType: string): string[] {
  const failed = Object.keys(res.FailedTGAllocs ?? {}).sort();
  if (failed.length === 0) return ["- All tasks successfully allocated."];
  const out = [
    jobType === "system"
      ? "- WARNING: Failed to place allocations on all nodes."
      : "- WARNING: Failed to place all allocations.",
  ];
  failed.forEach((tg, i) => {
    const m = res.FailedTGAllocs![tg]!;
    const noun = m.CoalescedFailures > 0 ? "allocations" : "allocation";
    out.push(`  Task Group ${q(tg)} (failed to place ${m.CoalescedFailures + 1} ${noun}):`);
    out.push(...formatAllocMetrics(m, "    "));
    if (i < failed.length - 1) out.push("");
  });
  return out;
}

/** berth: a line per volume the job's `volume { create { … } }` blocks would create. */
export function createdVolumeLines(res: JobPlanResponse): string[] {
  return (res.CreatedVolumes ?? []).map(
    (v) =>
      `- Volume ${q(v.ID)} (plugin ${q(v.PluginID)}, group ${q(v.TaskGroup)}, on purge: ${v.OnPurge}) will be created on first placement`,
  );
}

/** Nomad's exit code: 1 when the plan would create or destroy allocations, else 0. */
export function planExitCode(res: JobPlanResponse): number {
  if (res.Diff?.Type === "None") return 0;
  for (const d of Object.values(res.Annotations?.DesiredTGUpdates ?? {})) {
    if (d.Stop + d.Place + d.Migrate + d.DestructiveUpdate + d.Canary > 0) return 1;
  }
  return 0;
}
