/**
 * What the alloc commands that act on a task share: the alloc by ID or unique prefix, and the task
 * (the `-task` flag, the second argument, or the group's only task) as Nomad's CLI resolves it.
 */
import type { Allocation } from "../api/index.js";
import { UsageError } from "./flags.js";
import type { CommandIO } from "./io.js";
import { getByIdOrPrefix } from "./prefix.js";

export function findAlloc(io: CommandIO, id: string): Promise<Allocation> {
  return getByIdOrPrefix(
    id,
    "allocation",
    (x) => io.api.allocations.info(x),
    (prefix) => io.api.allocations.list({ prefix }),
  );
}

/** The named task (checked against the alloc's group), or the group's only task. */
export function taskOf(alloc: Allocation, named: string | undefined): string {
  const tasks = alloc.Job.TaskGroups.find((g) => g.Name === alloc.TaskGroup)?.Tasks.map((t) => t.Name) ?? [];
  if (named) {
    if (!tasks.includes(named))
      throw new UsageError(`Could not find task named: ${named}, found: ${tasks.join(", ")}`);
    return named;
  }
  if (tasks.length === 1) return tasks[0]!;
  throw new UsageError(
    `Allocation ${JSON.stringify(alloc.ID.slice(0, 8))} is running the following tasks:\n` +
      tasks.map((t) => `  * ${t}`).join("\n") +
      "\n\nPlease specify the task.",
  );
}
