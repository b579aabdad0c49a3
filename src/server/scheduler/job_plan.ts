/**
 * `job plan` (Nomad's Job.Plan): the scheduler's pass over a submitted job, run on the current
 * state and applied nowhere. Pure over a StateReader: it reads, it never writes, so the store is
 * byte for byte the same after it. The answer is Nomad's JobPlanResponse: per group what the pass
 * would do (DesiredTGUpdates, counting also the allocs that would find no node, as Nomad's
 * reconciler does), the groups that would find no node (FailedTGAllocs), and with
 * `diff` the job's diff at job, group and task level (Type Added/Deleted/Edited/None, the changed
 * primitive fields).
 */
import { isClientTerminal, type Allocation } from "../../structs/alloc.js";
import type { AllocMetric } from "../../structs/eval.js";
import { runsOnEveryNode, type Job } from "../../structs/job.js";
import type { StateReader } from "../state/store.js";
import { computePlan, isAllocOfJob } from "./plan.js";
import { MIGRATE_DESCRIPTION, type Plan } from "./plan_types.js";
import { HANDOVER_DESCRIPTION, UPDATE_DESCRIPTION } from "./reconcile_update.js";

/** Nomad's DesiredUpdates. */
export interface DesiredUpdates {
  Ignore: number;
  Place: number;
  Migrate: number;
  Stop: number;
  InPlaceUpdate: number;
  DestructiveUpdate: number;
  Canary: number;
  Preemptions: number;
}

export interface FieldDiff {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}
export type DiffType = "Added" | "Deleted" | "Edited" | "None";

export interface TaskDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: null;
  Annotations: string[] | null;
}
export interface TaskGroupDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: null;
  Tasks: TaskDiff[] | null;
  /** Nomad's words per kind of change: "create", "destroy", "create/destroy update", "ignore", "canary", ... */
  Updates: Record<string, number> | null;
}
export interface JobDiff {
  Type: DiffType;
  ID: string;
  Fields: FieldDiff[] | null;
  Objects: null;
  TaskGroups: TaskGroupDiff[] | null;
}

export interface JobPlanResult {
  annotations: Record<string, DesiredUpdates>;
  failed: Record<string, AllocMetric> | null;
  diff: JobDiff | null;
  /** The stored job's JobModifyIndex (0 when it is new): `job run -check-index` checks it. */
  jobModifyIndex: number;
}

const zero = (): DesiredUpdates => ({
  Ignore: 0,
  Place: 0,
  Migrate: 0,
  Stop: 0,
  InPlaceUpdate: 0,
  DestructiveUpdate: 0,
  Canary: 0,
  Preemptions: 0,
});

/**
 * Nomad's DesiredUpdates of each group: what the pass would stop, migrate, replace, place, place as
 * canaries, and leave alone (the job's live allocs it does not stop).
 */
function desiredUpdates(state: StateReader, job: Job, plan: Plan): Record<string, DesiredUpdates> {
  const annotations: Record<string, DesiredUpdates> = {};
  for (const g of job.TaskGroups) annotations[g.Name] = zero();
  const of = (group: string) => (annotations[group] ??= zero());
  // A replacement takes its old alloc's name; a system job's names repeat on every node, so there
  // the slot is the node and the name.
  const slot = (a: Allocation) => (runsOnEveryNode(job.Type) ? `${a.NodeID}\u0000${a.Name}` : a.Name);
  const replaced = new Set<string>();
  for (const { alloc, description } of plan.stop) {
    const u = of(alloc.TaskGroup);
    if (description === MIGRATE_DESCRIPTION) u.Migrate++;
    else if (description === HANDOVER_DESCRIPTION && plan.place.every((p) => p.Name !== alloc.Name)) {
      // Stopped first for a single-writer hand-over: its replacement (or canary) follows later.
      if (job.TaskGroups.find((g) => g.Name === alloc.TaskGroup)?.Update?.Canary) u.Canary++;
      else u.DestructiveUpdate++;
    } else if (description === UPDATE_DESCRIPTION || description === HANDOVER_DESCRIPTION) {
      u.DestructiveUpdate++;
      replaced.add(slot(alloc));
    } else u.Stop++;
  }
  for (const a of plan.place) {
    const u = of(a.TaskGroup);
    if (a.DeploymentStatus?.Canary) u.Canary++;
    else if (!replaced.has(slot(a))) u.Place++;
  }
  // What found no node still counts as what the pass wanted (Nomad's reconciler annotates before
  // the nodes are chosen); FailedTGAllocs says why they would not be placed.
  for (const f of plan.failures) {
    const u = of(f.group);
    u.Canary += f.canaries;
    u.Place += f.names.filter((n) => !replaced.has(n)).length;
  }
  const stopped = new Set(plan.stop.map((s) => s.alloc.ID));
  for (const a of state.allocsByJob(job.Namespace, job.ID)) {
    if (!isAllocOfJob(a, job) || a.DesiredStatus !== "run" || isClientTerminal(a.ClientStatus)) continue;
    if (!stopped.has(a.ID)) of(a.TaskGroup).Ignore++;
  }
  return annotations;
}

