/**
 * /v1/operator/snapshot (Nomad's routes, management token only): GET answers the snapshot file
 * (application/octet-stream, `X-Nomad-Index` the snapshot's index, `Digest: sha-256=<base64>` of
 * the whole file as Nomad's); `?stale` is accepted — every server reads one consistent state, so
 * it changes nothing. PUT (or POST) restores the request body; the answer is `{ "Index": N }`, the
 * store's index after the restore, also in `X-Nomad-Index`. The file format and what a restore
 * does: src/server/state/snapshot/.
 *
 * A snapshot can be larger than the API's body limit (wire/body_limit.ts), so this one route reads
 * its body up to its own limit, MAX_SNAPSHOT_BYTES, and is let past the router's Content-Length check.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { BerthError } from "../../structs/errors.js";
import type { Route } from "../request_ctx.js";
import { leaderHeaders } from "./leader_headers.js";
import { sendJson } from "./respond.js";

export const SNAPSHOT_PATH = "/v1/operator/snapshot";
/** 2 GiB: the largest snapshot file a restore reads (it is held in memory while it is checked). */
export const MAX_SNAPSHOT_BYTES = 2 * 1024 * 1024 * 1024 - 1;

/** Whether the router's body limit is this route's own (a restore's Content-Length may pass 8 MiB). */
export function ownsBodyLimit(req: IncomingMessage): boolean {
  const path = (req.url ?? "").split("?")[0]?.replace(/\/+$/, "");
  return path === SNAPSHOT_PATH && (req.method === "PUT" || req.method === "POST");
}

function unavailable(): BerthError {
  return new BerthError("ERR_INTERNAL", "this server takes no snapshots");
}

export const saveSnapshotRoute: Route = async (ctx, api) => {
  if (!api.snapshots) throw unavailable();
  const { file, header } = await api.snapshots.save(ctx.signal);
  ctx.res.writeHead(200, {
    "Content-Type": "application/octet-stream",
    "Content-Length": String(file.length),
    "X-Nomad-Index": String(header.Index),
    Digest: `sha-256=${createHash("sha256").update(file).digest("base64")}`,
    ...leaderHeaders(ctx.res),
  });
  ctx.res.end(file);
};

export const restoreSnapshotRoute: Route = async (ctx, api) => {
  if (!api.snapshots) throw unavailable();
  const file = await readUpTo(ctx.req, MAX_SNAPSHOT_BYTES);
  if (file.length === 0) {
    throw new BerthError("ERR_VALIDATION", "snapshot: the request body is empty (send the snapshot file)", {
      field: "snapshot",
    });
  }
  const { index } = await api.snapshots.restore(file, ctx.signal);
  sendJson(ctx.res, { Index: index }, index);
};

/** The whole body, refused (413) past `max` bytes; the rest of a refused body is read and dropped. */
function readUpTo(req: IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > max) return Promise.reject(tooLarge(max));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= max) chunks.push(c);
    });
    req.on("end", () => (size > max ? reject(tooLarge(max)) : resolve(Buffer.concat(chunks))));
    req.on("error", reject);
  });
}

function tooLarge(max: number): BerthError {
  return new BerthError("ERR_REQUEST_TOO_LARGE", `snapshot: the file is larger than ${max} bytes`, {
    field: "body",
  });
}
