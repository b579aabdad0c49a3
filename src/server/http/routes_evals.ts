/**
 * /v1/evaluations, /v1/evaluation/:id, /v1/evaluation/:id/allocations, /v1/job/:id/evaluations:
 * the scheduler's records of why a job's allocs were (not) placed, in Nomad's Evaluation shape.
 * Lists answer oldest first by CreateIndex (Nomad's clients sort them newest first themselves).
 */
import type { Allocation } from "../../structs/alloc.js";
import { notFound } from "../../structs/errors.js";
import type { Evaluation } from "../../structs/eval.js";
import { blockingIndex, sendJson } from "./respond.js";
import { allocStub } from "../views/stubs.js";
import { sendCachedPage } from "./list_cache.js";
import { listOptions, optionsKey, pageOf } from "./list_options.js";
import { jobParam, namespaceOf, param, type Route } from "../request_ctx.js";
import { nsFilter } from "../acl/guards.js";

/** The API's Evaluation: the record without the server's bookkeeping. */
export function evalView(e: Evaluation) {
  const { PlacedAllocIDs: _placed, ...rest } = e;
  return rest;
}

/**
 * `?job=` and `?status=` narrow the list, as Nomad's do; then Nomad's list options (list_options.ts:
 * prefix, filter, per_page/next_token ordered by CreateIndex, reverse).
 */
export const listEvals: Route = async (ctx, api) => {
  const opts = listOptions(ctx.query);
  const index = await blockingIndex(api.store, ctx.query, ["evals"], ctx.signal);
  const job = ctx.query.get("job") ?? "";
  const status = ctx.query.get("status") ?? "";
  const ns = namespaceOf(ctx, true);
  const visible = nsFilter(ctx, api, "read-job");
  const key = `evals|${ns ?? "*"}|${job}|${status}|${optionsKey(opts, ctx.query)}${visible.key}`;
  await sendCachedPage(ctx.res, api.store, key, index, () => {
    const evals = api.store
      .listEvals(ns)
      .filter(
        (e) =>
          visible.keep(e.Namespace) &&
          (job === "" || e.JobID === job) &&
          (status === "" || e.Status === status),
      );
    return pageOf(evals, opts, "index-id", evalView);
  });
};

export const getEval: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["evals"], ctx.signal);
  const ev = api.store.getEval(id);
  if (!ev) throw notFound("evaluation", id);
  sendJson(ctx.res, evalView(ev), index);
};

/** The allocs the eval placed that the server still knows. */
export const evalAllocations: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["evals", "allocs"], ctx.signal);
  const ev = api.store.getEval(id);
  if (!ev) throw notFound("evaluation", id);
  const allocs = ev.PlacedAllocIDs.map((a) => api.store.getAlloc(a)).filter(
    (a): a is Allocation => a !== undefined,
  );
  sendJson(ctx.res, allocs.map(allocStub), index);
};

/** A job's evals, also after the job is purged (until the garbage collector removes them). */
export const jobEvals: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = jobParam(ctx);
  const index = await blockingIndex(api.store, ctx.query, ["evals"], ctx.signal);
  sendJson(ctx.res, api.store.evalsByJob(ns, id).map(evalView), index);
};
