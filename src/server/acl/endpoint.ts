/**
 * The ACL system of the server (Nomad's nomad/acl_endpoint.go and its token resolution): the
 * one-time bootstrap, policies and tokens kept in the state store, and `resolve`, which turns the
 * secret a request carries into the compiled ACL the routes ask (structs/acl.ts).
 *
 * Contracts, as Nomad's:
 * - With ACLs disabled every ACL endpoint answers 400 "ACL support disabled" and `resolve` is not
 *   used (the HTTP layer checks nothing).
 * - Policy and token writes, token lists and other tokens' reads need a management token; a token
 *   may read itself; anyone may read the `anonymous` policy.
 * - No secret: the anonymous identity, whose ACL is the policy named `anonymous` if there is one,
 *   else nothing at all. An unknown secret: 403 "ACL token not found"; an expired one: 403 "ACL
 *   token expired".
 * - A secret is stored only as its SHA-256 and is answered only by the request that created it.
 */
import { Acl } from "../../structs/acl.js";
import { parsePolicy } from "../../structs/acl_policy.js";
import {
  DEFAULT_TOKEN_TTL_BOUNDS,
  hashSecret,
  isExpired,
  isUuid,
  newSecret,
  readTokenRequest,
  validatePolicyUpsert,
  validateToken,
  type ACLPolicy,
  type ACLToken,
  type TokenTtlBounds,
} from "../../structs/acl_records.js";
import { BerthError, validationError } from "../../structs/errors.js";
import { newUuid } from "../../structs/ids.js";
import type { StateStore } from "../state/store.js";
import { withDefaults } from "../../internal/with_defaults.js";

export interface AclOptions {
  enabled: boolean;
  /** Bounds of a token's ExpirationTTL / ExpirationTime (agent `acl` token_min/max_expiration_ttl). */
  tokenTtl?: Partial<TokenTtlBounds>;
}

/** Who a request is: its token (undefined for anonymous) and what it may do. */
export interface Identity {
  token: ACLToken | undefined;
  acl: Acl;
}

export const PERMISSION_DENIED = "Permission denied";

export function permissionDenied(): BerthError {
  return new BerthError("ERR_PERMISSION_DENIED", PERMISSION_DENIED);
}

/** A token as stored, with the secret it was just made with (only creation answers carry it). */
export interface IssuedToken {
  token: ACLToken;
  secret: string | undefined;
}

/** Compiled ACLs by policy set, dropped whenever a policy changes. */
const MAX_CACHED = 1024;

export class AclEndpoint {
  readonly enabled: boolean;
  private readonly bounds: TokenTtlBounds;
  private readonly cache = new Map<string, Acl>();
  private cacheIndex = -1;

  constructor(
    private readonly store: StateStore,
    opts: AclOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.enabled = opts.enabled;
    this.bounds = withDefaults(DEFAULT_TOKEN_TTL_BOUNDS, opts.tokenTtl);
  }

  /** Refuses with Nomad's "ACL support disabled" (400) when ACLs are off. */
  requireEnabled(): void {
    if (!this.enabled) throw new BerthError("ERR_ACL_DISABLED", "ACL support disabled");
  }

  /** The identity of a request's secret ("" or undefined: anonymous). */
  resolve(secret: string | undefined): Identity {
    if (secret === undefined || secret === "") {
      return { token: undefined, acl: this.compile(["anonymous"]) };
    }
    const token = this.store.aclTokenBySecretHash(hashSecret(secret));
    if (!token) throw new BerthError("ERR_PERMISSION_DENIED", "ACL token not found");
    if (isExpired(token, this.now())) throw new BerthError("ERR_PERMISSION_DENIED", "ACL token expired");
    if (token.Type === "management") return { token, acl: Acl.management() };
    return { token, acl: this.compile(token.Policies) };
  }

  /** The policies' ACL, cached by policy set until any policy changes; missing ones grant nothing. */
  private compile(names: readonly string[]): Acl {
    const index = this.store.tableIndex("acl_policies");
    if (index !== this.cacheIndex || this.cache.size > MAX_CACHED) {
      this.cache.clear();
      this.cacheIndex = index;
    }
    const key = [...names].sort().join("\n");
    let acl = this.cache.get(key);
    if (!acl) {
      const policies = names
        .map((n) => this.store.getAclPolicy(n))
        .filter((p): p is ACLPolicy => p !== undefined)
        .map((p) => parsePolicy(p.Rules, false));
      acl = Acl.compile(policies);
      this.cache.set(key, acl);
    }
    return acl;
  }

  /**
   * Nomad's ACL.Bootstrap: once, a management token named "Bootstrap Token" (its secret may be
   * given: `BootstrapSecret`, a UUID). A second call is refused with Nomad's text.
   */
  async bootstrap(bootstrapSecret: string): Promise<{ issued: IssuedToken; index: number }> {
    this.requireEnabled();
    if (bootstrapSecret !== "" && !isUuid(bootstrapSecret))
      throw new BerthError("ERR_VALIDATION", "invalid acl token", { field: "BootstrapSecret" });
    const secret = bootstrapSecret || newSecret().secret;
    const token = await this.store.txn((tx) => {
      const done = tx.aclBootstrapIndex();
      if (done > 0)
        throw new BerthError("ERR_VALIDATION", `ACL bootstrap already done (reset index: ${done})`);
      tx.markAclBootstrapped();
      return tx.putAclToken({
        AccessorID: newUuid(),
        SecretHash: hashSecret(secret),
        Name: "Bootstrap Token",
        Type: "management",
        Policies: [],
        Global: true,
        CreateTime: this.now(),
        ExpirationTime: 0,
        ExpirationTTL: 0,
        CreateIndex: 0,
        ModifyIndex: 0,
      });
    });
    return { issued: { token, secret }, index: token.ModifyIndex };
  }

