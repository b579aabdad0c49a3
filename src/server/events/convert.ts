/**
 * From the commit feed's changes to Nomad's events (nomad/state/events.go eventFromChange): one
 * event per changed record of an event table, with Nomad's Topic, Key, Namespace, FilterKeys and
 * payload key (`{"Volume": …}`, `{"Job": …}`, ...). Nomad names an event's Type after the request
 * that made the change; berth's store does not keep the request, so the Type is derived from the
 * record before and after, with Nomad's names where one fits:
 *
 * - CSIVolume: new → CSIVolumeRegistered; deleted → CSIVolumeDeregistered; `Usage.Abnormal` or
 *   `ControllerCondition.Abnormal` turned true → CSIVolumeAbnormal (berth's own); a claim held for
 *   its node's fence bound or released unused by the volumewatcher → CSIVolumeClaimFenceHold /
 *   CSIVolumeClaimOrphanRelease (berth's own, claim_events.ts); claims changed → CSIVolumeClaim;
 *   else CSIVolumeRegistered.
 * - CSIPlugin (Nomad has no type of its own for plugins): CSIPluginUpdated / CSIPluginDeleted.
 * - Job: deleted (purged) → JobDeregistered with `Deleted: true`; `Stop` turned true →
 *   JobDeregistered; else JobRegistered.
 * - Allocation: new, or desired status changed → PlanResult; DesiredTransition changed →
 *   AllocationUpdateDesiredStatus; else AllocationUpdated (the node's updates). Deleted allocs,
 *   evals and deployments (garbage collection) make no event, as in Nomad.
 * - Evaluation → EvaluationUpdated. Deployment: status changed → DeploymentStatusUpdate; a group
 *   promoted → DeploymentPromotion; else DeploymentAllocHealth.
 * - Node: new → NodeRegistration; deleted → NodeDeregistration; drain changed → NodeDrain;
 *   eligibility changed → NodeEligibility; else NodeStreamEvent.
 *
 * Payloads are the API's shapes with its redaction (structs/redact.ts through views/stubs.ts):
 * volume Secrets null and mount flags "[REDACTED]", no node secret hash, an alloc without its job
 * (as Nomad strips it). Every payload is built from copies and serialised at once: converting never
 * changes a record the store or the feed holds (Nomad GH-27176 erased secrets in place on read).
 */
import type { Allocation } from "../../structs/alloc.js";
import type { Deployment } from "../../structs/deployment.js";
import type { Evaluation } from "../../structs/eval.js";
import type { Job } from "../../structs/job.js";
import type { Node } from "../../structs/node.js";
import type { CSIPluginSummary } from "../../structs/plugin.js";
import { redactJob } from "../../structs/redact.js";
import type { CSIVolume } from "../../structs/volume.js";
import { nodeFull, taskStatesView, volumeFull } from "../views/stubs.js";
import type { CommittedChange, CommittedTxn } from "../state/commit_feed.js";
import type { Table } from "../state/store.js";
import { claimDecisionType } from "./claim_events.js";
import type { EventHeader, Topic } from "./topics.js";

/** One event, serialised once and shared by every subscriber it matches. */
export interface EncodedEvent extends EventHeader {
  Type: string;
  /** The event's JSON (`{"Topic":…,"Payload":…}`). */
  json: string;
}

/** The topic of each table whose changes make events. */
const TOPIC_OF: ReadonlyMap<Table, Topic> = new Map<Table, Topic>([
  ["nodes", "Node"],
  ["jobs", "Job"],
  ["allocs", "Allocation"],
  ["volumes", "CSIVolume"],
  ["plugins", "CSIPlugin"],
  ["evals", "Evaluation"],
  ["deployments", "Deployment"],
]);

/**
 * The topics the txn's events can be in (cheap: no record is read); empty when it makes none. A
 * reader asking for none of them skips the txn without converting it.
 */
export function topicsOf(txn: CommittedTxn): Set<string> {
  const topics = new Set<string>();
  for (const c of txn.changes) {
    const t = TOPIC_OF.get(c.table);
    if (t) topics.add(t);
  }
  return topics;
}

export function eventsOf(txn: CommittedTxn): EncodedEvent[] {
  const out: EncodedEvent[] = [];
  for (const c of txn.changes) {
    const ev = eventOf(c);
    if (!ev) continue;
    const { topic, type, key, namespace, filterKeys, payload } = ev;
    const json = JSON.stringify({
      Topic: topic,
      Type: type,
      Key: key,
      Namespace: namespace,
      FilterKeys: filterKeys,
      Index: txn.index,
      Payload: payload,
    });
    out.push({ Topic: topic, Type: type, Key: key, Namespace: namespace, FilterKeys: filterKeys, json });
  }
  return out;
}

interface Built {
  topic: Topic;
  type: string;
  key: string;
  namespace: string;
  filterKeys: string[] | null;
  payload: Record<string, unknown>;
}

