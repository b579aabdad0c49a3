/**
 * Nomad's routes for acting on one alloc: `PUT|POST /v1/allocation/:id/stop`,
 * `PUT|POST /v1/client/allocation/:id/signal` (`{"Task", "Signal"}`),
 * `PUT|POST /v1/client/allocation/:id/restart` (`{"TaskName", "AllTasks"}`),
 * `GET /v1/client/allocation/:id/stats` (Nomad's AllocResourceUsage: structs/resource_usage.ts) and
 * `GET /v1/client/fs/logs/:id?task=&type=stdout|stderr&origin=start|end&offset=&follow=&plain=&file=`.
 * Logs answer Nomad's stream frames (`{"Offset", "Data" (base64), "File"}` objects one after the
 * other; Offset is in File, one of the rotated `alloc/logs/<task>.<type>.<n>`) or, with
 * `plain=true`, the bytes; the log is read across its rotated files as one stream, and
 * `follow=true` keeps the answer open and sends what the task writes (going on into the next file
 * after a rotation) until the task is dead or the client goes away. Exec is a WebSocket (exec_ws.ts).
 */
import { sleep } from "../../internal/abort.js";
import { validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import { readJson } from "../wire/http_io.js";
import { boolParam, sendJson } from "./respond.js";
import { param, type Route } from "../request_ctx.js";

/** How often a follow asks the node for more. */
export const LOG_FOLLOW_POLL_MS = 250;
const LOG_CHUNK = 256 * 1024;

export const stopAlloc: Route = async (ctx, api) => {
  sendJson(ctx.res, await api.allocOps.stop(param(ctx, "id")));
};

export const signalAlloc: Route = async (ctx, api) => {
  const body = await readJson(ctx.req);
  if (!isObject(body)) throw validationError("body", "must be a JSON object");
  const task = optString("Task", body.Task);
  const signal = optString("Signal", body.Signal);
  await api.allocOps.signal(param(ctx, "id"), task, signal);
  sendJson(ctx.res, {});
};

export const restartAlloc: Route = async (ctx, api) => {
  const body = await readJson(ctx.req);
  if (!isObject(body)) throw validationError("body", "must be a JSON object");
  const task = optString("TaskName", body.TaskName);
  if (body.AllTasks !== undefined && typeof body.AllTasks !== "boolean")
    throw validationError("AllTasks", "must be a boolean");
  await api.allocOps.restart(param(ctx, "id"), task, body.AllTasks === true);
  sendJson(ctx.res, {});
};

function optString(field: string, v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw validationError(field, "must be a string");
  return v;
}

export const allocStats: Route = async (ctx, api) => {
  sendJson(ctx.res, await api.allocOps.stats(param(ctx, "id"), ctx.signal));
};

export const allocLogs: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const task = ctx.query.get("task") ?? "";
  if (!task) throw validationError("task", "must name the task whose logs to read");
  const type = ctx.query.get("type") ?? "";
  if (type !== "stdout" && type !== "stderr") throw validationError("type", 'must be "stdout" or "stderr"');
  const origin = ctx.query.get("origin") || "start";
  if (origin !== "start" && origin !== "end") throw validationError("origin", 'must be "start" or "end"');
  const rawOffset = ctx.query.get("offset") || "0";
  if (!/^\d{1,15}$/.test(rawOffset))
    throw validationError("offset", "must be a non-negative decimal integer");
  const follow = boolParam(ctx.query, "follow");
  const plain = boolParam(ctx.query, "plain");
  const prefix = `alloc/logs/${task}.${type}.`;
  const index = fileIndex(ctx.query.get("file"), prefix);

  // The first read answers errors (unknown alloc, node away) as a status before anything is sent.
  let read = await api.allocOps.readLog(
    id,
    { Task: task, Type: type, Offset: Number(rawOffset), Origin: origin, Limit: LOG_CHUNK, ...index },
    ctx.signal,
  );
  ctx.res.writeHead(200, { "Content-Type": plain ? "text/plain; charset=utf-8" : "application/json" });
  for (;;) {
    const data = Buffer.from(read.Data, "base64");
    const at = read.Index ?? 0;
    if (data.length > 0) {
      const frame = { Offset: read.Offset + data.length, Data: read.Data, File: `${prefix}${at}` };
      ctx.res.write(plain ? data : JSON.stringify(frame));
    }
    // Where the log goes on: this file, or the next one once this one is read whole (rotated).
    let next = { Index: at, Offset: read.Offset + data.length };
    if (next.Offset >= read.Size && read.Next === true) next = { Index: at + 1, Offset: 0 };
    const more = next.Offset < read.Size || next.Index !== at;
    if (!more && (!follow || read.TaskDead)) break;
    if (!more) {
      try {
        await sleep(LOG_FOLLOW_POLL_MS, ctx.signal);
      } catch {
        break;
      }
    }
    if (ctx.signal.aborted) break;
    try {
      read = await api.allocOps.readLog(
        id,
        { Task: task, Type: type, Origin: "start", Limit: LOG_CHUNK, ...next },
        ctx.signal,
      );
    } catch {
      // The alloc went away or its node did: the stream ends, as Nomad's does.
      break;
    }
  }
  ctx.res.end();
};

/**
 * berth's `file` parameter: a frame's File (`alloc/logs/<task>.<type>.<n>`), making `offset` an
 * offset into that file — how `alloc logs -tail -f` follows from exactly where its tail ended,
 * whatever rotated meanwhile. Absent: `offset` counts from `origin` across the files.
 */
function fileIndex(file: string | null, prefix: string): { Index?: number } {
  if (file === null || file === "") return {};
  const n = file.startsWith(prefix) ? file.slice(prefix.length) : "";
  if (!/^(0|[1-9]\d{0,8})$/.test(n))
    throw validationError("file", `must be a file of this log, ${prefix}<n>`);
  return { Index: Number(n) };
}
