/** /v1/jobs, /v1/job/:id, /v1/allocations, /v1/allocation/:id. */
import { redactJob } from "../../structs/redact.js";
import { validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import { readJson } from "../wire/http_io.js";
import { blockingIndex, boolParam, sendJson } from "./respond.js";
import { sendCachedPage } from "./list_cache.js";
import { listOptions, optionsKey, pageOf } from "./list_options.js";
import { jobPageFromStore } from "./list_store_pages.js";
import { allocFull, allocStub, jobStub } from "../views/stubs.js";
import { jobParam, namespaceOf, param, type Route } from "../request_ctx.js";
import { inRequestNamespace } from "./routes_namespaces.js";
import { authorizeJobBody } from "../acl/authorize.js";
import { nsFilter } from "../acl/guards.js";
import { watchKeys } from "../state/watch_keys.js";

export const listJobs: Route = async (ctx, api) => {
  const opts = listOptions(ctx.query);
  const index = await blockingIndex(api.store, ctx.query, ["jobs"], ctx.signal);
  const ns = namespaceOf(ctx, true);
  const visible = nsFilter(ctx, api, "list-jobs");
  const key = `jobs|${ns ?? "*"}|${optionsKey(opts, ctx.query)}${visible.key}`;
  const query = {
    namespace: ns,
    keepNamespace: (n: string) => visible.keep(n),
  };
  await sendCachedPage(
    ctx.res,
    api.store,
    key,
    index,
    () =>
      jobPageFromStore(api.store, opts, query, jobStub) ??
      pageOf(
        api.jobs.list(ns).filter((j) => visible.keep(j.Namespace)),
        opts,
        "namespace-id",
        jobStub,
      ),
  );
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
  // Nomad's namespaceForJob: ?namespace= first, then the job's own, then "default" (Nomad's Go
  // client sends "Namespace": ""); the ACL checks the namespace the job will live in.
  const job = inRequestNamespace(ctx, body.Job);
  authorizeJobBody(ctx, job);
  sendJson(ctx.res, await api.jobs.register(job, enforce));
};

/**
 * `PUT /v1/job/:id`: the same registration, for a body whose job has that ID (Nomad's answer
 * otherwise: 400 "Job ID does not match name"). The answer carries the register warnings
 * (job_warnings.ts) as `/v1/jobs` does.
 */
export const registerJobAt: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const body = await readJson(ctx.req);
  if (!isObject(body) || !isObject(body.Job)) throw validationError("Job", 'the body must be {"Job": {...}}');
  if (body.Job.ID !== id) throw validationError("Job.ID", "Job ID does not match name");
  const job = inRequestNamespace(ctx, body.Job);
  authorizeJobBody(ctx, job);
  sendJson(ctx.res, await api.jobs.register(job));
};

export const getJob: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = jobParam(ctx);
  const index = await blockingIndex(api.store, ctx.query, ["jobs"], ctx.signal, () => [
    watchKeys.job(ns, id),
  ]);
  sendJson(ctx.res, redactJob(api.jobs.get(ns, id)), index);
};

export const deregisterJob: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  sendJson(ctx.res, await api.jobs.deregister(ns, jobParam(ctx), boolParam(ctx.query, "purge")));
};

export const jobAllocations: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = jobParam(ctx);
  const index = await blockingIndex(api.store, ctx.query, ["allocs"], ctx.signal, () => [
    watchKeys.allocsOfJob(ns, id),
  ]);
  sendJson(ctx.res, api.jobs.allocations(ns, id, boolParam(ctx.query, "all")).map(allocStub), index);
};

export const listAllocs: Route = async (ctx, api) => {
  const opts = listOptions(ctx.query);
  const index = await blockingIndex(api.store, ctx.query, ["allocs"], ctx.signal);
  const ns = namespaceOf(ctx, true);
  const visible = nsFilter(ctx, api, "read-job");
  const key = `allocs|${ns ?? "*"}|${optionsKey(opts, ctx.query)}${visible.key}`;
  await sendCachedPage(ctx.res, api.store, key, index, () =>
    pageOf(
      api.allocs.list(ns).filter((a) => visible.keep(a.Namespace)),
      opts,
      "index-id",
      allocStub,
    ),
  );
};

export const getAlloc: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["allocs"], ctx.signal, () => [
    watchKeys.alloc(id),
  ]);
  sendJson(ctx.res, allocFull(api.allocs.get(id)), index);
};
