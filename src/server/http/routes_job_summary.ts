/**
 * `GET /v1/job/:id/summary` (Nomad's JobSummary: structs/job_summary.ts), read from the job, its
 * allocs and evals, and its children (`<id>/…`, an ID range). Blocking queries wake on a write to
 * the job or its allocs.
 */
import { jobSummaryOf } from "../../structs/job_summary.js";
import { jobParam, namespaceOf, type Route } from "../request_ctx.js";
import { watchKeys } from "../state/watch_keys.js";
import { blockingIndex, sendJson } from "./respond.js";

/** Children counted at most: a parent with more reports these (Nomad keeps a running count). */
const MAX_CHILDREN = 10_000;

export const jobSummary: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = jobParam(ctx);
  const index = await blockingIndex(api.store, ctx.query, ["jobs", "allocs", "evals"], ctx.signal, () => [
    watchKeys.job(ns, id),
    watchKeys.allocsOfJob(ns, id),
  ]);
  const job = api.jobs.get(ns, id);
  const children = api.store.jobRange({
    namespace: ns,
    from: "",
    reverse: false,
    prefix: `${id}/`,
    limit: MAX_CHILDREN,
  });
  const summary = jobSummaryOf(job, api.store.allocsByJob(ns, id), api.store.evalsByJob(ns, id), children);
  sendJson(ctx.res, summary, index);
};
