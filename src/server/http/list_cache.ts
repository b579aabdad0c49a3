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
 *
 * Off the hot path (issue 30): a new entry is built after a turn of the event loop (so the write
 * that woke the waiters answers first, and never waits inside its transaction for a reader), its
 * JSON encoded in slices of ENCODE_SLICE items with a turn of the loop between them, and gzipped
 * on libuv's thread pool (zlib.gzip), not on the loop. Every request for the same key at the same
 * index, those that come while the entry is still being built included, awaits that one build:
 * a write that wakes a thousand waiters builds and compresses their answer once.
 */
import type { ServerResponse } from "node:http";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { StateStore } from "../state/store.js";
import { leaderHeaders } from "./leader_headers.js";

/** Enough for every list route × a few namespaces; the oldest entry goes first. */
const MAX_ENTRIES = 64;

interface Built {
  body: Buffer;
  /** Nomad's X-Nomad-NextToken of a paged list; "" when the answer is the last page. */
  nextToken: string;
}

interface Entry {
  index: number;
  /** The answer, once built (shared by every request that comes meanwhile). */
  built: Promise<Built>;
  /** The body gzipped, made on the first request that accepts it. */
  gzipped?: Promise<Buffer>;
}

/** Items encoded per turn of the event loop: a few milliseconds of JSON.stringify at most. */
export const ENCODE_SLICE = 500;

const gzipAsync = promisify(gzip);

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

/**
 * JSON.stringify(items) for an array, encoded ENCODE_SLICE items at a time with a turn of the
 * event loop between slices (the same bytes as one JSON.stringify).
 */
export async function encodeJsonSliced(items: unknown): Promise<Buffer> {
  if (!Array.isArray(items) || items.length <= ENCODE_SLICE)
    return Buffer.from(JSON.stringify(items) ?? "null");
  const parts: string[] = [];
  for (let i = 0; i < items.length; i += ENCODE_SLICE) {
    if (i > 0) await yieldToLoop();
    parts.push(JSON.stringify(items.slice(i, i + ENCODE_SLICE)).slice(1, -1));
  }
  return Buffer.from(`[${parts.join(",")}]`);
}

async function build(read: () => { items: unknown; nextToken: string }): Promise<Built> {
  // After the write that woke this reader has gone on (its answer, its next steps).
  await yieldToLoop();
  const page = read();
  return { body: await encodeJsonSliced(page.items), nextToken: page.nextToken };
}

/** Sends the JSON of `read()` with `X-Nomad-Index: index`, reusing the bytes built at the same index. */
export function sendCachedJson(
  res: ServerResponse,
  store: StateStore,
  key: string,
  index: number,
  read: () => unknown,
): Promise<void> {
  return sendCachedPage(res, store, key, index, () => ({ items: read(), nextToken: "" }));
}

/**
 * As sendCachedJson for a paged list: `read()` answers the page and its next token, sent in
 * `X-Nomad-NextToken` when there is a next page. `key` must then name every list option too.
 * Rejects with what `read` throws (a bad filter: a 400), which is not kept.
 */
export async function sendCachedPage(
  res: ServerResponse,
  store: StateStore,
  key: string,
  index: number,
  read: () => { items: unknown; nextToken: string },
): Promise<void> {
  let cache = caches.get(store);
  if (!cache) {
    cache = new Map();
    caches.set(store, cache);
  }
  let entry = cache.get(key);
  // blockingIndex answers at least 1, also for a table never written (index 0): a body read then
  // would look as fresh as one read after the table's first write, at index 1. Never reuse index 1.
  if (!entry || entry.index !== index || index <= 1) {
    const fresh: Entry = { index, built: build(read) };
    const own = cache;
    // A failed build (a filter that cannot be evaluated) is answered to its callers, never kept.
    fresh.built.catch(() => {
      if (own.get(key) === fresh) own.delete(key);
    });
    entry = fresh;
    cache.delete(key);
    cache.set(key, entry);
    if (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  }
  const built = await entry.built;
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "X-Nomad-Index": String(index),
    ...leaderHeaders(res),
  };
  if (built.nextToken !== "") headers["X-Nomad-NextToken"] = built.nextToken;
  let body = built.body;
  if (body.length >= MIN_GZIP_BYTES) {
    headers.Vary = "Accept-Encoding";
    if (acceptsGzip(res.req?.headers["accept-encoding"])) {
      // Level 1: a list compresses ~10× even so, and the loop is held for the least time.
      entry.gzipped ??= gzipAsync(body, { level: 1 });
      body = await entry.gzipped;
      headers["Content-Encoding"] = "gzip";
    }
  }
  // The caller may have gone while the answer was built.
  if (res.destroyed || res.headersSent) return;
  res.writeHead(200, headers);
  res.end(body);
}
