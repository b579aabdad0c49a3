/**
 * Which allocs a system or sysbatch job wants, node by node, against the ones it has (Nomad's
 * NodeReconciler, scheduler/reconciler/reconcile_node.go). Pure: no state, no placement. A slot is
 * a node and an alloc name: every eligible node wants `<job>.<group>[i]` for each group and each
 * i < Count (Count is 0 or 1 for a system job, job_validate.ts; any for sysbatch).
 *
 * For each live alloc (desired run, not terminal on its client), in Nomad's order:
 * - the job is stopped, or its name is no longer wanted → stopped;
 * - the drainer marked it for migration → stopped (its node is draining, so nothing replaces it
 *   there, and a system alloc is never moved elsewhere);
 * - `unknown` (its node disconnected) → kept; the disconnect rules (disconnect_plan.ts, node
 *   liveness) decide its fate;
 * - its node is gone, down or disconnected → kept; node loss marks it lost;
 * - its node is not ready (ineligible, initializing) → kept as it is, unless the job has a new
 *   version: then stopped and not replaced there (Nomad: an ineligible node keeps what it runs
 *   but takes nothing new);
 * - its node is ready but no longer in the job's datacenters → stopped;
 * - an older job version → stopped and its slot placed again on the same node (Nomad's
 *   destructive update; every node at once: berth keeps no system deployment, so `max_parallel`
 *   does not pace it);
 * - else kept.
 * Then every slot of an eligible node (ready, eligible, in the job's datacenters) without a kept
 * alloc is placed — for a sysbatch job only if no alloc of the job's version ended there already
 * (it ran; it is not run again, whatever its outcome). A system slot whose alloc failed or
 * completed is placed again on the same node, linked to it (PreviousAllocation): a system alloc is
 * restarted in place by its node's restart policy and never rescheduled elsewhere. A slot that
 * failed again and again waits between tries (structs/system_retry.ts): until its time it is
 * `later`, and a delayed eval places it.
 */
import { isClientTerminal, shouldMigrate, type Allocation } from "../../structs/alloc.js";
import { inAnyDatacenter } from "../../structs/datacenter.js";
import { RESCHEDULE_WINDOW_NS } from "../../structs/reschedule.js";
import { systemRetryTime } from "../../structs/system_retry.js";
import type { Job, TaskGroup } from "../../structs/job.js";
import type { Node } from "../../structs/node.js";
import { nodeReady } from "./feasibility.js";
import {
  allocName,
  JOB_STOPPED_DESCRIPTION,
  MIGRATE_DESCRIPTION,
  NOT_NEEDED_DESCRIPTION,
} from "./plan_types.js";
import { UPDATE_DESCRIPTION } from "./reconcile_update.js";

export interface SystemSlot {
  node: Node;
  group: TaskGroup;
  index: number;
  name: string;
  /** The alloc this placement follows on the node: the one it updates, or the last that ended. */
  previous: Allocation | null;
}

export interface SystemDiff {
  /** Slots to place, in node order (as `nodes` lists them), then group order, then index. */
  place: SystemSlot[];
  stop: { alloc: Allocation; description: string }[];
  /** Live allocs that stay as they are. */
  keep: Allocation[];
  /** Failed slots that wait: the newest failed alloc of each, and when its slot may be placed. */
  later: { alloc: Allocation; time: number }[];
}

/** The pass's clock, and the delayed eval it runs ("" for any other): its slots are due now. */
export interface SystemClock {
  nowNs: number;
  runningEvalId: string;
}

function isLive(a: Allocation): boolean {
  return a.DesiredStatus === "run" && !isClientTerminal(a.ClientStatus);
}

function slotKey(nodeId: string, name: string): string {
  return `${nodeId}\u0000${name}`;
}

type Wanted = ReadonlyMap<string, { group: TaskGroup; index: number }>;

/** Every slot name the job wants on an eligible node, with its group and index (none once stopped). */
function wantedSlots(job: Job): Wanted {
  const wanted = new Map<string, { group: TaskGroup; index: number }>();
  if (job.Stop) return wanted;
  for (const group of job.TaskGroups) {
    for (let index = 0; index < group.Count; index++)
      wanted.set(allocName(job, group.Name, index), { group, index });
  }
  return wanted;
}

/** The newest alloc of each slot that is not live (Nomad's TerminalByNodeByName), by slotKey. */
function newestEnded(existing: readonly Allocation[]): Map<string, Allocation> {
  const ended = new Map<string, Allocation>();
  for (const a of existing) {
    if (isLive(a)) continue;
    const k = slotKey(a.NodeID, a.Name);
    const cur = ended.get(k);
    if (!cur || a.CreateIndex > cur.CreateIndex) ended.set(k, a);
  }
  return ended;
}

