/**
 * `PUT /v1/job/:id/revert` (Nomad's JobRevertRequest → JobRegisterResponse), `PUT /v1/job/:id/scale`
 * (ScalingRequest → JobRegisterResponse) and `GET /v1/job/:id/scale` (JobScaleStatusResponse).
 */
import { revertRequestOf } from "../rpc/job_revert.js";
import { scaleRequestOf } from "../rpc/job_scale.js";
import { readJson } from "../wire/http_io.js";
import { blockingIndex, sendJson } from "./respond.js";
import { jobParam, namespaceOf, type Route } from "../request_ctx.js";

export const revertJob: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = jobParam(ctx);
  const req = revertRequestOf(await readJson(ctx.req), id);
  sendJson(ctx.res, await api.jobs.revert(ns, id, req));
};

export const scaleJob: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = jobParam(ctx);
  const req = scaleRequestOf(await readJson(ctx.req));
  sendJson(ctx.res, await api.jobs.scale(ns, id, req));
};

export const jobScaleStatus: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = jobParam(ctx);
  const index = await blockingIndex(api.store, ctx.query, ["jobs", "deployments", "allocs"], ctx.signal);
  sendJson(ctx.res, api.jobs.scaleStatus(ns, id), index);
};
