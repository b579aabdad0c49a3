/**
 * Nomad's list options (api.QueryOptions) for the list routes: `prefix`, `filter`, `per_page`,
 * `next_token` and `reverse`, applied as Nomad's state paginator does (nomad/state/paginator):
 *
 *   1. `prefix` keeps the items whose ID starts with it;
 *   2. items are walked in the list's token order (ascending; descending with `reverse=true`);
 *   3. with `next_token`, items before the token (after it, reversed) are skipped;
 *   4. `filter` (filter/) is evaluated on each item's answer shape (its stub);
 *   5. `per_page` > 0 cuts the page; the token of the first item left out is the next token, sent
 *      in `X-Nomad-NextToken` — absent on the last page.
 *
 * Tokens per list, as Nomad's: jobs and volumes "Namespace.ID"; nodes and plugins "ID"; allocs and
 * evals "CreateIndex.ID" (ordered by CreateIndex, then ID), or "ID" when `prefix` is set (Nomad
 * switches to its ID index then). A token needs no lookup: it is compared with each item's own.
 *
 * Errors are 400s: a filter that does not parse or cannot be evaluated against the items starts
 * with Nomad's text "failed to read filter expression:"; a bad `per_page` or `reverse` names it.
 */
import { BerthError, validationError } from "../../structs/errors.js";
import { evaluate, FilterEvalError, FilterSyntaxError, parseFilter, type Expr } from "./filter/index.js";
import { boolParam } from "./respond.js";

export interface ListOptions {
  prefix: string;
  filter: Expr | null;
  perPage: number;
  nextToken: string;
  reverse: boolean;
}

export type TokenKind = "id" | "namespace-id" | "index-id";

/** The list options of a request; throws a 400 naming the bad parameter. */
export function listOptions(query: URLSearchParams): ListOptions {
  const rawFilter = query.get("filter") ?? "";
  let filter: Expr | null = null;
  if (rawFilter !== "") {
    try {
      filter = parseFilter(rawFilter);
    } catch (err) {
      if (!(err instanceof FilterSyntaxError)) throw err;
      throw new BerthError("ERR_VALIDATION", `failed to read filter expression: ${err.message}`, {
        field: "filter",
      });
    }
  }
  const rawPer = query.get("per_page") ?? "";
  // Nomad parses per_page as an int32: decimal digits only.
  const perPage = rawPer === "" ? 0 : /^\d{1,10}$/.test(rawPer) ? Number(rawPer) : NaN;
  if (!Number.isInteger(perPage) || perPage > 2 ** 31 - 1)
    throw validationError(
      "per_page",
      `must be a non-negative decimal integer below 2^31, got ${JSON.stringify(rawPer)}`,
    );
  return {
    prefix: query.get("prefix") ?? "",
    filter,
    perPage,
    nextToken: query.get("next_token") ?? "",
    reverse: boolParam(query, "reverse"),
  };
}

/** A stable cache key for the options (list_cache.ts keys answers by everything they depend on). */
export function optionsKey(o: ListOptions, query: URLSearchParams): string {
  return [o.prefix, query.get("filter") ?? "", o.perPage, o.nextToken, o.reverse].join("\u0000");
}

export interface Tokened {
  ID: string;
  Namespace?: string;
  CreateIndex: number;
}

function tokenOf(kind: TokenKind, t: Tokened): string {
  if (kind === "namespace-id") return `${t.Namespace ?? ""}.${t.ID}`;
  if (kind === "index-id") return `${t.CreateIndex}.${t.ID}`;
  return t.ID;
}

function cmp<T extends string | number>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Nomad's tokenizer comparison of an item with a token (CreateIndexAndIDTokenizer's rules for index-id). */
function compareToken(kind: TokenKind, t: Tokened, target: string): number {
  const own = tokenOf(kind, t);
  if (kind !== "index-id") return cmp(own, target);
  const dot = target.indexOf(".");
  const idx = dot > 0 ? Number(target.slice(0, dot)) : NaN;
  if (dot < 0 || !/^\d+$/.test(target.slice(0, dot)) || !Number.isSafeInteger(idx)) return cmp(own, target);
  return cmp(t.CreateIndex, idx) || cmp(t.ID, target.slice(dot + 1));
}

function compareItems(kind: TokenKind, a: Tokened, b: Tokened): number {
  if (kind === "index-id") return cmp(a.CreateIndex, b.CreateIndex) || cmp(a.ID, b.ID);
  return cmp(tokenOf(kind, a), tokenOf(kind, b));
}

/**
 * One page of `records` as `stub`s under the options. `kind` is the list's token kind without a
 * prefix (allocs and evals switch to "id" when a prefix is given, as Nomad's do).
 */
export function pageOf<R extends Tokened, S>(
  records: readonly R[],
  o: ListOptions,
  kind: TokenKind,
  stub: (r: R) => S,
): { items: S[]; nextToken: string } {
  const k: TokenKind = o.prefix !== "" && kind === "index-id" ? "id" : kind;
  const sorted = records.filter((r) => r.ID.startsWith(o.prefix)).sort((a, b) => compareItems(k, a, b));
  if (o.reverse) sorted.reverse();
  const items: S[] = [];
  for (const r of sorted) {
    if (o.nextToken !== "") {
      const c = compareToken(k, r, o.nextToken);
      if (o.reverse ? c > 0 : c < 0) continue;
    }
    const s = stub(r);
    if (o.filter && !filterMatches(o.filter, s)) continue;
    if (o.perPage > 0 && items.length === o.perPage) return { items, nextToken: tokenOf(k, r) };
    items.push(s);
  }
  return { items, nextToken: "" };
}

/** Whether the item matches the filter; an evaluation error is the 400 the module comment names. */
export function filterMatches(e: Expr, item: unknown): boolean {
  try {
    return evaluate(e, item);
  } catch (err) {
    if (!(err instanceof FilterEvalError)) throw err;
    throw new BerthError("ERR_VALIDATION", `failed to read filter expression: ${err.message}`, {
      field: "filter",
    });
  }
}
