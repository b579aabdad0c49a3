/**
 * HTTP API plumbing shared by the route files: JSON answers with `X-Nomad-Index` and the leader
 * headers, Nomad's blocking queries (`?index=N&wait=5s`) and query parameters. Errors and request
 * bodies go through ../wire/http_io.ts, which the server-to-server calls share.
 */
import type { ServerResponse } from "node:http";
import { BerthError, validationError } from "../../structs/errors.js";
import { leaderHeaders } from "./leader_headers.js";
import type { StateStore, Table } from "../state/store.js";
import type { WatchKey } from "../state/watch_keys.js";

export function sendJson(res: ServerResponse, body: unknown, index?: number): void {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (index !== undefined) {
    headers["X-Nomad-Index"] = String(index);
    Object.assign(headers, leaderHeaders(res));
  }
  res.writeHead(200, headers);
  res.end(JSON.stringify(body));
}

/** Parses Nomad's duration strings: "5s", "100ms", "2m", "1h" (a bare number is seconds). */
export function parseDuration(field: string, s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s.trim());
  if (!m) throw validationError(field, `${JSON.stringify(s)} is not a duration (like 5s, 100ms, 2m)`);
  const n = Number(m[1]);
  const unit = m[2] ?? "s";
  const mult = unit === "ms" ? 1 : unit === "s" ? 1000 : unit === "m" ? 60_000 : 3_600_000;
  return Math.round(n * mult);
}

/** Nomad's MaxBlockingRPCQueryTime and DefaultBlockingRPCQueryTime: 5 minutes both. */
const MAX_WAIT_MS = 5 * 60_000;
/** Nomad adds up to wait/16 of random jitter (structs.JitterFraction) so waiters do not wake together. */
const JITTER_FRACTION = 16;

/**
 * The time a blocking query waits, as Nomad's QueryOptions.TimeToBlock: `wait` capped at 5m, and a
 * missing or zero `wait` is the default 5m; plus Nomad's jitter of up to a sixteenth of it.
 * `random` is injectable for tests.
 */
export function blockingWaitMs(rawWait: string | null, random: () => number = Math.random): number {
  let asked = rawWait ? parseDuration("wait", rawWait) : 0;
  // A positive wait below a millisecond ("0.4ms") stays positive: only 0 means "the default".
  if (asked === 0 && rawWait && /[1-9]/.test(rawWait)) asked = 1;
  const wait = asked <= 0 || asked > MAX_WAIT_MS ? MAX_WAIT_MS : asked;
  return wait + Math.floor(random() * (wait / JITTER_FRACTION));
}

/**
 * Nomad's blocking query: with `?index=N`, waits until one of `tables` moves past N (or the wait of
 * blockingWaitMs runs out). Returns the index to send in X-Nomad-Index: the highest index of the
 * tables the answer is read from. A route that reads single objects passes `keys`, the watch keys
 * of everything its answer is read from (asked only when the query blocks): it is then woken only
 * when one of those objects is written (StateStore.waitFor), not by every write to its tables.
 */
export async function blockingIndex(
  store: StateStore,
  query: URLSearchParams,
  tables: readonly Table[],
  signal: AbortSignal,
  keys?: () => readonly WatchKey[],
): Promise<number> {
  const rawIndex = query.get("index");
  if (rawIndex !== null && rawIndex !== "") {
    // Decimal digits only, as Nomad's ParseUint(index, 10, 64): Number() would also take "0x10",
    // "1e3" or " 5" and turn a typo into a 5-minute blocking query.
    const min = /^\d{1,15}$/.test(rawIndex) ? Number(rawIndex) : NaN;
    if (!Number.isSafeInteger(min)) throw validationError("index", "must be a non-negative decimal integer");
    await store.waitFor(tables, min, signal, blockingWaitMs(query.get("wait")), keys?.());
  }
  return Math.max(1, ...tables.map((t) => store.tableIndex(t)));
}

export function boolParam(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  if (v === null || v === "" || v === "false" || v === "0") return false;
  if (v === "true" || v === "1") return true;
  throw validationError(name, `must be true or false, got ${JSON.stringify(v)}`);
}

/** `X-Nomad-CSI-Secrets: k=v,k2=v2` → a map; values never echo back in errors. */
export function parseSecretsHeader(header: string | string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const raw = Array.isArray(header) ? header.join(",") : (header ?? "");
  for (const part of raw.split(",")) {
    if (part.trim() === "") continue;
    const eq = part.indexOf("=");
    if (eq <= 0)
      throw new BerthError("ERR_VALIDATION", "X-Nomad-CSI-Secrets: each entry must be key=value", {
        field: "X-Nomad-CSI-Secrets",
      });
    out[part.slice(0, eq).trim()] = part.slice(eq + 1);
  }
  return out;
}
