/**
 * ClientAlloc.ReadLog: a window of a task's stdout or stderr, the rotated files `<alloc dir>/<task>/
 * logs/<task>.<type>.<n>` read as one stream (logmon/multi_file_log.ts), without following links
 * (a task can replace its files: no_follow.ts).
 *
 * For a task this agent runs, the runner says whether it is dead (a follow then ends). An alloc
 * the agent runs no task runner for — it finished before an agent restart (a restored terminal
 * alloc gets no task runners), or the agent never knew it — is read from the files still in its
 * alloc dir, `<data dir>/alloc/<alloc id>`, and its task is dead: nothing writes there any more.
 * Only a task dir that is there is read (else 404); the alloc ID and task name must each be one
 * plain path component, and the walk starts at the agent's own `<data dir>/alloc`, so no request
 * can read outside an alloc dir. Which allocs and tasks a caller may read is the server's check
 * (its ACL and namespace rules, and the task must be one of the alloc's job's), made before it asks
 * the node.
 */
import { BerthError, notFound } from "../../structs/errors.js";
import { isValidId } from "../../structs/ids.js";
import type { ClientMethods } from "../../structs/rpc.js";
import type { TaskRunnerLike } from "../allocrunner/alloc_runner_config.js";
import { openDirNoFollow } from "../allocdir/no_follow.js";
import { readLogWindow } from "../logmon/multi_file_log.js";

/** A single read's cap: the server asks again from the new offset. */
export const MAX_LOG_READ = 1 << 20;

type ReadLogRequest = ClientMethods["ClientAlloc.ReadLog"][0];
type ReadLogResponse = ClientMethods["ClientAlloc.ReadLog"][1];

/** Where a read starts: the alloc dir (`anchor`/`rel`) and whether the task is dead. */
export interface LogSource {
  anchor: string;
  rel: string[];
  dead: boolean;
}

/**
 * The source for a task this agent runs (`runner`, of the alloc dir `root`), else for the alloc's
 * files left on the node below `allocsDir` (see the module comment). Throws 404 when neither is.
 */
export async function logSource(
  req: ReadLogRequest,
  runner: { root: string; task: TaskRunnerLike | undefined } | undefined,
  allocsDir: string | undefined,
): Promise<LogSource> {
  checkTaskName(req.Task);
  if (runner?.task) return { anchor: runner.root, rel: [], dead: runner.task.state().State === "dead" };
  if (allocsDir === undefined || !isValidId(req.AllocID)) {
    throw runner ? taskNotFound(req) : notFound("allocation", req.AllocID);
  }
  // The task's dir must be there (a directory, reached without links), or there is nothing to read.
  const rel = [req.AllocID];
  try {
    const dir = await openDirNoFollow(allocsDir, [...rel, req.Task]);
    await dir.close();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR")
      throw runner ? taskNotFound(req) : notFound("allocation", req.AllocID);
    throw err;
  }
  return { anchor: allocsDir, rel, dead: true };
}

/**
 * Reads the window `req` asks for from `src`, across the rotated files `<task>.<type>.<n>`
 * (multi_file_log.ts): one file per read, the answer says which and whether a later one exists.
 * Nothing written yet is an empty read of file 0.
 */
export async function readLog(req: ReadLogRequest, src: LogSource): Promise<ReadLogResponse> {
  if (req.Type !== "stdout" && req.Type !== "stderr")
    throw new BerthError("ERR_VALIDATION", `Type: must be stdout or stderr, not ${JSON.stringify(req.Type)}`);
  if (req.Index !== undefined && !(Number.isSafeInteger(req.Index) && req.Index >= 0))
    throw new BerthError("ERR_VALIDATION", `Index: must be a non-negative integer`);
  const w = await readLogWindow(
    { anchor: src.anchor, rel: [...src.rel, req.Task, "logs"], base: `${req.Task}.${req.Type}` },
    { offset: req.Offset, origin: req.Origin, index: req.Index, limit: Math.min(req.Limit, MAX_LOG_READ) },
  );
  return {
    Data: w.data.toString("base64"),
    Offset: w.offset,
    Size: w.size,
    Index: w.index,
    Next: w.next,
    TaskDead: src.dead,
  };
}

/** A task name is one plain path component, never the alloc's shared dir `alloc`. */
function checkTaskName(name: string): void {
  if (
    name === "" ||
    name === "." ||
    name === ".." ||
    name === "alloc" ||
    name.includes("/") ||
    name.includes("\0")
  ) {
    throw new BerthError("ERR_VALIDATION", `Task: ${JSON.stringify(name)} is not a task name`);
  }
}

function taskNotFound(req: ReadLogRequest): BerthError {
  return notFound(`task in allocation ${req.AllocID}:`, req.Task);
}
