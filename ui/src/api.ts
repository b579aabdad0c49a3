/**
 * The UI's side of berth's HTTP API (Nomad's /v1 routes), from the browser, same origin. Every
 * request carries the ACL token the user entered (Settings → Tokens) as `X-Nomad-Token`, as
 * Nomad's UI does; the token lives in sessionStorage, so it is gone when the tab closes and no
 * other site can read it. Errors keep the API's own text and X-Berth-Error-Code: the UI shows
 * them as they are.
 */

const TOKEN_KEY = "berth.token";

export function getToken(): string {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? "";
  } catch {
    return "";
  }
}

export function setToken(secret: string): void {
  if (secret === "") sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, secret);
}

/** The API said no: its status, its plain-text message and its stable code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
  ) {
    super(message);
  }

  /** What the UI shows: the status and the API's text, with a hint where a token would help. */
  get shown(): string {
    const hint = this.status === 403 ? " (enter an ACL token under Settings → Tokens)" : "";
    return `${this.status}: ${this.message}${hint}`;
  }
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.shown;
  if (err instanceof Error) return err.message;
  return String(err);
}

function headers(json: boolean): Record<string, string> {
  const h: Record<string, string> = {};
  const token = getToken();
  if (token !== "") h["X-Nomad-Token"] = token;
  // berth's HTTP perimeter refuses a browser write without a JSON Content-Type (it is what a
  // cross-site form could send); the UI's writes are JSON, with a body or without.
  if (json) h["Content-Type"] = "application/json";
  return h;
}

async function failure(res: Response): Promise<ApiError> {
  const text = (await res.text()).trim();
  return new ApiError(res.status, text || res.statusText, res.headers.get("X-Berth-Error-Code") ?? "");
}

/**
 * A GET: the decoded answer, its X-Nomad-Index (0 when the route sends none) and, for a paged list,
 * its X-Nomad-NextToken ("" on the last page).
 */
export async function getJson<T>(
  path: string,
  signal?: AbortSignal,
): Promise<{ data: T; index: number; nextToken: string }> {
  const res = await fetch(path, { headers: headers(false), signal, cache: "no-store" });
  if (!res.ok) throw await failure(res);
  const index = Number(res.headers.get("X-Nomad-Index") ?? "0");
  const nextToken = res.headers.get("X-Nomad-NextToken") ?? "";
  return { data: (await res.json()) as T, index: Number.isFinite(index) ? index : 0, nextToken };
}

/** A write (PUT, POST, DELETE) with an optional JSON body; the decoded answer. */
export async function write<T>(method: "PUT" | "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: headers(true),
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  if (!res.ok) throw await failure(res);
  const text = await res.text();
  return (text === "" ? {} : JSON.parse(text)) as T;
}

/** A streamed GET (logs): calls `onText` with each decoded chunk until the stream ends or `signal`. */
export async function stream(
  path: string,
  onText: (text: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const res = await fetch(path, { headers: headers(false), signal, cache: "no-store" });
  if (!res.ok) throw await failure(res);
  if (!res.body) {
    onText(await res.text());
    return;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    onText(decoder.decode(value, { stream: true }));
  }
  const rest = decoder.decode();
  if (rest !== "") onText(rest);
}

/** A path segment, escaped. */
export function seg(s: string): string {
  return encodeURIComponent(s);
}

/** `?a=b&c=d` from pairs, leaving out undefined values. */
export function qs(params: Record<string, string | number | boolean | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) p.set(k, String(v));
  const s = p.toString();
  return s === "" ? "" : `?${s}`;
}
