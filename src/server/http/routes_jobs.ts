/** /v1/jobs, /v1/job/:id, /v1/allocations, /v1/allocation/:id. */
import { redactAlloc, redactJob } from "../../structs/redact.js";
import { validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import { blockingIndex, boolParam, readJson, sendJson } from "./respond.js";
import { sendCachedJson } from "./list_cache.js";
import { allocStub, jobStub } from "./stubs.js";
import { namespaceOf, param, type Route } from "./context.js";

export const listJobs: Route = async (ctx, api) => {
  const index = await blockingIndex(api.store, ctx.query, ["jobs"], ctx.signal);
  const ns = namespaceOf(ctx, true);
  sendCachedJson(ctx.res, api.store, `jobs|${ns ?? "*"}`, index, () => api.jobs.list(ns).map(jobStub));
};

export const registerJob: Route = async (ctx, api) => {
  const body = await readJson(ctx.req);
  if (!isObject(body) || !isObject(body.Job)) throw validationError("Job", 'the body must be {"Job": {...}}');
  let enforce: number | undefined;
  if (body.EnforceIndex === true) {
    const i = body.JobModifyIndex ?? 0;
    if (typeof i !== "number" || !Number.isSafeInteger(i) || i < 0)
      throw validationError("JobModifyIndex", "must be a non-negative integer");
    enforce = i;
  }
  sendJson(ctx.res, await api.jobs.register(body.Job, enforce));
};

export const getJob: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["jobs"], ctx.signal);
  sendJson(ctx.res, redactJob(api.jobs.get(ns, id)), index);
};

export const deregisterJob: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  sendJson(ctx.res, await api.jobs.deregister(ns, param(ctx, "id"), boolParam(ctx.query, "purge")));
};

export const jobAllocations: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["allocs"], ctx.signal);
  sendJson(ctx.res, api.jobs.allocations(ns, id, boolParam(ctx.query, "all")).map(allocStub), index);
};

export const listAllocs: Route = async (ctx, api) => {
  const index = await blockingIndex(api.store, ctx.query, ["allocs"], ctx.signal);
  const ns = namespaceOf(ctx, true);
  sendCachedJson(ctx.res, api.store, `allocs|${ns ?? "*"}`, index, () => api.allocs.list(ns).map(allocStub));
};

export const getAlloc: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["allocs"], ctx.signal);
  sendJson(ctx.res, redactAlloc(api.allocs.get(id)), index);
};
