/** The alloc's client status from its tasks' states, as Nomad derives it. */
import type { ClientStatus, TaskState } from "../../structs/alloc.js";

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
