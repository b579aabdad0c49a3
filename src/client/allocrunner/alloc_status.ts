/**
 * The alloc's client status from its tasks' states, as Nomad derives it; and the task states the
 * alloc runner keeps itself before a task's runner exists.
 */
import type { ClientStatus, TaskEvent, TaskState } from "../../structs/alloc.js";
import { NS_PER_MS } from "../../structs/job.js";

/** Events kept per task before its runner exists (the task runner caps its own list likewise). */
const MAX_PRERUN_EVENTS = 50;

export function clientStatusOf(states: TaskState[]): { status: ClientStatus; description: string } {
  let running = false;
  let pending = false;
  let failed = false;
  for (const s of states) {
    if (s.State === "running") running = true;
    else if (s.State === "pending") pending = true;
    else if (s.Failed) failed = true;
  }
  if (failed) return { status: "failed", description: "Failed tasks" };
  if (running) return { status: "running", description: "Tasks are running" };
  if (pending) return { status: "pending", description: "No tasks have started" };
  return { status: "complete", description: "All tasks have completed" };
}

export function newTaskState(): TaskState {
  return { State: "pending", Failed: false, Restarts: 0, StartedAt: null, FinishedAt: null, Events: [] };
}

/** A task state with one more event, for a task whose runner does not exist yet. */
export function withPrerunEvent(
  st: TaskState,
  type: string,
  message: string,
  details: Record<string, string>,
): TaskState {
  const ev: TaskEvent = {
    Type: type,
    Time: Date.now() * NS_PER_MS,
    DisplayMessage: message,
    Details: details,
  };
  return { ...st, Events: [...st.Events, ev].slice(-MAX_PRERUN_EVENTS) };
}

/** A task whose runner threw: dead and failed, with the error as a "Task Runner Failed" event. */
export function runnerFailed(st: TaskState, message: string): TaskState {
  const ev: TaskEvent = {
    Type: "Task Runner Failed",
    Time: Date.now() * NS_PER_MS,
    DisplayMessage: message,
    Details: {},
  };
  return { ...st, State: "dead", Failed: true, Events: [...st.Events, ev] };
}