/**
 * `spec` is the validated submitted job; `sameSpec` says whether it equals the stored one (then no
 * new version would be made).
 */
export function planJob(
  state: StateReader,
  spec: Job,
  sameSpec: boolean,
  wantDiff: boolean,
  nowNs: number,
): JobPlanResult {
  const prev = state.getJob(spec.Namespace, spec.ID);
  const job: Job = {
    ...spec,
    Status: prev?.Status ?? "pending",
    Version: prev ? (sameSpec ? prev.Version : prev.Version + 1) : 0,
    // A new job is a new incarnation: no alloc of a purged namesake is its own.
    CreateIndex: prev?.CreateIndex ?? state.index() + 1,
    ModifyIndex: state.index() + 1,
    JobModifyIndex: state.index() + 1,
  };
  const plan = computePlan(state, job, nowNs);
  const annotations = desiredUpdates(state, job, plan);
  const failed =
    plan.failures.length === 0 ? null : Object.fromEntries(plan.failures.map((f) => [f.group, f.metrics]));
  return {
    annotations,
    failed,
    diff: wantDiff ? jobDiff(prev, job, sameSpec, annotations) : null,
    jobModifyIndex: prev?.JobModifyIndex ?? 0,
  };
}

/** Nomad's words for each DesiredUpdates count in a group diff's Updates. */
const UPDATE_WORDS: [keyof DesiredUpdates, string][] = [
  ["Place", "create"],
  ["Stop", "destroy"],
  ["Migrate", "migrate"],
  ["InPlaceUpdate", "in-place update"],
  ["DestructiveUpdate", "create/destroy update"],
  ["Canary", "canary"],
  ["Ignore", "ignore"],
];

function updatesOf(u: DesiredUpdates | undefined): Record<string, number> | null {
  if (!u) return null;
  const out: Record<string, number> = {};
  for (const [k, word] of UPDATE_WORDS) if (u[k] > 0) out[word] = u[k];
  return Object.keys(out).length > 0 ? out : null;
}

function primitive(v: unknown): v is string | number | boolean {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean";
}

/** The primitive fields that differ (keys in `skip` left out), sorted by name as Nomad sorts them. */
function fieldDiffs(
  old: Record<string, unknown> | undefined,
  next: Record<string, unknown> | undefined,
  skip: readonly string[],
): FieldDiff[] {
  const names = new Set([...Object.keys(old ?? {}), ...Object.keys(next ?? {})]);
  const out: FieldDiff[] = [];
  for (const name of [...names].sort()) {
    if (skip.includes(name)) continue;
    const o = old?.[name];
    const n = next?.[name];
    if (!primitive(o) && !primitive(n)) continue;
    const os = primitive(o) ? String(o) : "";
    const ns = primitive(n) ? String(n) : "";
    if (os === ns) continue;
    const Type: DiffType = os === "" ? "Added" : ns === "" ? "Deleted" : "Edited";
    out.push({ Type, Name: name, Old: os, New: ns, Annotations: null });
  }
  return out;
}

