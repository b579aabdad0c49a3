/**
 * ACL policies and tokens as the server stores them, and the checks of what a client submits
 * (Nomad's ACLPolicy.Validate and ACLToken.Canonicalize/Validate, nomad/structs/acl.go), with
 * Nomad's error texts. A token's secret is never stored: only its SHA-256 (`SecretHash`, hex),
 * which is also how a request's token is looked up.
 */
import { createHash, randomUUID } from "node:crypto";
import { BerthError } from "./errors.js";
import { isObject } from "./json_check.js";
import { parsePolicy, PolicyError } from "./acl_policy.js";

export interface ACLPolicy {
  Name: string;
  Description: string;
  Rules: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export type ACLTokenType = "client" | "management";

export interface ACLToken {
  AccessorID: string;
  /** SHA-256 of the secret, hex. The secret itself exists only in the answer that made the token. */
  SecretHash: string;
  Name: string;
  Type: ACLTokenType;
  Policies: string[];
  Global: boolean;
  /** Unix ms. */
  CreateTime: number;
  /** Unix ms; 0 when the token never expires. */
  ExpirationTime: number;
  /** The TTL it was created with, ms (0: none); kept to refuse changing it, as Nomad does. */
  ExpirationTTL: number;
  CreateIndex: number;
  ModifyIndex: number;
}

/** Nomad's ValidPolicyName, maxPolicyDescriptionLength, maxTokenNameLength. */
const VALID_POLICY_NAME = /^[a-zA-Z0-9-]{1,128}$/;
const MAX_DESCRIPTION = 256;
const MAX_TOKEN_NAME = 256;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isUuid(s: string): boolean {
  return UUID.test(s);
}

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** A fresh secret and its hash. */
export function newSecret(): { secret: string; hash: string } {
  const secret = randomUUID();
  return { secret, hash: hashSecret(secret) };
}

/** hashicorp/go-multierror's text, which Nomad's validation errors carry. */
export function multiError(errors: string[]): string {
  const n = errors.length;
  return `${n} error${n === 1 ? "" : "s"} occurred:\n${errors.map((e) => `\t* ${e}`).join("\n")}\n\n`;
}

function bad(message: string, field: string): BerthError {
  return new BerthError("ERR_VALIDATION", message, { field });
}

function optStr(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw bad(`${key}: must be a string`, key);
  return v;
}

function strList(body: Record<string, unknown>, key: string): string[] {
  const v = body[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
    throw bad(`${key}: must be a list of strings`, key);
  return [...(v as string[])];
}

/**
 * `PUT /v1/acl/policy/:name`'s body (Nomad's api.ACLPolicy). The name must be the path's; the
 * rules must parse strictly. `JobACL` (workload identity) is refused: berth has none to match.
 */
export function validatePolicyUpsert(
  body: unknown,
  pathName: string,
): Omit<ACLPolicy, "CreateIndex" | "ModifyIndex"> {
  if (!isObject(body)) throw bad("the body must be an ACL policy object", "body");
  const name = optStr(body, "Name");
  if (name !== pathName) throw bad("ACL policy name does not match request path", "Name");
  if (body.JobACL !== undefined && body.JobACL !== null)
    throw bad("JobACL: berth has no workload identities, so a policy cannot be bound to a job", "JobACL");
  const description = optStr(body, "Description");
  const rules = optStr(body, "Rules");
  const errors: string[] = [];
  if (!VALID_POLICY_NAME.test(name)) errors.push(`invalid name '${name}'`);
  try {
    parsePolicy(rules, true);
  } catch (err) {
    if (!(err instanceof PolicyError)) throw err;
    errors.push(`failed to parse rules: ${err.message}`);
  }
  if (description.length > MAX_DESCRIPTION) errors.push(`description longer than ${MAX_DESCRIPTION}`);
  if (errors.length > 0) throw bad(`policy 0 invalid: ${multiError(errors)}`, "Rules");
  return { Name: name, Description: description, Rules: rules };
}

/** What a client may set on a token; the rest (IDs, times, indexes) is the server's. */
export interface TokenRequest {
  AccessorID: string;
  /** Only when uploading a client token with known IDs (Nomad allows it); else generated. */
  SecretID: string;
  Name: string;
  Type: string;
  Policies: string[];
  Global: boolean;
  /** Unix ms, 0 for none. */
  ExpirationTime: number;
  /** ms, 0 for none. */
  ExpirationTTL: number;
}

/** Reads `PUT /v1/acl/token[/:accessor]`'s body (Nomad's api.ACLToken). */
export function readTokenRequest(body: unknown, pathAccessor: string): TokenRequest {
  if (!isObject(body)) throw bad("the body must be an ACL token object", "body");
  const accessor = optStr(body, "AccessorID");
  if (pathAccessor !== "" && accessor !== pathAccessor)
    throw bad("ACL token accessor does not match request path", "AccessorID");
  const roles = body.Roles;
  if (Array.isArray(roles) ? roles.length > 0 : roles !== undefined && roles !== null)
    throw bad("Roles: berth has no ACL roles; grant policies to the token instead", "Roles");
  const global = body.Global ?? false;
  if (typeof global !== "boolean") throw bad("Global: must be true or false", "Global");
  return {
    AccessorID: accessor,
    SecretID: optStr(body, "SecretID"),
    Name: optStr(body, "Name"),
    Type: optStr(body, "Type"),
    Policies: strList(body, "Policies"),
    Global: global,
    ExpirationTime: goTimeMs(body.ExpirationTime, "ExpirationTime"),
    ExpirationTTL: durationMs(body.ExpirationTTL, "ExpirationTTL"),
  };
}

/** Go's time.Time JSON (RFC 3339; the zero time and null mean none) → Unix ms. */
function goTimeMs(v: unknown, field: string): number {
  if (v === undefined || v === null || v === "" || v === "0001-01-01T00:00:00Z") return 0;
  const ms = typeof v === "string" ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms)) throw bad(`${field}: must be an RFC 3339 time`, field);
  return ms;
}

