/**
 * Node introduction tokens (Nomad 1.11's client introduction): an operator with `node:write`
 * creates a short-lived token (`berth node intro create`, `PUT /v1/acl/identity/client-introduction-token`),
 * a new node agent presents it in its first Node.Register (`-client-intro-token`,
 * NOMAD_CLIENT_INTRO_TOKEN, or `<data dir>/client/intro_token.jwt`), and the server's
 * `client_introduction { enforcement }` decides what a node ID never seen before gets without a
 * valid one: "none" nothing checked, "warn" (Nomad's default) registered with one warning,
 * "strict" refused (ERR_PERMISSION_DENIED, nothing stored). A node already on record proves itself
 * with its node secret (node_auth.ts) and never needs a token again.
 *
 * The token is a JWT (HS256), as Nomad's is a JWT: claims `nomad_node_name` (empty: any name),
 * `nomad_node_pool`, `iat`, `nbf`, `exp`, `jti`, `sub` = "node-introduction", `aud` = "berth".
 * Nothing of it is stored: the server checks the signature with its signing key
 * (intro_key.ts: a key file beside the keystore, or one derived from an etcd cluster's shared
 * secret), so there is no token table to leak. The token is a secret in transit: it is answered once,
 * at creation, and never logged (the log redacts `*token*` fields; refusals name the reason only).
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { BerthError, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";

export type IntroEnforcement = "none" | "warn" | "strict";

export interface IntroSettings {
  enforcement: IntroEnforcement;
  /** TTL of a token whose request names none (Nomad's default_identity_ttl, 5 min). */
  defaultTtlMs: number;
  /** A longer requested TTL is cut to this (Nomad's max_identity_ttl, 30 min). */
  maxTtlMs: number;
}

export const DEFAULT_INTRO_SETTINGS: Readonly<IntroSettings> = {
  enforcement: "warn",
  defaultTtlMs: 5 * 60_000,
  maxTtlMs: 30 * 60_000,
};

/** berth has no node pools: every node is in Nomad's default pool. */
const ONLY_POOL = "default";
const SUBJECT = "node-introduction";
const AUDIENCE = "berth";
const MAX_TOKEN_CHARS = 4096;

export interface IntroTokenRequest {
  NodeName: string;
  NodePool: string;
  /** Nanoseconds (Nomad's time.Duration); 0: the server's default. */
  TTL: number;
}

/** The parsed body of a create request (Nomad's ACLCreateClientIntroductionTokenRequest). */
export function parseIntroTokenRequest(body: unknown): IntroTokenRequest {
  const b = body === undefined || body === null ? {} : body;
  if (!isObject(b)) throw validationError("body", "must be an object");
  const name = b.NodeName ?? "";
  if (typeof name !== "string" || name.length > 128 || /[^\x20-\x7e]/.test(name))
    throw validationError("NodeName", "must be a node name of at most 128 printable characters");
  const pool = b.NodePool === undefined || b.NodePool === "" ? ONLY_POOL : b.NodePool;
  if (pool !== ONLY_POOL)
    throw validationError("NodePool", `berth has no node pools: only ${JSON.stringify(ONLY_POOL)}`);
  const ttl = b.TTL ?? 0;
  if (typeof ttl !== "number" || !Number.isSafeInteger(ttl) || ttl < 0)
    throw validationError("TTL", "must be a non-negative duration in nanoseconds");
  return { NodeName: name, NodePool: ONLY_POOL, TTL: ttl };
}

const b64 = (v: Buffer | string) => Buffer.from(v).toString("base64url");

/** Why a presented token does not introduce the node; undefined when it does. */
export type IntroCheck = { ok: true; id: string } | { ok: false; reason: string };

export class NodeIntroTokens {
  constructor(
    /** The signing key; read at each use (an etcd cluster's is known only once it has joined). */
    private readonly key: () => Buffer,
    readonly settings: IntroSettings = DEFAULT_INTRO_SETTINGS,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new token for `req` (its TTL cut to the maximum); the only time the token is seen. */
  create(req: IntroTokenRequest): { JWT: string; ID: string; ExpiresAt: number } {
    const ttlMs = Math.min(req.TTL > 0 ? req.TTL / 1e6 : this.settings.defaultTtlMs, this.settings.maxTtlMs);
    const iat = Math.floor(this.now() / 1000);
    const exp = Math.max(iat + 1, Math.floor((this.now() + ttlMs) / 1000));
    const id = randomUUID();
    const header = b64(JSON.stringify({ alg: "HS256", typ: "JWT" }));
    const payload = b64(
      JSON.stringify({
        aud: AUDIENCE,
        sub: SUBJECT,
        jti: id,
        iat,
        nbf: iat,
        exp,
        nomad_node_name: req.NodeName,
        nomad_node_pool: req.NodePool,
      }),
    );
    const signed = `${header}.${payload}`;
    return { JWT: `${signed}.${this.sign(signed)}`, ID: id, ExpiresAt: exp * 1000 };
  }

  /** Checks `token` for a node named `nodeName`; the reason never echoes the token. */
  check(token: unknown, nodeName: string): IntroCheck {
    if (token === undefined || token === null || token === "")
      return { ok: false, reason: "no introduction token was presented" };
    if (typeof token !== "string" || token.length > MAX_TOKEN_CHARS)
      return { ok: false, reason: "the introduction token is malformed" };
    const parts = token.split(".");
    if (parts.length !== 3) return { ok: false, reason: "the introduction token is malformed" };
    const [header, payload, sig] = parts as [string, string, string];
    const want = Buffer.from(this.sign(`${header}.${payload}`));
    const got = Buffer.from(sig);
    if (want.length !== got.length || !timingSafeEqual(want, got))
      return { ok: false, reason: "the introduction token's signature is not this cluster's" };
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    } catch {
      return { ok: false, reason: "the introduction token is malformed" };
    }
    if (!isObject(claims) || claims.sub !== SUBJECT || claims.aud !== AUDIENCE)
      return { ok: false, reason: "the token is not a node introduction token" };
    const nowSec = this.now() / 1000;
    if (typeof claims.exp !== "number" || nowSec >= claims.exp)
      return { ok: false, reason: "the introduction token has expired" };
    if (typeof claims.nbf === "number" && nowSec + 60 < claims.nbf)
      return { ok: false, reason: "the introduction token is not valid yet" };
    const name = claims.nomad_node_name;
    if (typeof name === "string" && name !== "" && name !== nodeName)
      return { ok: false, reason: `the introduction token is for node name ${JSON.stringify(name)}` };
    return { ok: true, id: typeof claims.jti === "string" ? claims.jti : "" };
  }

  /**
   * Whether a node ID never seen before may register with `token` (enforcement "strict": refused
   * with ERR_PERMISSION_DENIED naming the reason). Answers the reason a "warn" server logs.
   */
  admitNewNode(token: unknown, nodeName: string): string | undefined {
    if (this.settings.enforcement === "none") return undefined;
    const c = this.check(token, nodeName);
    if (c.ok) return undefined;
    if (this.settings.enforcement === "strict") {
      throw new BerthError(
        "ERR_PERMISSION_DENIED",
        `node introduction refused: ${c.reason}; this server admits new nodes only with a valid introduction token (berth node intro create)`,
      );
    }
    return c.reason;
  }

  private sign(data: string): string {
    return createHmac("sha256", this.key()).update(data, "utf8").digest("base64url");
  }
}
