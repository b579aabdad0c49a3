/**
 * Nomad's prefix search (`POST|PUT /v1/search`, command/agent/search_endpoint.go): the body
 * `{"Prefix", "Context", "Namespace"}` answers `{"Matches": {ctx: [IDs]}, "Truncations": {ctx:
 * bool}}`, at most SEARCH_LIMIT IDs per context (Nomad's truncate limit), in ID order. Contexts:
 * jobs, allocs, evals, deployment, nodes, plugins, volumes, namespaces, or "all" — every context the
 * caller's token may read (a context it may not read is left out of "all" and refused when named).
 * "*" as the namespace searches every namespace the token may read.
 *
 * Jobs, nodes and volumes are read as ID ranges (indexed); allocs, evals and deployments as the
 * namespace's list filtered by prefix, as their list routes' `?prefix=` are.
 */
import { validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import { permissionDenied } from "../acl/endpoint.js";
import { aclOf, allowNs, CSI_LIST_OPS } from "../acl/guards.js";
import type { Ctx, HttpEndpoints, Route } from "../request_ctx.js";
import { readJson } from "../wire/http_io.js";
import { sendJson } from "./respond.js";

export const SEARCH_LIMIT = 20;

const CONTEXTS = [
  "jobs",
  "allocs",
  "evals",
  "deployment",
  "nodes",
  "plugins",
  "volumes",
  "namespaces",
] as const;
export type Context = (typeof CONTEXTS)[number];

export interface Search {
  prefix: string;
  /** undefined: every namespace (as "*"). */
  namespace: string | undefined;
}

/** The IDs of one context matching the search, at most limit (callers ask one more to see a cut). */
type Finder = (api: HttpEndpoints, ctx: Ctx, s: Search, limit: number) => string[];

export const inNs = (ctx: Ctx, s: Search, ns: string, ...ops: string[]) =>
  (s.namespace === undefined || s.namespace === ns) && allowNs(ctx, ns, ...ops);

export const FINDERS: Record<Context, Finder> = {
  jobs: (api, ctx, s, limit) => ranged(api, ctx, s, limit, "read-job", (q) => api.store.jobRange(q)),
  volumes: (api, ctx, s, limit) => ranged(api, ctx, s, limit, CSI_LIST_OPS, (q) => api.store.volumeRange(q)),
  nodes: (api, _ctx, s, limit) =>
    api.store.nodeRange({ from: "", reverse: false, prefix: s.prefix, limit }).map((n) => n.ID),
  allocs: (api, ctx, s, limit) =>
    listed(api.store.listAllocs(s.namespace), ctx, s, limit, (a) => [a.ID, a.Namespace]),
  evals: (api, ctx, s, limit) =>
    listed(api.store.listEvals(s.namespace), ctx, s, limit, (e) => [e.ID, e.Namespace]),
  deployment: (api, ctx, s, limit) =>
    listed(api.store.listDeployments(s.namespace), ctx, s, limit, (d) => [d.ID, d.Namespace]),
  plugins: (api, _ctx, s, limit) =>
    api.store
      .listPlugins()
      .map((p) => p.ID)
      .filter((id) => id.startsWith(s.prefix))
      .sort()
      .slice(0, limit),
  namespaces: (api, ctx, s, limit) =>
    api.store
      .listNamespaces()
      .map((n) => n.Name)
      .filter((n) => n.startsWith(s.prefix) && allowNs(ctx, n, "read-job", "list-jobs"))
      .sort()
      .slice(0, limit),
};

/** Whether the caller may read a context at all (a namespaced one: in the searched namespace). */
export function mayRead(ctx: Ctx, context: Context, s: Search): boolean {
  const acl = aclOf(ctx);
  if (acl === undefined) return true;
  if (context === "nodes") return acl.allowNodeRead();
  if (context === "plugins") return acl.allowPluginList();
  if (context === "namespaces") return true;
  // Namespaced contexts: filtered per record; refused only when a single namespace is not readable.
  const ops = context === "volumes" ? CSI_LIST_OPS : ["read-job"];
  return s.namespace === undefined || acl.allowNamespaceAnyOf(s.namespace, ...ops);
}

function ranged(
  api: HttpEndpoints,
  ctx: Ctx,
  s: Search,
  limit: number,
  ops: string | string[],
  range: (q: { namespace: string; from: string; reverse: boolean; prefix: string; limit: number }) => {
    ID: string;
  }[],
): string[] {
  const spaces = s.namespace !== undefined ? [s.namespace] : api.store.listNamespaces().map((n) => n.Name);
  const out: string[] = [];
  for (const ns of spaces) {
    if (!allowNs(ctx, ns, ...(typeof ops === "string" ? [ops] : ops))) continue;
    out.push(...range({ namespace: ns, from: "", reverse: false, prefix: s.prefix, limit }).map((r) => r.ID));
  }
  return [...new Set(out)].sort().slice(0, limit);
}

function listed<T>(
  records: readonly T[],
  ctx: Ctx,
  s: Search,
  limit: number,
  idOf: (r: T) => [string, string],
): string[] {
  const out: string[] = [];
  for (const r of records) {
    const [id, ns] = idOf(r);
    if (id.startsWith(s.prefix) && inNs(ctx, s, ns, "read-job")) out.push(id);
  }
  return out.sort().slice(0, limit);
}

function parseSearch(body: unknown, ctx: Ctx): { context: Context | "all"; search: Search } {
  if (!isObject(body)) throw validationError("body", "must be a JSON object");
  const { Prefix, Context: context, Namespace } = body;
  if (typeof Prefix !== "string") throw validationError("Prefix", "must be a string");
  if (typeof context !== "string" || (context !== "all" && !CONTEXTS.includes(context as Context)))
    throw validationError("Context", `must be one of all, ${CONTEXTS.join(", ")}`);
  if (Namespace !== undefined && typeof Namespace !== "string")
    throw validationError("Namespace", "must be a string");
  const ns = Namespace || ctx.query.get("namespace") || "default";
  return {
    context: context as Context | "all",
    search: { prefix: Prefix, namespace: ns === "*" ? undefined : ns },
  };
}

export const search: Route = async (ctx, api) => {
  const { context, search: s } = parseSearch(await readJson(ctx.req), ctx);
  if (context !== "all" && !mayRead(ctx, context, s)) throw permissionDenied();
  const contexts = context === "all" ? CONTEXTS.filter((c) => mayRead(ctx, c, s)) : [context];
  const matches: Record<string, string[]> = {};
  const truncations: Record<string, boolean> = {};
  for (const c of contexts) {
    const found = FINDERS[c](api, ctx, s, SEARCH_LIMIT + 1);
    matches[c] = found.slice(0, SEARCH_LIMIT);
    truncations[c] = found.length > SEARCH_LIMIT;
  }
  sendJson(ctx.res, { Matches: matches, Truncations: truncations }, api.store.index());
};
