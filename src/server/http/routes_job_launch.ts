/**
 * `PUT|POST /v1/job/:id/dispatch` (Nomad's JobDispatchRequest: `{Payload, Meta}`) and
 * `PUT|POST /v1/job/:id/periodic/force`: a parent's child launched on request (rpc/job_launch.ts).
 */
import { readJson } from "../wire/http_io.js";
import { sendJson } from "./respond.js";
import { jobParam, namespaceOf, type Route } from "../request_ctx.js";

export const dispatchJob: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = jobParam(ctx);
  const body = await readJson(ctx.req);
  sendJson(ctx.res, await api.jobLaunch.dispatch(ns, id, body));
};

export const forcePeriodic: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  sendJson(ctx.res, await api.jobLaunch.periodicForce(ns, jobParam(ctx)));
};
