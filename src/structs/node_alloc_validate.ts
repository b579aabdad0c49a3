/**
 * What a node agent reports about its allocs (Node.UpdateAllocs) and how it asks for them
 * (Node.GetAllocs), checked on the way in like its node record (node_validate.ts): an odd status
 * or a task state of the wrong shape would otherwise be stored and read by the scheduler, the
 * reschedule rules and the API. Pure; every refusal names its field.
 */
import type { AllocClientUpdate, NodeGetAllocsRequest } from "./rpc.js";
import type { ClientStatus, TaskEvent, TaskState } from "./alloc.js";
import { validationError } from "./errors.js";
import { validateReportOrder, type ReportOrder } from "./node_report.js";
import { checkId } from "./ids.js";
import {
  asObject,
  oneOf,
  optArray,
  optBool,
  optNumber,
  optObject,
  optString,
  optStringMap,
} from "./json_check.js";

const CLIENT_STATUSES: readonly ClientStatus[] = ["pending", "running", "complete", "failed", "lost"];
const TASK_STATES: readonly TaskState["State"][] = ["pending", "running", "dead"];

/** Longest a GetAllocs blocking query may ask to wait (the endpoint caps it lower). */
const MAX_WAIT_MS = 24 * 60 * 60_000;

export function validateGetAllocs(input: unknown): NodeGetAllocsRequest {
  const req = asObject("body", input);
  return {
    NodeID: checkId("NodeID", req.NodeID),
    MinIndex: optNumber("MinIndex", req.MinIndex, 0, { integer: true, min: 0 }),
    WaitMs: optNumber("WaitMs", req.WaitMs, 0, { integer: true, min: 0, max: MAX_WAIT_MS }),
  };
}

/** One alloc's update; TaskStates absent: the node says nothing new about its tasks. */
export type AllocUpdate = Omit<AllocClientUpdate, "TaskStates"> & { TaskStates?: Record<string, TaskState> };

export function validateAllocUpdates(input: unknown): {
  NodeID: string;
  Allocs: AllocUpdate[];
  ReportOrder: ReportOrder | undefined;
} {
  const req = asObject("body", input);
  const NodeID = checkId("NodeID", req.NodeID);
  if (!Array.isArray(req.Allocs)) throw validationError("Allocs", "must be an array");
  const ReportOrder = validateReportOrder("ReportOrder", req.ReportOrder);
  return { NodeID, Allocs: req.Allocs.map((u, i) => allocUpdate(`Allocs[${i}]`, u)), ReportOrder };
}

function allocUpdate(field: string, input: unknown): AllocUpdate {
  const u = asObject(field, input);
  const states = optObject(`${field}.TaskStates`, u.TaskStates);
  const TaskStates: Record<string, TaskState> = {};
  for (const [name, st] of Object.entries(states ?? {})) {
    if (name === "__proto__")
      throw validationError(`${field}.TaskStates.${name}`, "is not a valid task name");
    TaskStates[name] = taskState(`${field}.TaskStates.${name}`, st);
  }
  return {
    ID: checkId(`${field}.ID`, u.ID),
    ClientStatus: oneOf(`${field}.ClientStatus`, u.ClientStatus, CLIENT_STATUSES, "client status"),
    ClientDescription: optString(`${field}.ClientDescription`, u.ClientDescription, ""),
    TaskStates: states ? TaskStates : undefined,
  };
}

function optTime(field: string, v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") throw validationError(field, "must be a timestamp string or null");
  return v;
}

function taskState(field: string, input: unknown): TaskState {
  const s = asObject(field, input);
  return {
    State: oneOf(`${field}.State`, s.State, TASK_STATES, "task state"),
    Failed: optBool(`${field}.Failed`, s.Failed, false),
    Restarts: optNumber(`${field}.Restarts`, s.Restarts, 0, { integer: true, min: 0 }),
    StartedAt: optTime(`${field}.StartedAt`, s.StartedAt),
    FinishedAt: optTime(`${field}.FinishedAt`, s.FinishedAt),
    Events: optArray(`${field}.Events`, s.Events).map((e, i) => taskEvent(`${field}.Events[${i}]`, e)),
  };
}

function taskEvent(field: string, input: unknown): TaskEvent {
  const e = asObject(field, input);
  return {
    Type: optString(`${field}.Type`, e.Type, ""),
    // Unix nanoseconds are past 2^53: a finite, non-negative number, not an exact integer.
    Time: optNumber(`${field}.Time`, e.Time, 0, { min: 0 }),
    DisplayMessage: optString(`${field}.DisplayMessage`, e.DisplayMessage, ""),
    Details: optStringMap(`${field}.Details`, e.Details),
  };
}
