/**
 * The request core every route group of the API client shares: the connection settings (address,
 * namespace, region, token, TLS), one `request` (JSON in, JSON or nothing out, errors as
 * ApiError/ConnectionError) and the query helpers. The groups (jobs.ts, volumes.ts, ...) hold one
 * ApiTransport and add one method per route; client.ts composes them.
 */
import { ApiError, ConnectionError, ERROR_CODE_HEADER } from "./errors.js";
import { resolveAddress } from "./address.js";
import {
  httpsSend,
  loadTlsConnectOptions,
  type ApiTlsOptions,
  type SendInit,
  type TlsConnectOptions,
} from "./tls.js";
import type { Evaluation } from "./types.js";

export interface ApiClientOptions {
  /** Agent address; defaults to BERTH_ADDR, then http://127.0.0.1:4646. */
  address?: string;
  /** Sent as `?namespace=` when set; the server's default namespace applies otherwise. */
  namespace?: string | undefined;
  /** Sent as Nomad's `X-Nomad-Token` header when set. */
  token?: string | undefined;
  /** Sent as `?region=` when set. */
  region?: string | undefined;
  signal?: AbortSignal;
  /** For https:// addresses: the CA, client certificate and checks (tls.ts); files read at first use. */
  tls?: ApiTlsOptions | undefined;
}

export type Query = Record<string, string | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
}

export class ApiTransport {
  readonly address: string;
  private readonly namespace: string | undefined;
  private readonly token: string | undefined;
  private readonly region: string | undefined;
  private readonly signal: AbortSignal | undefined;
  private readonly tls: ApiTlsOptions;
  private tlsLoaded: TlsConnectOptions | undefined;

  constructor(options: ApiClientOptions = {}) {
    this.address = resolveAddress(options.address);
    this.namespace = options.namespace;
    this.token = options.token;
    this.region = options.region;
    this.signal = options.signal;
    this.tls = options.tls ?? {};
  }

  /** The TLS options for node:https and ws (exec sessions), the files read once. */
  tlsConnectOptions(): TlsConnectOptions {
    this.tlsLoaded ??= loadTlsConnectOptions(this.tls);
    return this.tlsLoaded;
  }

  /**
   * fetch, through this client's transport: https:// goes over node:https with the TLS options
   * (fetch takes none), anything else through fetch itself.
   */
  send(url: URL, init: SendInit): Promise<Response> {
    if (url.protocol === "https:") return httpsSend(url, init, this.tlsConnectOptions());
    return fetch(url, init);
  }

  /**
   * The URL and headers of a request this client would send, for the streams (alloc_stream.ts)
   * that read the answer as it comes instead of as one JSON value.
   */
  endpoint(path: string, query: Query = {}): { url: URL; headers: Record<string, string> } {
    const url = new URL(path, this.address + "/");
    for (const [k, v] of Object.entries({ ...query, namespace: this.namespace, region: this.region })) {
      if (v !== undefined) url.searchParams.set(k, v);
    }
    return { url, headers: this.token ? { "X-Nomad-Token": this.token } : {} };
  }

  /**
   * Sends one request whose body and answer are bytes (a snapshot file): the answer's body and
   * headers; errors as `request`'s.
   */
  async requestBytes(
    method: string,
    path: string,
    opts: { query?: Query; body?: Uint8Array<ArrayBuffer> } = {},
  ): Promise<{ body: Buffer; headers: Headers }> {
    const { url, headers } = this.endpoint(path, opts.query);
    if (opts.body !== undefined) headers["Content-Type"] = "application/octet-stream";
    let res: Response;
    try {
      res = await this.send(url, { method, headers, body: opts.body, signal: this.signal });
    } catch (err) {
      if (err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError")) throw err;
      throw new ConnectionError(this.address, err);
    }
    const body = Buffer.from(await res.arrayBuffer());
    if (!res.ok) {
      const message = body.toString("utf8").trim() || res.statusText || `HTTP ${res.status}`;
      throw new ApiError(res.status, message, res.headers.get(ERROR_CODE_HEADER) ?? undefined);
    }
    return { body, headers: res.headers };
  }

  /**
   * Sends one request. The JSON answer is trusted to have the documented shape (the server is
   * berth's own); an empty body resolves to undefined.
   */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const { url, headers: auth } = this.endpoint(path, opts.query);
    const headers: Record<string, string> = { ...opts.headers, ...auth };
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(opts.body);
    }
    let res: Response;
    try {
      res = await this.send(url, { method, headers, body, signal: this.signal });
    } catch (err) {
      if (err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError")) throw err;
      throw new ConnectionError(this.address, err);
    }
    const text = await res.text();
    if (!res.ok) {
      const message = text.trim() || res.statusText || `HTTP ${res.status}`;
      throw new ApiError(res.status, message, res.headers.get(ERROR_CODE_HEADER) ?? undefined);
    }
    if (text.trim() === "") return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ApiError(res.status, `invalid JSON in answer to ${method} ${path}`);
    }
  }
}

/** Secrets travel in Nomad's X-Nomad-CSI-Secrets header (k=v,k2=v2), never in a URL. */
export function secretsHeader(secrets: Record<string, string> | undefined): Record<string, string> {
  const pairs = Object.entries(secrets ?? {});
  return pairs.length > 0 ? { "X-Nomad-CSI-Secrets": pairs.map(([k, v]) => `${k}=${v}`).join(",") } : {};
}

/**
 * Nomad's list options (api.QueryOptions): `prefix` (ID prefix), `filter` (a go-bexpr expression
 * over the list's stubs), `perPage`/`nextToken` paging (the next token arrives in the
 * X-Nomad-NextToken header of the answer) and `reverse`. Unset options are not sent.
 */
export interface ListOptions {
  prefix?: string;
  filter?: string;
  perPage?: number;
  nextToken?: string;
  reverse?: boolean;
}

export function listQuery(opts: ListOptions): Query {
  return {
    prefix: opts.prefix || undefined,
    filter: opts.filter || undefined,
    ...paging(opts),
    reverse: opts.reverse ? "true" : undefined,
  };
}

export function paging(opts: { perPage?: number; nextToken?: string }): Query {
  return {
    per_page: opts.perPage ? String(opts.perPage) : undefined,
    next_token: opts.nextToken || undefined,
  };
}

/**
 * Newest first by CreateIndex; evals made together (an eval and the blocked eval it created) keep
 * the server's order reversed, so the blocked one comes first.
 */
export function newestFirst(evals: Evaluation[] | undefined): Evaluation[] {
  return [...(evals ?? [])].reverse().sort((a, b) => b.CreateIndex - a.CreateIndex);
}

export function enc(id: string): string {
  return encodeURIComponent(id);
}
