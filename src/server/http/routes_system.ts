/**
 * Nomad's /v1/system routes (management token): `PUT /v1/system/gc` forces a garbage collection
 * (server/gc/system.ts); `PUT /v1/system/reconcile/summaries` answers at once, since berth derives
 * job summaries from the allocs on every read (structs/job_summary.ts) and keeps none to repair.
 * Both answer an empty 200, as Nomad's do.
 */
import { BerthError } from "../../structs/errors.js";
import type { Route } from "../request_ctx.js";

export const forceGc: Route = async (ctx, api) => {
  if (api.gc === undefined)
    throw new BerthError("ERR_NOT_FOUND", "system gc is not served here: ask a server");
  await api.gc.force();
  ctx.res.writeHead(200, { "Content-Length": "0" });
  ctx.res.end();
};

export const reconcileSummaries: Route = (ctx) => {
  ctx.res.writeHead(200, { "Content-Length": "0" });
  ctx.res.end();
  return Promise.resolve();
};