/** Nomad accepts a TTL as a Go duration string ("1h30m") or as nanoseconds. */
function durationMs(v: unknown, field: string): number {
  if (v === undefined || v === null || v === "") return 0;
  if (typeof v === "number" && Number.isFinite(v)) return v / 1e6;
  if (typeof v === "string") {
    const ms = parseGoDurationMs(v);
    if (ms !== undefined) return ms;
  }
  throw bad(`${field}: ${JSON.stringify(v)} is not a duration (like "1h" or "30m")`, field);
}

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** time.ParseDuration: a signed sequence of decimal numbers with units ("1h30m", "-5s", "0"). */
export function parseGoDurationMs(s: string): number | undefined {
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(s);
  if (s === "0" || s === "+0" || s === "-0") return 0;
  if (!m) return undefined;
  let total = 0;
  for (const part of s.slice(m[1]!.length).matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g))
    total += Number(part[1]) * UNIT_MS[part[2]!]!;
  return m[1] === "-" ? -total : total;
}

/** Go's time.Duration.String() of a whole number of ms ("1h0m0s", "1m30s", "500ms", "0s"). */
export function goDuration(ms: number): string {
  if (ms === 0) return "0s";
  const sign = ms < 0 ? "-" : "";
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = `${Number((rest / 1000).toFixed(3))}s`;
  if (h > 0) return `${sign}${h}h${m}m${s}`;
  if (m > 0) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}

/** The bounds of a token's expiry (Nomad's token_min/max_expiration_ttl: 1m and 24h by default). */
export interface TokenTtlBounds {
  minMs: number;
  maxMs: number;
}
export const DEFAULT_TOKEN_TTL_BOUNDS: TokenTtlBounds = { minMs: 60_000, maxMs: 24 * 3_600_000 };

/**
 * Nomad's ACLToken.Validate for a token about to be stored (`createTime` set), against the
 * stored one when it is an update. Throws ERR_VALIDATION with Nomad's `token 0 invalid: …` text.
 */
export function validateToken(
  t: TokenRequest,
  createTime: number,
  existing: ACLToken | undefined,
  bounds: TokenTtlBounds,
): void {
  const errors: string[] = [];
  if (t.Name.length > MAX_TOKEN_NAME) errors.push("token name too long");
  if (t.Type === "client") {
    if (t.Policies.length === 0) errors.push("client token missing policies or roles");
  } else if (t.Type === "management") {
    if (t.Policies.length > 0) errors.push("management token cannot be associated with policies or roles");
  } else {
    errors.push("token type must be client or management");
  }
  if (!existing) {
    if (t.ExpirationTTL < 0)
      errors.push(`token expiration TTL '${goDuration(t.ExpirationTTL)}' should not be negative`);
    const expires = t.ExpirationTime || (t.ExpirationTTL > 0 ? createTime + t.ExpirationTTL : 0);
    if (expires !== 0) {
      if (createTime > expires) errors.push("expiration time cannot be before create time");
      const inMs = expires - createTime;
      if (inMs > bounds.maxMs)
        errors.push(
          `expiration time cannot be more than ${goDuration(bounds.maxMs)} in the future (was ${goDuration(inMs)})`,
        );
      else if (inMs < bounds.minMs)
        errors.push(
          `expiration time cannot be less than ${goDuration(bounds.minMs)} in the future (was ${goDuration(inMs)})`,
        );
    }
  } else {
    if (existing.Global !== t.Global) errors.push("cannot toggle global mode");
    if (t.ExpirationTTL !== 0 && existing.ExpirationTTL !== t.ExpirationTTL)
      errors.push("cannot update expiration TTL");
    if (t.ExpirationTime !== 0 && existing.ExpirationTime !== t.ExpirationTime)
      errors.push("cannot update expiration time");
  }
  if (errors.length > 0) throw bad(`token 0 invalid: ${multiError(errors)}`, "Type");
}

export function isExpired(t: ACLToken, nowMs: number): boolean {
  return t.ExpirationTime > 0 && t.ExpirationTime <= nowMs;
}
