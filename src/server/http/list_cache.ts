/**
 * Serialised list answers, reused while the tables they were read from have not changed.
 *
 * Why: a list answer of a busy cluster (GET /v1/allocations with 1,000 allocs) costs ~10 ms of
 * synchronous work on the server's one event loop — parsing every stored record, mapping it to its
 * stub, serialising the whole list — and a write waits behind every such read queued before it.
 * With a handful of clients polling lists, 50 job submits took 23× as long as alone (bench/read_load.ts).
 * Most of those reads answer the same bytes as the read before: nothing changed in between. So
 * the body is kept with the index it was read at and sent again until the table's index moves;
 * then the next read rebuilds it once for everyone.
 *
 * Contract: `index` must be the highest write index of every table the body is read from (what
 * `blockingIndex` returns for those tables) and `key` must name everything else the body depends
 * on (route, namespace, filters). Indexes only grow, and every write to a table raises its index,
 * so an equal index means an identical body. One cache per store: two servers in one process, or a
 * store reopened, never share entries.
 *
 * Compression (issue 13): a caller that accepts gzip (Nomad's Go API client always sends
 * `Accept-Encoding: gzip`; Nomad's agent compresses every answer, gorilla's CompressHandler) gets
 * the body gzipped, compressed once per entry and shared like the body. When a write wakes a
 * thousand callers blocked on a 10,000-volume list, the server then sends a thousand copies of a
 * few hundred KiB instead of a thousand copies of several MiB: the build was already shared, the
 * bytes on the wire were the stall.
 */
import type { ServerResponse } from "node:http";
import { gzipSync } from "node:zlib";
import type { StateStore } from "../state/store.js";
import { leaderHeaders } from "./leader_headers.js";

/** Enough for every list route × a few namespaces; the oldest entry goes first. */
const MAX_ENTRIES = 64;

interface Entry {
  index: number;
  body: Buffer;
  /** Nomad's X-Nomad-NextToken of a paged list; "" when the answer is the last page. */
  nextToken: string;
  /** `body` gzipped, made on the first request that accepts it. */
  gzipped?: Buffer;
}

/** Smaller answers go as they are: compressing them saves less than it costs. */
const MIN_GZIP_BYTES = 1024;

/** Whether the request's Accept-Encoding takes gzip (a `q=0` refuses it). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  const raw = Array.isArray(header) ? header.join(",") : (header ?? "");
  return raw.split(",").some((part) => {
    const [coding = "", ...params] = part.trim().toLowerCase().split(";");
    if (coding.trim() !== "gzip" && coding.trim() !== "*") return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

const caches = new WeakMap<StateStore, Map<string, Entry>>();

/** Sends the JSON of `read()` with `X-Nomad-Index: index`, reusing the bytes built at the same index. */
export function sendCachedJson(
  res: ServerResponse,
  store: StateStore,
  key: string,
  index: number,
  read: () => unknown,
): void {
  sendCachedPage(res, store, key, index, () => ({ items: read(), nextToken: "" }));
}

/**
 * As sendCachedJson for a paged list: `read()` answers the page and its next token, sent in
 * `X-Nomad-NextToken` when there is a next page. `key` must then name every list option too.
 */
export function sendCachedPage(
  res: ServerResponse,
  store: StateStore,
  key: string,
  index: number,
  read: () => { items: unknown; nextToken: string },
): void {
  let cache = caches.get(store);
  if (!cache) {
    cache = new Map();
    caches.set(store, cache);
  }
  let entry = cache.get(key);
  // blockingIndex answers at least 1, also for a table never written (index 0): a body read then
  // would look as fresh as one read after the table's first write, at index 1. Never reuse index 1.
  if (!entry || entry.index !== index || index <= 1) {
    const page = read();
    entry = { index, body: Buffer.from(JSON.stringify(page.items)), nextToken: page.nextToken };
    cache.delete(key);
    cache.set(key, entry);
    if (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  }
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "X-Nomad-Index": String(index),
    ...leaderHeaders(res),
  };
  if (entry.nextToken !== "") headers["X-Nomad-NextToken"] = entry.nextToken;
  let body = entry.body;
  if (body.length >= MIN_GZIP_BYTES) {
    headers.Vary = "Accept-Encoding";
    if (acceptsGzip(res.req?.headers["accept-encoding"])) {
      // Level 1: a list compresses ~10× even so, and the loop is held for the least time.
      entry.gzipped ??= gzipSync(body, { level: 1 });
      body = entry.gzipped;
      headers["Content-Encoding"] = "gzip";
    }
  }
  res.writeHead(200, headers);
  res.end(body);
}
