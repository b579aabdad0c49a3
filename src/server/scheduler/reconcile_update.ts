/**
 * The update half of the reconciler (Nomad's reconcile.go for groups with an `update` strategy):
 * which old-version allocs a pass replaces and which stay, where canaries go, and the deployment
 * that tracks the rollout. Pure over a StateReader; plan.ts applies the answer.
 *
 * - A service job version whose groups have a strategy (MaxParallel > 0) gets one deployment, made
 *   when it first has something to place or replace; a deployment of an older version, or of a job
 *   now stopped, is cancelled with Nomad's words.
 * - Canaries (`canary = N`, only when old allocs are to be replaced): N allocs of the new version
 *   are placed beside the old ones, named after the first N old ones; nothing else is replaced until
 *   the group is promoted (by the API, or by the deployment watcher when `auto_promote`).
 * - Rolling: at most MaxParallel replacements in flight — a new alloc of the deployment not yet
 *   healthy, or a slot whose old alloc was stopped and whose replacement still waits, counts as one.
 *   A paused, failed or cancelled deployment replaces nothing more.
 * - Single-writer volumes (Nomad #13380, where a canary can never claim): the old alloc is stopped
 *   first and its slot is filled — by the canary or the replacement — only once that alloc is
 *   terminal and no write claim is left on the volume (claims being released still hold it), so
 *   there is never a second writer waiting on a claim it cannot get.
 */
import {
  allocIndex,
  isAllocTerminal,
  isClientTerminal,
  shouldMigrate,
  type Allocation,
} from "../../structs/alloc.js";
import {
  activeStrategy,
  allocHealth,
  awaitsPromotion,
  DEPLOYMENT_DESC,
  isCanary,
  isDeploymentActive,
  isSingleWriterRequest,
  newDeployment,
  type Deployment,
} from "../../structs/deployment.js";
import { volumeSourceForAlloc, type Job, type TaskGroup } from "../../structs/job.js";
import type { UpdateStrategy } from "../../structs/job_stanzas.js";
import type { StateReader } from "../state/store.js";

export interface UpdatePlan {
  /** The deployment of this job version: newly made (CreateIndex 0), or the stored one; or null. */
  deployment: Deployment | null;
  /** Whether `deployment` is new and must be stored. */
  created: boolean;
  /** Active deployments of other versions (or of the stopped job), already marked cancelled. */
  cancel: Deployment[];
  /** Old-version allocs that stay running this pass. */
  keep: Set<string>;
  /** Slots (alloc names) no ordinary placement may fill this pass. */
  hold: Set<string>;
  /** Canaries to place this pass. */
  canaries: { group: string; index: number }[];
  /** Why a stopped old alloc is stopped, when it is for a single-writer hand-over. */
  handover: Set<string>;
}

/** Nomad's description of an alloc stopped to be replaced by a new version. */
export const UPDATE_DESCRIPTION = "alloc is being updated due to job update";
/** berth's: an old alloc stopped so that its replacement can claim its single-writer volume. */
export const HANDOVER_DESCRIPTION =
  "alloc is being updated due to job update (stopped first: its single-writer volume must be released before the replacement claims it)";

function emptyPlan(): UpdatePlan {
  return {
    deployment: null,
    created: false,
    cancel: [],
    keep: new Set(),
    hold: new Set(),
    canaries: [],
    handover: new Set(),
  };
}

/** Whether the group writes to a volume that admits one writer (see isSingleWriterRequest). */
export function groupHasSingleWriter(state: StateReader, job: Pick<Job, "Namespace">, g: TaskGroup): boolean {
  return Object.values(g.Volumes).some((req) => {
    if (req.Type !== "csi") return isSingleWriterRequest(req);
    const vol = state.getVolume(job.Namespace, req.PerAlloc ? `${req.Source}[0]` : req.Source);
    return isSingleWriterRequest(req, vol?.AccessMode ?? "");
  });
}

/**
 * Whether slot `index` of a single-writer group can take its new writer: no live alloc of the job
 * holds the slot (`liveNames`: the names of the job's non-terminal allocs), and none of its
 * single-writer volumes has a write claim, live or being released, of this slot's previous alloc
 * or of a finished alloc of the job (a handover in progress). A claim of another job's, or of a
 * live alloc of another slot (count 2 on one single-writer volume), does not hold the slot: the
 * placement then fails visibly ("exhausted its available writer claims", a blocked eval that the
 * claim's release wakes), instead of waiting in silence.
 */
