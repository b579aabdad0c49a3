/**
 * Nomad's client FS routes (command/agent/fs_endpoint.go), `alloc fs`:
 * - `GET /v1/client/fs/ls/:alloc_id?path=` → `[AllocFileInfo]` (path defaults to the alloc dir);
 * - `GET /v1/client/fs/stat/:alloc_id?path=` → `AllocFileInfo`;
 * - `GET /v1/client/fs/readat/:alloc_id?path=&offset=&limit=` → the bytes from `offset`, at most
 *   `limit` (absent or ≤ 0: to the end);
 * - `GET /v1/client/fs/cat/:alloc_id?path=` → the whole file;
 * - `GET /v1/client/fs/stream/:alloc_id?path=&offset=&origin=start|end&follow=` → Nomad's stream
 *   frames (`{"Offset", "Data" (base64), "File"}` one after the other, Offset where the frame's data
 *   ends), from `offset` bytes after the start or before the end; with `follow` (Nomad's default:
 *   true) what is appended keeps coming until the caller goes away, polled every LOG_FOLLOW_POLL_MS.
 * They run on the alloc's node (ClientFS.*, client/rpc/client_alloc_fs.ts: confined to the alloc dir,
 * links never followed, secrets never read). Bytes are fetched in node-sized chunks and sent as
 * they come; the first read answers errors (no such file, node away) as a status, a later failure
 * cuts the answer short (the client sees a truncated body, never a wrong one).
 */
import { validationError } from "../../structs/errors.js";
import type { AllocFsReadResponse } from "../../structs/rpc_fs.js";
import { MAX_FS_READ } from "../../structs/rpc_fs.js";
import { param, type Ctx, type HttpEndpoints, type Route } from "../request_ctx.js";
import { boolParam, sendJson } from "./respond.js";
import { LOG_FOLLOW_POLL_MS } from "./routes_alloc_ops.js";
import { sleep } from "../../internal/abort.js";

function pathParam(ctx: Ctx): string {
  const p = ctx.query.get("path") ?? "";
  if (p === "") throw validationError("path", "must provide a file name");
  return p;
}

function intParam(ctx: Ctx, name: string, required: boolean): number | undefined {
  const raw = ctx.query.get(name) ?? "";
  if (raw === "") {
    if (required) throw validationError(name, "must be an integer");
    return undefined;
  }
  if (!/^-?\d{1,15}$/.test(raw))
    throw validationError(name, `must be an integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

export const fsList: Route = async (ctx, api) => {
  const path = ctx.query.get("path") || "/";
  sendJson(ctx.res, await api.allocOps.fs(param(ctx, "id"), "ClientFS.List", { Path: path }, ctx.signal));
};

export const fsStat: Route = async (ctx, api) => {
  const path = pathParam(ctx);
  sendJson(ctx.res, await api.allocOps.fs(param(ctx, "id"), "ClientFS.Stat", { Path: path }, ctx.signal));
};

export const fsReadAt: Route = async (ctx, api) => {
  const path = pathParam(ctx);
  const offset = intParam(ctx, "offset", true)!;
  if (offset < 0) throw validationError("offset", "must not be negative");
  const limit = intParam(ctx, "limit", false);
  await sendBytes(ctx, api, path, offset, limit === undefined || limit <= 0 ? Infinity : limit);
};

export const fsCat: Route = async (ctx, api) => {
  await sendBytes(ctx, api, pathParam(ctx), 0, Infinity);
};

/** Resolves once the answer takes more, or the caller has gone (the loop then stops). */
function drained(ctx: Ctx): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      ctx.res.off("drain", done);
      ctx.res.off("close", done);
      resolve();
    };
    ctx.res.once("drain", done);
    ctx.res.once("close", done);
  });
}

/** Sends `count` bytes of `path` from `offset` (fewer when the file ends first). */
async function sendBytes(ctx: Ctx, api: HttpEndpoints, path: string, offset: number, count: number) {
  const id = param(ctx, "id");
  const read = (at: number, left: number): Promise<AllocFsReadResponse> =>
    api.allocOps.fs(
      id,
      "ClientFS.ReadAt",
      { Path: path, Offset: at, Limit: Math.min(left, MAX_FS_READ) },
      ctx.signal,
    );
  let chunk = await read(offset, count);
  ctx.res.writeHead(200, { "Content-Type": "application/octet-stream" });
  let at = offset;
  let left = count;
  for (;;) {
    const data = Buffer.from(chunk.Data, "base64");
    if (data.length === 0) break;
    at += data.length;
    left -= data.length;
    if (!ctx.res.write(data)) await drained(ctx);
    if (left <= 0 || ctx.signal.aborted) break;
    try {
      chunk = await read(at, left);
    } catch {
      // The node went away or the file did: the answer ends short, it never ends wrong.
      ctx.res.destroy();
      return;
    }
  }
  ctx.res.end();
}

export const fsStream: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const path = pathParam(ctx);
  const offset = intParam(ctx, "offset", false) ?? 0;
  if (offset < 0) throw validationError("offset", "must not be negative");
  const origin = ctx.query.get("origin") || "start";
  if (origin !== "start" && origin !== "end") throw validationError("origin", "origin must be start or end");
  const follow = ctx.query.get("follow") === null ? true : boolParam(ctx.query, "follow");
  const read = (at: number): Promise<AllocFsReadResponse> =>
    api.allocOps.fs(id, "ClientFS.ReadAt", { Path: path, Offset: at, Limit: MAX_FS_READ }, ctx.signal);
  // The first read answers errors as a status; from the end, it also tells the size.
  let chunk = await read(origin === "end" ? 0 : offset);
  let at = origin === "end" ? Math.max(0, chunk.Size - offset) : offset;
  if (origin === "end") chunk = await read(at);
  ctx.res.writeHead(200, { "Content-Type": "application/json" });
  for (;;) {
    const data = Buffer.from(chunk.Data, "base64");
    if (data.length > 0) {
      at += data.length;
      if (!ctx.res.write(JSON.stringify({ Offset: at, Data: chunk.Data, File: path }))) await drained(ctx);
    } else if (!follow) break;
    else {
      try {
        await sleep(LOG_FOLLOW_POLL_MS, ctx.signal);
      } catch {
        break;
      }
    }
    if (ctx.signal.aborted) break;
    try {
      chunk = await read(at);
    } catch {
      // The alloc, its node or the file went away: the stream ends, as Nomad's.
      break;
    }
  }
  ctx.res.end();
};