  private requireManagement(who: Identity): void {
    if (!who.acl.isManagement()) throw permissionDenied();
  }

  async upsertPolicy(who: Identity, body: unknown, name: string): Promise<number> {
    this.requireEnabled();
    const spec = validatePolicyUpsert(body, name);
    this.requireManagement(who);
    const rec = await this.store.txn((tx) => tx.putAclPolicy({ ...spec, CreateIndex: 0, ModifyIndex: 0 }));
    return rec.ModifyIndex || this.store.index();
  }

  async deletePolicy(who: Identity, name: string): Promise<number> {
    this.requireEnabled();
    this.requireManagement(who);
    await this.store.txn((tx) => tx.deleteAclPolicy(name));
    return this.store.index();
  }

  /** Management sees every policy; other tokens the ones they hold (Nomad's ListPolicies). */
  listPolicies(who: Identity): ACLPolicy[] {
    this.requireEnabled();
    const all = this.store.listAclPolicies();
    if (who.acl.isManagement()) return all;
    const held = new Set(who.token?.Policies ?? ["anonymous"]);
    return all.filter((p) => held.has(p.Name));
  }

  getPolicy(who: Identity, name: string): ACLPolicy {
    this.requireEnabled();
    const held = who.token?.Policies ?? ["anonymous"];
    if (name !== "anonymous" && !who.acl.isManagement() && !held.includes(name)) throw permissionDenied();
    const p = this.store.getAclPolicy(name);
    if (!p) throw new BerthError("ERR_NOT_FOUND", "ACL policy not found");
    return p;
  }

  /**
   * Nomad's UpsertTokens for one token: create (no AccessorID: new IDs and secret; or an upload of
   * a client token with both IDs given as UUIDs) or update (stored accessor: secret, create time
   * and expiry kept). Management only.
   */
  async upsertToken(
    who: Identity,
    body: unknown,
    pathAccessor: string,
  ): Promise<{ issued: IssuedToken; index: number }> {
    this.requireEnabled();
    const req = readTokenRequest(body, pathAccessor);
    this.requireManagement(who);
    const issued = await this.store.txn((tx) => {
      const existing = req.AccessorID ? tx.getAclToken(req.AccessorID) : undefined;
      if (req.AccessorID && !existing) {
        if (!isUuid(req.AccessorID) || !isUuid(req.SecretID) || req.Type === "management")
          throw new BerthError("ERR_VALIDATION", `cannot find token ${req.AccessorID}`, {
            field: "AccessorID",
          });
      }
      const createTime = existing?.CreateTime ?? this.now();
      validateToken(req, createTime, existing, this.bounds);
      let secret: string | undefined;
      let hash = existing?.SecretHash;
      if (!existing) {
        secret = req.SecretID || newSecret().secret;
        hash = hashSecret(secret);
        if (tx.aclTokenBySecretHash(hash)) throw validationError("SecretID", "is already in use");
      }
      const ttl = existing ? existing.ExpirationTTL : req.ExpirationTTL;
      const expires = existing
        ? existing.ExpirationTime
        : req.ExpirationTime || (req.ExpirationTTL > 0 ? createTime + req.ExpirationTTL : 0);
      const token = tx.putAclToken({
        AccessorID: existing?.AccessorID ?? (req.AccessorID || newUuid()),
        SecretHash: hash!,
        Name: req.Name,
        Type: req.Type as ACLToken["Type"],
        Policies: [...new Set(req.Policies)],
        Global: req.Global,
        CreateTime: createTime,
        ExpirationTime: expires,
        ExpirationTTL: ttl,
        CreateIndex: 0,
        ModifyIndex: 0,
      });
      return { token, secret };
    });
    return { issued, index: this.store.index() };
  }

  async deleteToken(who: Identity, accessor: string): Promise<number> {
    this.requireEnabled();
    this.requireManagement(who);
    await this.store.txn((tx) => {
      if (!tx.getAclToken(accessor))
        throw new BerthError("ERR_VALIDATION", `Cannot delete nonexistent tokens: ${accessor}`);
      tx.deleteAclToken(accessor);
    });
    return this.store.index();
  }

  listTokens(who: Identity): ACLToken[] {
    this.requireEnabled();
    this.requireManagement(who);
    return this.store.listAclTokens();
  }

  /** Management reads any token; a token reads itself (Nomad's GetToken). */
  getToken(who: Identity, accessor: string): ACLToken {
    this.requireEnabled();
    const t = this.store.getAclToken(accessor);
    if (!who.acl.isManagement() && (!t || who.token?.AccessorID !== t.AccessorID)) throw permissionDenied();
    if (!t) throw new BerthError("ERR_NOT_FOUND", "ACL token not found");
    return t;
  }
}
