/** Small pure pieces of the task runner: its events and its kill timeout. */
import type { TaskEvent } from "../../../structs/alloc.js";
import { NS_PER_MS, type Task } from "../../../structs/job.js";

const DEFAULT_KILL_TIMEOUT_MS = 5000;

/** A task event stamped now (Unix nanoseconds, as Nomad's). */
export function newTaskEvent(type: string, message: string, details: Record<string, string>): TaskEvent {
  return { Type: type, Time: Date.now() * NS_PER_MS, DisplayMessage: message, Details: details };
}

/** Milliseconds between the stop signal and SIGKILL: the task's kill_timeout, 5 s when unset. */
export function killTimeoutMs(task: Pick<Task, "KillTimeout">): number {
  return task.KillTimeout > 0 ? task.KillTimeout / NS_PER_MS : DEFAULT_KILL_TIMEOUT_MS;
}
