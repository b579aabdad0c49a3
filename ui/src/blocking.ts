/**
 * Live data through Nomad's blocking queries: the first GET answers at once with `X-Nomad-Index`;
 * each next GET sends `?index=<that>&wait=…` and the server holds it until what the answer is read
 * from changes (or the wait runs out, answering the same index). So a page updates within moments
 * of a change without polling, and asks nothing while nothing changes. As Nomad's UI (its watch
 * tasks wait for both the answer and 2 s), an ask starts at most every THROTTLE_MS: under a stream
 * of writes a tab costs the server one read per 2 s, not one per write.
 *
 * A browser keeps about six connections per host, so a page holds at most three of these at once;
 * each stops when its component unmounts or its path changes (AbortController). A failure is shown
 * and retried with a capped backoff, keeping the last good answer on screen.
 *
 * Big lists are watched one page at a time (usePagedList), paged and filtered by the server as
 * Nomad's UI does (`per_page`, `next_token`, `filter`): a tab open on the volumes page of a
 * 50,000-volume cluster asks for, and is woken with, one page (issue 30), never the whole list.
 */
import { useEffect, useState } from "preact/hooks";
import { getJson, qs } from "./api.js";

/** How long the server may hold one query (Nomad's `wait`, capped at 5m by the server). */
const WAIT = "30s";
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 15_000;
/** The least time from one ask to the next (Nomad's UI: `RSVP.all([query, wait(2000)])`). */
export const THROTTLE_MS = 2_000;

export interface Live<T> {
  data: T | undefined;
  /** The last failure, cleared by the next answer. */
  error: unknown;
  /** True until the first answer or failure. */
  loading: boolean;
  /** The list's X-Nomad-NextToken: "" on its last page (and for an answer that is not paged). */
  nextToken?: string;
}

/** `path` (null: nothing to ask yet) kept live; a new path starts over. */
export function useBlocking<T>(path: string | null): Live<T> {
  const [state, setState] = useState<Live<T>>({ data: undefined, error: undefined, loading: path !== null });
  useEffect(() => {
    if (path === null) return;
    const ac = new AbortController();
    setState({ data: undefined, error: undefined, loading: true });
    void follow<T>(path, ac.signal, (next) => setState((prev) => ({ ...prev, ...next, loading: false })));
    return () => ac.abort();
  }, [path]);
  return state;
}

async function follow<T>(
  path: string,
  signal: AbortSignal,
  update: (next: Partial<Live<T>>) => void,
): Promise<void> {
  let index = 0;
  let retry = RETRY_MIN_MS;
  const sep = path.includes("?") ? "&" : "?";
  while (!signal.aborted) {
    try {
      const url = index > 0 ? `${path}${sep}index=${index}&wait=${WAIT}` : path;
      const asked = Date.now();
      const res = await getJson<T>(url, signal);
      retry = RETRY_MIN_MS;
      // The same index is a wait that ran out: nothing changed, nothing to draw.
      if (index === 0 || res.index !== index)
        update({ data: res.data, error: undefined, nextToken: res.nextToken });
      // An index that went backwards (a restarted dev agent) starts over from a plain read.
      index = res.index >= index ? res.index : 0;
      // A route without an index cannot block: read it again after a pause instead.
      if (res.index === 0) await sleep(RETRY_MAX_MS, signal);
      else await sleep(asked + THROTTLE_MS - Date.now(), signal);
    } catch (err) {
      if (signal.aborted) return;
      update({ error: err });
      await sleep(retry, signal);
      retry = Math.min(retry * 2, RETRY_MAX_MS);
    }
  }
}

/** Rows per page of a paged list (Nomad's UI pages its lists by 25 by default; berth's by 50). */
export const PAGE_SIZE = 50;

export interface PagedList<T> {
  live: Live<T[]>;
  /** 1 for the first page. */
  page: number;
  /** Undefined on the last page. */
  next: (() => void) | undefined;
  /** Undefined on the first page. */
  prev: (() => void) | undefined;
  /** The filter expression in force (Nomad's filter syntax, evaluated by the server). */
  filter: string;
  /** Sets the filter and goes back to the first page. */
  setFilter: (f: string) => void;
}

/**
 * `path` (a list route, with its own query) kept live one page at a time: the server pages and
 * filters it (`per_page`, `next_token`, `filter`), so only the page shown is read, sent and watched.
 * The tokens of the pages before the current one are kept to go back; a new path starts over.
 */
export function usePagedList<T>(path: string, perPage = PAGE_SIZE): PagedList<T> {
  const [state, setState] = useState<{ path: string; tokens: string[]; filter: string }>({
    path,
    tokens: [],
    filter: "",
  });
  const cur = state.path === path ? state : { path, tokens: [], filter: "" };
  const token = cur.tokens.at(-1) ?? "";
  const paging = qs({
    per_page: perPage,
    next_token: token === "" ? undefined : token,
    filter: cur.filter === "" ? undefined : cur.filter,
  }).slice(1);
  const live = useBlocking<T[]>(`${path}${path.includes("?") ? "&" : "?"}${paging}`);
  const nextToken = live.nextToken ?? "";
  return {
    live,
    page: cur.tokens.length + 1,
    next: nextToken === "" ? undefined : () => setState({ ...cur, tokens: [...cur.tokens, nextToken] }),
    prev: cur.tokens.length === 0 ? undefined : () => setState({ ...cur, tokens: cur.tokens.slice(0, -1) }),
    filter: cur.filter,
    setFilter: (filter) => setState({ path, tokens: [], filter }),
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });
}