export function slotFree(
  state: StateReader,
  job: Job,
  g: TaskGroup,
  index: number,
  name: string,
  liveNames: ReadonlySet<string>,
): boolean {
  if (liveNames.has(name)) return false;
  for (const req of Object.values(g.Volumes)) {
    if (req.Type !== "csi" || req.ReadOnly) continue;
    const vol = state.getVolume(job.Namespace, volumeSourceForAlloc(req, index));
    if (!vol) continue;
    const ours = (allocId: string) => {
      const a = state.getAlloc(allocId);
      if (a === undefined || a.Namespace !== job.Namespace || a.JobID !== job.ID) return false;
      return a.Name === name || isAllocTerminal(a);
    };
    if (Object.keys(vol.WriteClaims).some(ours)) return false;
    if (Object.values(vol.PastClaims).some((c) => c.Mode === "write" && ours(c.AllocationID))) return false;
  }
  return true;
}

/** What one group's update decisions read: the group, its strategy, its old and new live allocs. */
interface GroupUpdate {
  state: StateReader;
  job: Job;
  g: TaskGroup;
  u: UpdateStrategy;
  deployment: Deployment;
  /** Live old-version allocs of the group's slots (not migrating), by index. */
  olds: Allocation[];
  /** Live allocs of the job's version. */
  news: Allocation[];
  /** The group writes to a single-writer volume. */
  single: boolean;
  liveNames: () => ReadonlySet<string>;
}

/** The deployments of other versions (all, once the job is stopped) that this pass cancels. */
function cancelled(job: Job, deployments: readonly Deployment[], current: Deployment | null, nowNs: number) {
  const out: Deployment[] = [];
  for (const d of deployments) {
    if (d === current || !isDeploymentActive(d)) continue;
    const why = job.Stop ? DEPLOYMENT_DESC.stoppedJob : DEPLOYMENT_DESC.newerJob;
    out.push({ ...d, Status: "cancelled", StatusDescription: why, ModifyTime: nowNs });
  }
  if (job.Stop && current && isDeploymentActive(current)) {
    out.push({
      ...current,
      Status: "cancelled",
      StatusDescription: DEPLOYMENT_DESC.stoppedJob,
      ModifyTime: nowNs,
    });
  }
  return out;
}

/**
 * A new deployment for this version, or null when it has nothing to do. Nomad's createDeployment:
 * a version that has run already gets a new deployment only to replace older allocs, not to refill
 * a slot (a lost or failed alloc) once the GC has removed its finished deployment.
 */
function deploymentToCreate(
  job: Job,
  existing: readonly Allocation[],
  groups: readonly { g: TaskGroup; u: UpdateStrategy; olds: number; news: number }[],
  nowNs: number,
  newId: () => string,
): Deployment | null {
  const wanted: Record<string, { total: number; canaries: number; update: UpdateStrategy }> = {};
  let work = false;
  const hadRunning = existing.some((a) => a.Job.Version === job.Version);
  for (const { g, u, olds, news } of groups) {
    if (olds > 0 || (!hadRunning && news < g.Count)) work = true;
    wanted[g.Name] = { total: g.Count, canaries: olds > 0 ? Math.min(u.Canary, g.Count) : 0, update: u };
  }
  return work ? newDeployment(newId(), job, wanted, nowNs) : null;
}

/** A group awaiting promotion: its canary slots, and the old allocs kept or handed over. */
function planCanaryGroup(x: GroupUpdate, desiredCanaries: number, out: UpdatePlan): void {
  const { g, olds, news, single, deployment } = x;
  const proceeding = deployment.Status === "running";
  const name = (i: number) => `${x.job.ID}.${g.Name}[${i}]`;
  // Canary slots: the first DesiredCanaries old allocs' names (then the lowest free indexes).
  const slots = olds.map((a) => allocIndex(a));
  for (let i = 0; slots.length < desiredCanaries && i < g.Count; i++) {
    if (!slots.includes(i)) slots.push(i);
  }
  const canarySlots = new Set(slots.slice(0, desiredCanaries));
  const canaryNames = new Set(
    news.filter((a) => isCanary(a) && a.DeploymentID === deployment.ID).map((a) => a.Name),
  );
  for (const a of olds) {
    const handover = single && proceeding && canarySlots.has(allocIndex(a)) && !canaryNames.has(a.Name);
    (handover ? out.handover : out.keep).add(a.ID);
  }
  for (const i of canarySlots) {
    if (canaryNames.has(name(i))) continue;
    out.hold.add(name(i));
    if (!proceeding) continue;
    // A handed-over slot's old alloc is stopped this pass: it is free once terminal, not before.
    if (single && olds.some((a) => allocIndex(a) === i)) continue;
    if (single && !slotFree(x.state, x.job, g, i, name(i), x.liveNames())) continue;
    out.canaries.push({ group: g.Name, index: i });
  }
}

