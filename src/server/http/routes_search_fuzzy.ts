/**
 * Nomad's fuzzy search (`POST|PUT /v1/search/fuzzy`, command/agent/search_endpoint.go and
 * nomad/search_endpoint.go FuzzySearch): the body `{"Text", "Context", "Namespace"}` answers
 * `{"Matches": {ctx: [{"ID", "Scope"}]}, "Truncations": {ctx: bool}}`. The matching is
 * structs/fuzzy_search.ts (substring, case-insensitive, Nomad's order and limits); `Text` must be at
 * least 2 characters (Nomad's min_term_length).
 * - Fuzzy contexts: jobs (expanding into groups, tasks, services, commands, images, classes),
 *   allocs (by name), nodes (by name), plugins, namespaces. Each searched one is in Truncations
 *   (false unless cut); a context appears in Matches only when something matched, as Nomad's.
 * - evals, deployment and volumes match by ID prefix, as Nomad's fuzzy search does: the prefix is
 *   the request's `?prefix=` (Nomad's QueryOptions.Prefix; none: the first 20 IDs), not the text.
 * Context "all" is every context the token may read; a single context it may not read is 403; "*"
 * as the namespace searches every namespace the token may read (the prefix search's rules,
 * routes_search.ts).
 */
import { validationError } from "../../structs/errors.js";
import {
  collectFuzzy,
  FUZZY_LIMIT_QUERY,
  FUZZY_MIN_TERM_LENGTH,
  jobHits,
  singleHit,
  type FuzzyMatch,
} from "../../structs/fuzzy_search.js";
import { isObject } from "../../structs/json_check.js";
import { permissionDenied } from "../acl/endpoint.js";
import { allowNs } from "../acl/guards.js";
import type { Ctx, HttpEndpoints, Route } from "../request_ctx.js";
import { readJson } from "../wire/http_io.js";
import { sendJson } from "./respond.js";
import { FINDERS, inNs, mayRead, SEARCH_LIMIT, type Context, type Search } from "./routes_search.js";

const FUZZY = ["jobs", "allocs", "nodes", "plugins", "namespaces"] as const;
const BY_PREFIX = ["evals", "deployment", "volumes"] as const;
const ALL: readonly Context[] = [...FUZZY, ...BY_PREFIX];

type Scan = (api: HttpEndpoints, ctx: Ctx, s: Search, text: string) => ReturnType<typeof collectFuzzy>;

/** At most one record past the query limit: it only says more exist. */
const SCANNED = FUZZY_LIMIT_QUERY + 1;

const byId = <T extends { ID: string }>(a: T, b: T) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0);

const SCANS: Record<(typeof FUZZY)[number], Scan> = {
  jobs: (api, ctx, s, text) => {
    const spaces = s.namespace !== undefined ? [s.namespace] : api.store.listNamespaces().map((n) => n.Name);
    const jobs: ReturnType<HttpEndpoints["store"]["jobRange"]> = [];
    for (const ns of spaces.sort()) {
      if (jobs.length >= SCANNED || !allowNs(ctx, ns, "read-job")) continue;
      const q = { namespace: ns, from: "", reverse: false, prefix: "", limit: SCANNED - jobs.length };
      jobs.push(...api.store.jobRange(q));
    }
    return collectFuzzy(jobs, (j) => jobHits(j, text));
  },
  allocs: (api, ctx, s, text) => {
    const allocs = api.store
      .listAllocs(s.namespace)
      .filter((a) => inNs(ctx, s, a.Namespace, "read-job"))
      .sort(byId)
      .slice(0, SCANNED);
    return collectFuzzy(allocs, (a) => singleHit("allocs", a.Name, [a.Namespace, a.ID], text));
  },
  nodes: (api, _ctx, _s, text) => {
    const nodes = api.store.nodeRange({ from: "", reverse: false, prefix: "", limit: SCANNED });
    return collectFuzzy(nodes, (n) => singleHit("nodes", n.Name, [n.ID], text));
  },
  plugins: (api, _ctx, _s, text) => {
    const plugins = api.store.listPlugins().sort(byId).slice(0, SCANNED);
    return collectFuzzy(plugins, (p) => singleHit("plugins", p.ID, [], text));
  },
  namespaces: (api, ctx, _s, text) => {
    const spaces = api.store
      .listNamespaces()
      .filter((n) => allowNs(ctx, n.Name, "read-job", "list-jobs"))
      .sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0))
      .slice(0, SCANNED);
    return collectFuzzy(spaces, (n) => singleHit("namespaces", n.Name, [], text));
  },
};

function parseFuzzy(body: unknown, ctx: Ctx): { context: Context | "all"; text: string; search: Search } {
  if (!isObject(body)) throw validationError("body", "must be a JSON object");
  const { Text, Context: context, Namespace } = body;
  if (typeof Text !== "string") throw validationError("Text", "must be a string");
  if (typeof context !== "string" || (context !== "all" && !ALL.includes(context as Context)))
    throw validationError("Context", `must be one of all, ${ALL.join(", ")}`);
  if (Namespace !== undefined && typeof Namespace !== "string")
    throw validationError("Namespace", "must be a string");
  if (Text.length < FUZZY_MIN_TERM_LENGTH) {
    throw validationError(
      "Text",
      `fuzzy search query must be at least ${FUZZY_MIN_TERM_LENGTH} characters, got ${Text.length}`,
    );
  }
  const ns = Namespace || ctx.query.get("namespace") || "default";
  const prefix = ctx.query.get("prefix") ?? "";
  return {
    context: context as Context | "all",
    text: Text.toLowerCase(),
    search: { prefix, namespace: ns === "*" ? undefined : ns },
  };
}

export const fuzzySearch: Route = async (ctx, api) => {
  const { context, text, search: s } = parseFuzzy(await readJson(ctx.req), ctx);
  if (context !== "all" && !mayRead(ctx, context, s)) throw permissionDenied();
  const contexts = context === "all" ? ALL.filter((c) => mayRead(ctx, c, s)) : [context];
  const matches: Record<string, FuzzyMatch[]> = {};
  const truncations: Record<string, boolean> = {};
  for (const c of contexts) {
    if ((BY_PREFIX as readonly string[]).includes(c)) {
      const found = FINDERS[c](api, ctx, s, SEARCH_LIMIT + 1);
      matches[c] = found.slice(0, SEARCH_LIMIT).map((id) => ({ ID: id }));
      truncations[c] = found.length > SEARCH_LIMIT;
      continue;
    }
    const r = SCANS[c as (typeof FUZZY)[number]](api, ctx, s, text);
    truncations[c] = false;
    Object.assign(matches, r.matches);
    Object.assign(truncations, r.truncations);
  }
  sendJson(ctx.res, { Matches: matches, Truncations: truncations }, api.store.index());
};