const JOB_SKIP = [
  "Status",
  "Version",
  "Stable",
  "SubmitTime",
  "CreateIndex",
  "ModifyIndex",
  "JobModifyIndex",
];

/**
 * Nomad's task annotations (scheduler/annotate.go): a task of an added or removed group forces a
 * create or a destroy; any other change to a task (one added to or removed from a kept group too)
 * forces a create/destroy update, as berth's scheduler replaces an alloc whose job version
 * changed (it makes no in-place update).
 */
function taskAnnotations(type: DiffType, group: DiffType): string[] | null {
  if (type === "None") return null;
  if (group === "Added" && type === "Added") return ["forces create"];
  if (group === "Deleted" && type === "Deleted") return ["forces destroy"];
  return ["forces create/destroy update"];
}

/** Nomad's count annotation: a group's Count going up forces creates, going down destroys. */
function countAnnotated(f: FieldDiff): FieldDiff {
  if (f.Name !== "Count") return f;
  const [o, n] = [Number(f.Old || 0), Number(f.New || 0)];
  if (o === n) return f;
  return { ...f, Annotations: [o < n ? "forces create" : "forces destroy"] };
}

function typeOf(exists: [boolean, boolean], changed: boolean): DiffType {
  if (!exists[0]) return "Added";
  if (!exists[1]) return "Deleted";
  return changed ? "Edited" : "None";
}

function jobDiff(
  prev: Job | undefined,
  job: Job,
  sameSpec: boolean,
  annotations: Record<string, DesiredUpdates>,
): JobDiff {
  const asRec = (v: unknown) => v as Record<string, unknown>;
  const groups = new Set([
    ...(prev?.TaskGroups ?? []).map((g) => g.Name),
    ...job.TaskGroups.map((g) => g.Name),
  ]);
  const TaskGroups: TaskGroupDiff[] = [...groups].sort().map((name) => {
    const o = prev?.TaskGroups.find((g) => g.Name === name);
    const n = job.TaskGroups.find((g) => g.Name === name);
    const groupType = typeOf([!!o, !!n], JSON.stringify(o) !== JSON.stringify(n));
    const tasks = new Set([...(o?.Tasks ?? []).map((t) => t.Name), ...(n?.Tasks ?? []).map((t) => t.Name)]);
    const Tasks: TaskDiff[] = [...tasks].sort().map((tn) => {
      const ot = o?.Tasks.find((t) => t.Name === tn);
      const nt = n?.Tasks.find((t) => t.Name === tn);
      const changed = JSON.stringify(ot) !== JSON.stringify(nt);
      const Fields = fieldDiffs(asRec(ot), asRec(nt), []);
      const Type = typeOf([!!ot, !!nt], changed);
      return { Type, Name: tn, Fields, Objects: null, Annotations: taskAnnotations(Type, groupType) };
    });
    return {
      Type: groupType,
      Name: name,
      Fields: fieldDiffs(asRec(o), asRec(n), []).map(countAnnotated),
      Objects: null,
      Tasks,
      Updates: updatesOf(annotations[name]),
    };
  });
  return {
    Type: prev ? (sameSpec ? "None" : "Edited") : "Added",
    ID: job.ID,
    Fields: fieldDiffs(asRec(prev), asRec(job), JOB_SKIP),
    Objects: null,
    TaskGroups,
  };
}

/**
 * Nomad's JobVersionsResponse.Diffs (`?diffs=true`, `job history -p`): for versions newest first,
 * entry i is version i+1's change into version i (one fewer entry than versions).
 */
export function versionDiffs(versions: Job[]): JobDiff[] {
  const spec = (j: Job) => JSON.stringify({ ...j, ...Object.fromEntries(JOB_SKIP.map((k) => [k, null])) });
  return versions
    .slice(0, -1)
    .map((v, i) => jobDiff(versions[i + 1], v, spec(versions[i + 1]!) === spec(v), {}));
}