/** A rolling group: at most MaxParallel replacements in flight; the other old allocs are kept. */
function planRollingGroup(x: GroupUpdate, out: UpdatePlan): void {
  const { g, olds, news, single, deployment } = x;
  const name = (i: number) => `${x.job.ID}.${g.Name}[${i}]`;
  const coveredByNew = new Set(news.map((a) => a.Name));
  const inFlight = news.filter((a) => a.DeploymentID === deployment.ID && allocHealth(a) !== true).length;
  const oldSlots = new Set(olds.map((a) => allocIndex(a)));
  let waiting = 0;
  for (let i = 0; single && i < g.Count; i++) {
    if (coveredByNew.has(name(i)) || oldSlots.has(i)) continue;
    if (!slotFree(x.state, x.job, g, i, name(i), x.liveNames())) {
      out.hold.add(name(i));
      waiting++;
    }
  }
  let limit = deployment.Status === "running" ? x.u.MaxParallel - inFlight - waiting : 0;
  for (const a of olds) {
    // A promoted canary already holds this name: its old alloc goes now, outside the limit.
    if (coveredByNew.has(a.Name)) continue;
    if (limit > 0) {
      limit--;
      if (single) {
        out.handover.add(a.ID);
        out.hold.add(a.Name);
      }
      continue;
    }
    out.keep.add(a.ID);
  }
}

/**
 * The update decisions of one pass. `existing` are the job's current incarnation's allocs; `newId`
 * makes the ID of a deployment this pass creates.
 */
export function planUpdates(
  state: StateReader,
  job: Job,
  existing: Allocation[],
  nowNs: number,
  newId: () => string,
): UpdatePlan {
  const out = emptyPlan();
  const deployments = state
    .deploymentsByJob(job.Namespace, job.ID)
    .filter((d) => d.JobCreateIndex === job.CreateIndex);
  let current = deployments.filter((d) => d.JobVersion === job.Version).at(-1) ?? null;
  out.cancel = cancelled(job, deployments, current, nowNs);
  if (job.Stop || job.Type !== "service") return out;
  const live = existing.filter((a) => a.DesiredStatus === "run" && !isClientTerminal(a.ClientStatus));
  const groups = job.TaskGroups.flatMap((g) => {
    const u = activeStrategy(g);
    if (u === null) return [];
    const olds = live
      .filter(
        (a) =>
          a.TaskGroup === g.Name &&
          a.Job.Version !== job.Version &&
          !shouldMigrate(a) &&
          allocIndex(a) < g.Count,
      )
      .sort((a, b) => allocIndex(a) - allocIndex(b));
    const news = live.filter((a) => a.TaskGroup === g.Name && a.Job.Version === job.Version);
    return [{ g, u, olds, news }];
  });
  if (groups.length === 0) return out;
  if (!current) {
    const counts = groups.map((x) => ({ ...x, olds: x.olds.length, news: x.news.length }));
    current = deploymentToCreate(job, existing, counts, nowNs, newId);
    if (!current) return out;
    out.created = true;
  }
  out.deployment = current;
  // Built on first use, once per pass: every open slot of a single-writer group asks (O(1) each).
  let names: Set<string> | undefined;
  const liveNames = () => (names ??= new Set(existing.filter((a) => !isAllocTerminal(a)).map((a) => a.Name)));
  for (const { g, u, olds, news } of groups) {
    const state0 = current.TaskGroups[g.Name];
    if (!state0) continue;
    const single = groupHasSingleWriter(state, job, g);
    const x: GroupUpdate = { state, job, g, u, deployment: current, olds, news, single, liveNames };
    if (awaitsPromotion(state0)) planCanaryGroup(x, state0.DesiredCanaries, out);
    else planRollingGroup(x, out);
  }
  return out;
}

/**
 * `job plan`'s warnings for the update of single-writer groups: their old allocs are stopped before
 * their replacements (or canaries) are placed, so each slot is briefly empty.
 */
export function singleWriterUpdateWarnings(state: StateReader, job: Job): string[] {
  const out: string[] = [];
  for (const g of job.TaskGroups) {
    const u = activeStrategy(g);
    if (!u || job.Type !== "service" || !groupHasSingleWriter(state, job, g)) continue;
    const what = u.Canary > 0 ? `its ${u.Canary} canar${u.Canary === 1 ? "y" : "ies"}` : "its replacement";
    out.push(
      `Group ${JSON.stringify(g.Name)} writes to a single-writer volume: an update stops each old allocation and waits for its volume claim to be released before placing ${what} (at most max_parallel = ${u.MaxParallel} at a time), so the group runs fewer allocations during the update`,
    );
  }
  return out;
}
