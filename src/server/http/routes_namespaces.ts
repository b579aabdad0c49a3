/**
 * Nomad's namespace routes (command/agent/namespace_endpoint.go):
 *   GET         /v1/namespaces?prefix=          → [Namespace...] by name (blocking on the table)
 *   GET         /v1/namespace/:name             → Namespace, 404 "Namespace not found" (blocking)
 *   PUT|POST    /v1/namespace/:name, /v1/namespace   body: Namespace → empty 200, X-Nomad-Index
 *   DELETE      /v1/namespace/:name             → empty 200, X-Nomad-Index
 * The name in the path is a name, not a namespace query: `?namespace=` plays no part here.
 * Reads answer the namespaces table's index, as berth's other reads answer their table's: a
 * blocking query wakes on any namespace write, so an index older than the table's (Nomad answers
 * the record's ModifyIndex) would make a watching client spin.
 */
import type { ServerResponse } from "node:http";
import { BerthError } from "../../structs/errors.js";
import { checkId } from "../../structs/ids.js";
import { readJson } from "../wire/http_io.js";
import { blockingIndex, sendJson } from "./respond.js";
import { namespaceOf, type Ctx, type Route } from "../request_ctx.js";
import { aclOf } from "../acl/guards.js";

/** Nomad's text, as is. */
function missing(): BerthError {
  return new BerthError("ERR_VALIDATION", "Missing Namespace Name", { field: "name" });
}

/** The path's name: Nomad answers "Missing Namespace Name" for an empty one. */
function nameOf(ctx: Ctx): string {
  const raw = ctx.params.name;
  if (raw === undefined || raw === "") throw missing();
  return checkId("name", raw);
}

/** Nomad's answer to a write: no body, the write's index in X-Nomad-Index. */
function sendWritten(res: ServerResponse, index: number): void {
  res.writeHead(200, { "X-Nomad-Index": String(index), "Content-Length": "0" });
  res.end();
}

export const listNamespaces: Route = async (ctx, api) => {
  const index = await blockingIndex(api.store, ctx.query, ["namespaces"], ctx.signal);
  // With ACLs on, only the namespaces the caller may use (Nomad's ListNamespaces filter).
  const acl = aclOf(ctx);
  const all = api.namespaces.list(ctx.query.get("prefix") ?? "");
  sendJson(ctx.res, acl ? all.filter((n) => acl.allowNamespace(n.Name)) : all, index);
};

export const getNamespace: Route = async (ctx, api) => {
  const name = nameOf(ctx);
  const index = await blockingIndex(api.store, ctx.query, ["namespaces"], ctx.signal);
  const ns = api.namespaces.get(name);
  if (!ns) throw new BerthError("ERR_NOT_FOUND", "Namespace not found");
  sendJson(ctx.res, ns, index);
};

export const putNamespaceAt: Route = async (ctx, api) => {
  const name = nameOf(ctx);
  sendWritten(ctx.res, await api.namespaces.upsert(await readJson(ctx.req), name));
};

export const putNamespace: Route = async (ctx, api) => {
  sendWritten(ctx.res, await api.namespaces.upsert(await readJson(ctx.req)));
};

export const deleteNamespace: Route = async (ctx, api) => {
  sendWritten(ctx.res, await api.namespaces.delete(nameOf(ctx)));
};

/** `GET|DELETE /v1/namespace` (no name): Nomad's 400. */
export const missingName: Route = () => Promise.reject(missing());

/**
 * A job body's namespace as Nomad's HTTP layer decides it (namespaceForJob): the request's
 * `?namespace=` (the CLI's -namespace / NOMAD_NAMESPACE) first, then the job's own, then
 * "default"; Nomad's Go client sends "Namespace": "" for a job that names none.
 */
export function inRequestNamespace(ctx: Ctx, job: Record<string, unknown>): Record<string, unknown> {
  if (ctx.query.get("namespace")) return { ...job, Namespace: namespaceOf(ctx) };
  const own = job.Namespace;
  return own === undefined || own === null || own === "" ? { ...job, Namespace: "default" } : job;
}