/** What becomes of one live alloc: the rules of the header, in order. */
type LiveDecision =
  | { kind: "keep" }
  | { kind: "stop"; description: string }
  | { kind: "update"; node: Node; slot: { group: TaskGroup; index: number } };

function decideLive(job: Job, a: Allocation, wanted: Wanted, node: Node | undefined): LiveDecision {
  const slot = wanted.get(a.Name);
  if (job.Stop) return { kind: "stop", description: JOB_STOPPED_DESCRIPTION };
  if (!slot) return { kind: "stop", description: NOT_NEEDED_DESCRIPTION };
  if (shouldMigrate(a)) return { kind: "stop", description: MIGRATE_DESCRIPTION };
  const updated = a.Job.Version !== job.Version;
  if (a.ClientStatus === "unknown" || !node || node.Status === "down" || node.Status === "disconnected")
    return { kind: "keep" };
  if (node.Status !== "ready" || node.SchedulingEligibility !== "eligible")
    return updated ? { kind: "stop", description: NOT_NEEDED_DESCRIPTION } : { kind: "keep" };
  if (!inAnyDatacenter(job.Datacenters, node.Datacenter))
    return { kind: "stop", description: NOT_NEEDED_DESCRIPTION };
  return updated ? { kind: "update", node, slot } : { kind: "keep" };
}

/**
 * The live allocs' decisions into `out` (stop, keep); returns the slots they hold (kept, or placed
 * again by an update) and the updates' placements by slotKey.
 */
function reconcileLive(
  job: Job,
  existing: readonly Allocation[],
  nodes: readonly Node[],
  wanted: Wanted,
  out: SystemDiff,
): { taken: Set<string>; updateOf: Map<string, SystemSlot> } {
  const nodeById = new Map(nodes.map((n) => [n.ID, n] as const));
  const taken = new Set<string>();
  const updateOf = new Map<string, SystemSlot>();
  for (const a of existing) {
    if (!isLive(a)) continue;
    const d = decideLive(job, a, wanted, nodeById.get(a.NodeID));
    if (d.kind === "stop") out.stop.push({ alloc: a, description: d.description });
    else if (d.kind === "keep") {
      out.keep.push(a);
      taken.add(slotKey(a.NodeID, a.Name));
    } else {
      out.stop.push({ alloc: a, description: UPDATE_DESCRIPTION });
      const k = slotKey(d.node.ID, a.Name);
      taken.add(k);
      // A slot's last update is the one placed (a slot is placed once).
      updateOf.set(k, { node: d.node, ...d.slot, name: a.Name, previous: a });
    }
  }
  return { taken, updateOf };
}

/**
 * `existing`: the allocs of the job's current incarnation, any status; `nodes`: every node the
 * state has.
 */
export function systemDiff(
  job: Job,
  existing: readonly Allocation[],
  nodes: readonly Node[],
  clock: SystemClock,
): SystemDiff {
  const out: SystemDiff = { place: [], stop: [], keep: [], later: [] };
  const wanted = wantedSlots(job);
  const ended = newestEnded(existing);
  const { taken, updateOf } = reconcileLive(job, existing, nodes, wanted, out);
  if (job.Stop) return out;
  let allocById: Map<string, Allocation> | undefined;
  const retryTimeOf = (a: Allocation) =>
    systemRetryTime(a, (allocById ??= new Map(existing.map((x) => [x.ID, x] as const))));
  for (const node of nodes) {
    if (!nodeReady(node, job)) continue;
    for (const [name, slot] of wanted) {
      const k = slotKey(node.ID, name);
      const update = updateOf.get(k);
      if (update) {
        out.place.push(update);
        continue;
      }
      if (taken.has(k)) continue;
      const last = ended.get(k) ?? null;
      if (job.Type === "sysbatch" && last && last.Job.Version === job.Version) continue;
      if (last?.ClientStatus === "failed" && last.Job.Version === job.Version) {
        const time = retryTimeOf(last);
        const due =
          (clock.runningEvalId !== "" && last.FollowupEvalID === clock.runningEvalId) ||
          time - clock.nowNs <= RESCHEDULE_WINDOW_NS;
        if (!due) {
          out.later.push({ alloc: last, time });
          continue;
        }
      }
      out.place.push({ node, ...slot, name, previous: last });
    }
  }
  return out;
}
