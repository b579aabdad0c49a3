/**
 * /v1/deployments, /v1/deployment/:id, /v1/deployment/allocations/:id, the deployment writes
 * (promote, fail, allocation-health), /v1/job/:id/deployments, /v1/job/:id/deployment (the latest,
 * null when none) and /v1/job/:id/versions (Nomad's JobVersionsResponse).
 */
import { redactAlloc, redactJob } from "../../structs/redact.js";
import { validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import { readJson } from "../wire/http_io.js";
import { blockingIndex, boolParam, sendJson } from "./respond.js";
import { allocStub } from "../views/stubs.js";
import { jobParam, namespaceOf, param, type Route } from "../request_ctx.js";
import { nsFilter } from "../acl/guards.js";
import { versionDiffs } from "../scheduler/job_plan.js";

export const listDeployments: Route = async (ctx, api) => {
  const index = await blockingIndex(api.store, ctx.query, ["deployments"], ctx.signal);
  const prefix = ctx.query.get("prefix") ?? "";
  const visible = nsFilter(ctx, api, "read-job");
  const list = api.deployments
    .list(namespaceOf(ctx, true))
    .filter((d) => d.ID.startsWith(prefix) && visible.keep(d.Namespace));
  sendJson(ctx.res, list, index);
};

export const getDeployment: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["deployments"], ctx.signal);
  sendJson(ctx.res, api.deployments.get(id), index);
};

export const deploymentAllocations: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["allocs", "deployments"], ctx.signal);
  sendJson(ctx.res, api.deployments.allocations(id).map(redactAlloc).map(allocStub), index);
};

/** The body, an object (an empty body or `null` reads as `{}`), with its DeploymentID matching the URL when set. */
async function body(ctx: Parameters<Route>[0], id: string): Promise<Record<string, unknown>> {
  const b = await readJson(ctx.req);
  const obj = b === null ? {} : b;
  if (!isObject(obj)) throw validationError("body", "must be a JSON object");
  if (obj.DeploymentID !== undefined && obj.DeploymentID !== "" && obj.DeploymentID !== id)
    throw validationError("DeploymentID", "does not match the deployment in the URL");
  return obj;
}

function stringList(field: string, v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
    throw validationError(field, "must be a list of strings");
  return v as string[];
}

export const promoteDeployment: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const b = await body(ctx, id);
  if (b.All !== undefined && typeof b.All !== "boolean") throw validationError("All", "must be a boolean");
  sendJson(ctx.res, await api.deployments.promote(id, b.All === true, stringList("Groups", b.Groups)));
};

export const failDeployment: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  await body(ctx, id);
  sendJson(ctx.res, await api.deployments.fail(id));
};

/** Nomad's `PUT /v1/deployment/pause/:id` with `{"Pause": bool}`: pauses or resumes the deployment. */
export const pauseDeployment: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const b = await body(ctx, id);
  if (typeof b.Pause !== "boolean") throw validationError("Pause", "must be a boolean");
  sendJson(ctx.res, await api.deployments.pause(id, b.Pause));
};

export const deploymentAllocHealth: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const b = await body(ctx, id);
  const healthy = stringList("HealthyAllocationIDs", b.HealthyAllocationIDs);
  const unhealthy = stringList("UnhealthyAllocationIDs", b.UnhealthyAllocationIDs);
  sendJson(ctx.res, await api.deployments.setAllocHealth(id, healthy, unhealthy));
};

export const jobDeployments: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = param(ctx, "id");
  const index = await blockingIndex(api.store, ctx.query, ["deployments"], ctx.signal);
  const job = api.jobs.get(ns, id);
  // Deployments of a purged job's earlier incarnation are not this job's (Nomad's JobCreateIndex).
  const all = boolParam(ctx.query, "all");
  sendJson(
    ctx.res,
    api.deployments.byJob(ns, id).filter((d) => all || d.JobCreateIndex === job.CreateIndex),
    index,
  );
};

export const jobLatestDeployment: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = jobParam(ctx);
  const index = await blockingIndex(api.store, ctx.query, ["deployments"], ctx.signal);
  const job = api.jobs.get(ns, id);
  const latest = api.deployments.byJob(ns, id).find((d) => d.JobCreateIndex === job.CreateIndex) ?? null;
  sendJson(ctx.res, latest, index);
};

export const jobVersions: Route = async (ctx, api) => {
  const ns = namespaceOf(ctx) ?? "default";
  const id = jobParam(ctx);
  const index = await blockingIndex(api.store, ctx.query, ["versions"], ctx.signal);
  api.jobs.get(ns, id);
  const kept = api.store.jobVersions(ns, id);
  const versions = kept.map(redactJob);
  // `?diffs=true` (job history -p): each version's diff against the one before it, newest first.
  const diffs = boolParam(ctx.query, "diffs") ? versionDiffs(kept.map(redactJob)) : null;
  sendJson(ctx.res, { Versions: versions, Diffs: diffs, Index: index }, index);
};
