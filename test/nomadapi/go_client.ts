/**
 * Requests shaped as Nomad's Go `api` client sends them, and answers decoded strictly into its
 * structs (go_decode.ts). A request body is a Go struct marshalled by encoding/json: every field
 * present with its Go zero value unless set ("" strings, 0 numbers, false, null pointers, slices
 * and maps, the zero time "0001-01-01T00:00:00Z"), omitempty fields left out when zero — so a
 * volume always carries `"Namespace": ""`. Headers as the Go client's: `X-Nomad-Token` (when it has
 * one; an empty token is not sent), and `?namespace=` / `?region=` from its config.
 */
import { decodeGo, type ExtraFields } from "./go_decode.js";
import { GO_NAMED, GO_STRUCTS } from "./go_structs.js";

export const GO_ZERO_TIME = "0001-01-01T00:00:00Z";

/** The JSON encoding/json writes for the zero value of `type`. */
export function goZero(type: string): unknown {
  if (type.startsWith("*") || type.startsWith("[]") || type.startsWith("map[")) return null;
  if (type === "interface{}" || type === "any") return null;
  if (type === "string") return "";
  if (type === "bool") return false;
  if (type === "time.Time") return GO_ZERO_TIME;
  if (/^(u?int\d*|float\d+|byte|time\.Duration)$/.test(type)) return 0;
  const named = GO_NAMED[type];
  if (named !== undefined) return goZero(named);
  const def = GO_STRUCTS[type];
  if (!def) throw new Error(`the Go type ${type} is not described`);
  const out: Record<string, unknown> = {};
  for (const f of def) {
    if ("embed" in f) Object.assign(out, goZero(f.embed));
    else if (!f.omitempty) out[f.name] = goZero(f.type);
  }
  return out;
}

/** A Go struct value of `type`: its zero value with `set` laid over it (set must use its field names). */
export function goStruct(type: string, set: Record<string, unknown>): Record<string, unknown> {
  const v = { ...(goZero(type) as Record<string, unknown>), ...set };
  decodeGo(v, type, `request ${type}`);
  return v;
}

export interface GoAnswer<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export class GoApiClient {
  /** `extra`: fields accepted beyond the Go structs' own (see extra_fields.ts); nothing else is. */
  constructor(
    readonly address: string,
    readonly opts: { namespace?: string; token?: string; extra?: ExtraFields } = {},
  ) {}

  /** GETs `path` and decodes the answer strictly as `type` (e.g. "[]*CSIVolumeListStub"). */
  async get<T = unknown>(
    path: string,
    type: string,
    query: Record<string, string> = {},
  ): Promise<GoAnswer<T>> {
    const res = await this.send("GET", path, undefined, query);
    return this.decoded<T>(res, type, `GET ${path}`);
  }

  /** PUTs a Go-marshalled `body` (build it with goStruct) and decodes the answer as `type`. */
  async put<T = unknown>(path: string, body: unknown, type: string): Promise<GoAnswer<T>> {
    const res = await this.send("PUT", path, body, {});
    return this.decoded<T>(res, type, `PUT ${path}`);
  }

  /** Any method; the answer is not decoded (for error statuses). */
  async send(method: string, path: string, body: unknown, query: Record<string, string>): Promise<Response> {
    const url = new URL(path, this.address);
    if (this.opts.namespace) url.searchParams.set("namespace", this.opts.namespace);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const headers: Record<string, string> = {};
    if (this.opts.token) headers["X-Nomad-Token"] = this.opts.token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    return fetch(url, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  }

  private async decoded<T>(res: Response, type: string, what: string): Promise<GoAnswer<T>> {
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${what}: ${res.status} ${text}`);
    const body = JSON.parse(text) as T;
    decodeGo(body, type, `${what} $`, this.opts.extra ?? {});
    return { status: res.status, body, headers: res.headers };
  }
}
