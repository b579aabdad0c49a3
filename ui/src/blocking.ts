/**
 * Live data through Nomad's blocking queries: the first GET answers at once with `X-Nomad-Index`;
 * each next GET sends `?index=<that>&wait=…` and the server holds it until what the answer is read
 * from changes (or the wait runs out, answering the same index). So a page updates within moments
 * of a change without polling, and asks nothing while nothing changes.
 *
 * A browser keeps about six connections per host, so a page holds at most three of these at once;
 * each stops when its component unmounts or its path changes (AbortController). A failure is shown
 * and retried with a capped backoff, keeping the last good answer on screen.
 */
import { useEffect, useState } from "preact/hooks";
import { getJson } from "./api.js";

/** How long the server may hold one query (Nomad's `wait`, capped at 5m by the server). */
const WAIT = "30s";
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 15_000;

export interface Live<T> {
  data: T | undefined;
  /** The last failure, cleared by the next answer. */
  error: unknown;
  /** True until the first answer or failure. */
  loading: boolean;
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
      const res = await getJson<T>(url, signal);
      retry = RETRY_MIN_MS;
      // The same index is a wait that ran out: nothing changed, nothing to draw.
      if (index === 0 || res.index !== index) update({ data: res.data, error: undefined });
      // An index that went backwards (a restarted dev agent) starts over from a plain read.
      index = res.index >= index ? res.index : 0;
      // A route without an index cannot block: read it again after a pause instead.
      if (res.index === 0) await sleep(RETRY_MAX_MS, signal);
    } catch (err) {
      if (signal.aborted) return;
      update({ error: err });
      await sleep(retry, signal);
      retry = Math.min(retry * 2, RETRY_MAX_MS);
    }
  }
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