function eventOf(c: CommittedChange): Built | undefined {
  const deleted = c.op === "delete";
  switch (c.table) {
    case "volumes":
      return volumeEvent(c.before as CSIVolume | undefined, deleted ? undefined : (c.record as CSIVolume));
    case "plugins": {
      const p = (deleted ? c.before : c.record) as CSIPluginSummary;
      const { EmptySince: _empty, Instances: _counts, ...rest } = p;
      return {
        topic: "CSIPlugin",
        type: deleted ? "CSIPluginDeleted" : "CSIPluginUpdated",
        key: p.ID,
        namespace: "",
        filterKeys: [p.ID],
        payload: { Plugin: { ...rest, CreateTime: p.CreateTime ?? 0, ModifyTime: p.ModifyTime ?? 0 } },
      };
    }
    case "jobs":
      return jobEvent(c.before as Job | undefined, deleted ? undefined : (c.record as Job));
    case "nodes":
      return nodeEvent(c.before as Node | undefined, deleted ? undefined : (c.record as Node));
    case "allocs":
      return deleted ? undefined : allocEvent(c.before as Allocation | undefined, c.record as Allocation);
    case "evals": {
      if (deleted) return undefined;
      const e = c.record as Evaluation;
      return {
        topic: "Evaluation",
        type: "EvaluationUpdated",
        key: e.ID,
        namespace: e.Namespace,
        filterKeys: [e.JobID, e.DeploymentID ?? ""],
        payload: { Evaluation: e },
      };
    }
    case "deployments":
      return deleted
        ? undefined
        : deploymentEvent(c.before as Deployment | undefined, c.record as Deployment);
    default:
      return undefined;
  }
}

function volumeEvent(before: CSIVolume | undefined, after: CSIVolume | undefined): Built {
  const v = (after ?? before)!;
  let type = "CSIVolumeRegistered";
  const decision = after && claimDecisionType(before, after);
  if (!after) type = "CSIVolumeDeregistered";
  else if (turnedAbnormal(before, after)) type = "CSIVolumeAbnormal";
  else if (reconciled(before, after)) type = "CSIVolumeAttachmentReconciled";
  else if (decision) type = decision;
  else if (before && claimsOf(before) !== claimsOf(after)) type = "CSIVolumeClaim";
  return {
    topic: "CSIVolume",
    type,
    key: v.ID,
    namespace: v.Namespace,
    filterKeys: [v.ID, v.Name, v.PluginID],
    payload: { Volume: volumeFull(v, () => undefined, { claims: true }) },
  };
}

/**
 * Either side turned abnormal: the node's `Usage` (NodeGetVolumeStats) or the controller's
 * `ControllerCondition` (ControllerGetVolume), issue 15. Both are optional: records before them
 * have none. One side turning abnormal while the other already was still makes the event.
 */
function turnedAbnormal(before: CSIVolume | undefined, after: CSIVolume): boolean {
  const side = (v: CSIVolume | undefined, field: "Usage" | "ControllerCondition") =>
    (v as { [k: string]: { Abnormal?: unknown } | null | undefined } | undefined)?.[field]?.Abnormal === true;
  return (["Usage", "ControllerCondition"] as const).some((f) => side(after, f) && !side(before, f));
}

/** The attachment reconciler recorded a correction (structs/attachment_reconcile.ts). */
function reconciled(before: CSIVolume | undefined, after: CSIVolume): boolean {
  const time = (v: CSIVolume | undefined) => v?.AttachmentReconcile?.Time;
  return time(after) !== undefined && time(after) !== time(before);
}

function claimsOf(v: CSIVolume): string {
  return JSON.stringify([v.ReadClaims, v.WriteClaims, v.PastClaims]);
}

function jobEvent(before: Job | undefined, after: Job | undefined): Built {
  const j = (after ?? before)!;
  const stopped = after !== undefined && after.Stop && before?.Stop !== true;
  return {
    topic: "Job",
    type: after === undefined || stopped ? "JobDeregistered" : "JobRegistered",
    key: j.ID,
    namespace: j.Namespace,
    filterKeys: null,
    payload: after === undefined ? { Job: redactJob(j), Deleted: true } : { Job: redactJob(j) },
  };
}

function nodeEvent(before: Node | undefined, after: Node | undefined): Built {
  const n = (after ?? before)!;
  let type = "NodeStreamEvent";
  if (!after) type = "NodeDeregistration";
  else if (!before) type = "NodeRegistration";
  else if (JSON.stringify(before.DrainStrategy ?? null) !== JSON.stringify(after.DrainStrategy ?? null))
    type = "NodeDrain";
  else if (before.SchedulingEligibility !== after.SchedulingEligibility) type = "NodeEligibility";
  return { topic: "Node", type, key: n.ID, namespace: "", filterKeys: null, payload: { Node: nodeFull(n) } };
}

function allocEvent(before: Allocation | undefined, a: Allocation): Built {
  let type = "AllocationUpdated";
  if (!before || before.DesiredStatus !== a.DesiredStatus) type = "PlanResult";
  else if (JSON.stringify(before.DesiredTransition ?? {}) !== JSON.stringify(a.DesiredTransition ?? {}))
    type = "AllocationUpdateDesiredStatus";
  // Nomad drops the job from alloc events to keep them small (and it is where volume mount
  // options live: nothing to redact once it is gone).
  const { Job: _job, ...rest } = a;
  return {
    topic: "Allocation",
    type,
    key: a.ID,
    namespace: a.Namespace,
    filterKeys: [a.JobID, a.DeploymentID ?? ""],
    payload: { Allocation: { ...rest, Job: null, TaskStates: taskStatesView(a.TaskStates) } },
  };
}

function deploymentEvent(before: Deployment | undefined, d: Deployment): Built {
  let type = "DeploymentAllocHealth";
  if (!before || before.Status !== d.Status) type = "DeploymentStatusUpdate";
  else if (Object.entries(d.TaskGroups).some(([g, s]) => s.Promoted && !before.TaskGroups[g]?.Promoted))
    type = "DeploymentPromotion";
  return {
    topic: "Deployment",
    type,
    key: d.ID,
    namespace: d.Namespace,
    filterKeys: [d.JobID],
    payload: { Deployment: d },
  };
}
