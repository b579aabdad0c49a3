/**
 * Nomad's fuzzy search (nomad/search_endpoint.go, `/v1/search/fuzzy`), the matching itself: pure.
 * - A name matches when it contains the text, case-insensitively; its score is where (earlier is
 *   better). Matches sort by score, then shorter name first (an exact match wins), then by name.
 * - A job yields matches in several contexts, each with its Scope (the IDs of its parents, the
 *   namespace first): `jobs` (the job's name; scope [ns]), `groups` ([ns, job]), `tasks` ([ns, job,
 *   group]), `services` (group and task services), and from the task's driver config `commands`
 *   (exec, raw_exec), `images` (docker), `classes` (java), each scoped [ns, job, group, task].
 * - Other records yield one match: a node by name (scope [node ID]), an alloc by name ([ns, alloc
 *   ID]), a plugin by ID, a namespace by name (no scope).
 * - Limits, as Nomad's defaults (`search { limit_query = 20, limit_results = 100 }`): only the first
 *   LIMIT_QUERY records of a context are looked at, and a match in the last of them while more
 *   records exist marks its context truncated; a context keeps at most LIMIT_RESULTS matches (one
 *   more marks it truncated).
 */

export const FUZZY_LIMIT_QUERY = 20;
export const FUZZY_LIMIT_RESULTS = 100;
/** Nomad's `search { min_term_length }` default. */
export const FUZZY_MIN_TERM_LENGTH = 2;

/** Nomad's FuzzyMatch: Scope is left out when empty (Go's omitempty). */
export interface FuzzyMatch {
  ID: string;
  Scope?: string[];
}

export interface FuzzyHit {
  id: string;
  scope: string[];
  score: number;
}

/** A record's matches by context, in the order found. */
export type FuzzyHits = [context: string, hit: FuzzyHit][];

/** Where lower-cased `text` is in `name`, ignoring case; -1: not there. */
export function fuzzyIndex(name: string, text: string): number {
  return name.toLowerCase().indexOf(text);
}

interface JobLike {
  ID: string;
  Name?: string;
  Namespace: string;
  TaskGroups?: readonly {
    Name: string;
    Services?: readonly { Name?: string }[] | null;
    Tasks?: readonly {
      Name: string;
      Driver?: string;
      Config?: Record<string, unknown> | null;
      Services?: readonly { Name?: string }[] | null;
    }[];
  }[];
}

const CONFIG_FIELD: Record<string, [context: string, field: string]> = {
  docker: ["images", "image"],
  exec: ["commands", "command"],
  raw_exec: ["commands", "command"],
  java: ["classes", "class"],
};

/** A job's matches of lower-cased `text` (see the module comment). */
export function jobHits(job: JobLike, text: string): FuzzyHits {
  const out: FuzzyHits = [];
  const add = (context: string, name: string, ...scope: string[]) => {
    const score = fuzzyIndex(name, text);
    if (score >= 0) out.push([context, { id: name, score, scope: [job.Namespace, ...scope] }]);
  };
  add("jobs", job.Name || job.ID);
  for (const g of job.TaskGroups ?? []) {
    add("groups", g.Name, job.ID);
    for (const s of g.Services ?? []) if (s.Name) add("services", s.Name, job.ID, g.Name);
    for (const t of g.Tasks ?? []) {
      add("tasks", t.Name, job.ID, g.Name);
      for (const s of t.Services ?? []) if (s.Name) add("services", s.Name, job.ID, g.Name, t.Name);
      const field = CONFIG_FIELD[t.Driver ?? ""];
      const value = field ? t.Config?.[field[1]] : undefined;
      if (field && typeof value === "string") add(field[0], value, job.ID, g.Name, t.Name);
    }
  }
  return out;
}

/** One record's match by `name` in `context`. */
export function singleHit(context: string, name: string, scope: string[], text: string): FuzzyHits {
  const score = fuzzyIndex(name, text);
  return score >= 0 ? [[context, { id: name, score, scope }]] : [];
}

/**
 * The matches of `records` (the first LIMIT_QUERY + 1 of a context, in its order: the one past the
 * limit only says more exist) and the contexts truncated, as Nomad's getFuzzyMatches.
 */
export function collectFuzzy<T>(
  records: readonly T[],
  hitsOf: (r: T) => FuzzyHits,
): { matches: Record<string, FuzzyMatch[]>; truncations: Record<string, boolean> } {
  const found = new Map<string, FuzzyHit[]>();
  const truncations: Record<string, boolean> = {};
  const n = Math.min(records.length, FUZZY_LIMIT_QUERY);
  for (let i = 0; i < n; i++) {
    const limited = i === FUZZY_LIMIT_QUERY - 1 && records.length > FUZZY_LIMIT_QUERY;
    for (const [context, hit] of hitsOf(records[i]!)) {
      const list = found.get(context) ?? [];
      found.set(context, list);
      if (list.length >= FUZZY_LIMIT_RESULTS) {
        truncations[context] = true;
        break;
      }
      list.push(hit);
      if (limited) {
        truncations[context] = true;
        break;
      }
    }
  }
  const matches: Record<string, FuzzyMatch[]> = {};
  for (const [context, hits] of found) {
    matches[context] = [...hits]
      .sort(
        (a, b) => a.score - b.score || a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      )
      .map((h) => (h.scope.length > 0 ? { ID: h.id, Scope: h.scope } : { ID: h.id }));
  }
  return { matches, truncations };
}
