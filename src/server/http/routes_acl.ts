/**
 * /v1/acl/...: Nomad's ACL routes (command/agent/acl_endpoint.go) over the server's AclEndpoint,
 * answering Nomad's api.ACLPolicy, ACLPolicyListStub, ACLToken and ACLTokenListStub shapes. A
 * token's SecretID is filled only in the answer that created it (bootstrap, create); elsewhere it
 * is "" because berth keeps only its hash. Writes without an answer body (policy upsert/delete,
 * token delete) answer an empty 200 with X-Nomad-Index, as Nomad's do.
 */
import type { ServerResponse } from "node:http";
import { Acl } from "../../structs/acl.js";
import { goDuration, type ACLPolicy, type ACLToken } from "../../structs/acl_records.js";
import { isObject } from "../../structs/json_check.js";
import { validationError } from "../../structs/errors.js";
import type { Identity } from "../acl/endpoint.js";
import { param, type Ctx, type Route } from "../request_ctx.js";
import { goTime, ZERO_TIME } from "../views/go_time.js";
import { readJson } from "../wire/http_io.js";
import { blockingIndex, sendJson } from "./respond.js";

/** Nomad's AnonymousACLToken, answered by `token/self` without a token. */
const ANONYMOUS_TOKEN = {
  AccessorID: "anonymous",
  SecretID: "anonymous",
  Name: "Anonymous Token",
  Type: "client",
  Policies: ["anonymous"],
  Roles: null,
  Global: false,
  CreateTime: ZERO_TIME,
  ExpirationTTL: "",
  CreateIndex: 0,
  ModifyIndex: 0,
};

export function tokenView(t: ACLToken, secret?: string) {
  return {
    AccessorID: t.AccessorID,
    SecretID: secret ?? "",
    Name: t.Name,
    Type: t.Type,
    Policies: t.Policies,
    Roles: null,
    Global: t.Global,
    CreateTime: goTime(t.CreateTime),
    ExpirationTime: t.ExpirationTime > 0 ? goTime(t.ExpirationTime) : undefined,
    ExpirationTTL: t.ExpirationTTL > 0 ? goDuration(t.ExpirationTTL) : "",
    CreateIndex: t.CreateIndex,
    ModifyIndex: t.ModifyIndex,
  };
}

function tokenStub(t: ACLToken) {
  const { SecretID: _secret, ExpirationTTL: _ttl, ...stub } = tokenView(t);
  return stub;
}

function policyView(p: ACLPolicy) {
  return {
    Name: p.Name,
    Description: p.Description,
    Rules: p.Rules,
    JobACL: null,
    CreateIndex: p.CreateIndex,
    ModifyIndex: p.ModifyIndex,
  };
}

function policyStub(p: ACLPolicy) {
  return {
    Name: p.Name,
    Description: p.Description,
    JobACL: null,
    CreateIndex: p.CreateIndex,
    ModifyIndex: p.ModifyIndex,
  };
}

/** The caller; with ACLs off nobody is resolved and every ACL endpoint refuses first anyway. */
function who(ctx: Ctx): Identity {
  return ctx.identity ?? { token: undefined, acl: Acl.compile([]) };
}

function sendIndexOnly(res: ServerResponse, index: number): void {
  res.writeHead(200, { "X-Nomad-Index": String(index) });
  res.end();
}

export const bootstrap: Route = async (ctx, api) => {
  const body = await readJson(ctx.req);
  if (!isObject(body)) throw validationError("body", "must be an object");
  const secret = body.BootstrapSecret ?? "";
  if (typeof secret !== "string") throw validationError("BootstrapSecret", "must be a string");
  const { issued, index } = await api.acl.bootstrap(secret);
  sendJson(ctx.res, tokenView(issued.token, issued.secret), index);
};

export const listPolicies: Route = async (ctx, api) => {
  const index = await blockingIndex(api.store, ctx.query, ["acl_policies"], ctx.signal);
  sendJson(ctx.res, api.acl.listPolicies(who(ctx)).map(policyStub), index);
};

export const getPolicy: Route = async (ctx, api) => {
  const name = param(ctx, "name");
  await blockingIndex(api.store, ctx.query, ["acl_policies"], ctx.signal);
  const p = api.acl.getPolicy(who(ctx), name);
  sendJson(ctx.res, policyView(p), p.ModifyIndex);
};

export const upsertPolicy: Route = async (ctx, api) => {
  const name = param(ctx, "name");
  sendIndexOnly(ctx.res, await api.acl.upsertPolicy(who(ctx), await readJson(ctx.req), name));
};

export const deletePolicy: Route = async (ctx, api) => {
  sendIndexOnly(ctx.res, await api.acl.deletePolicy(who(ctx), param(ctx, "name")));
};

export const listTokens: Route = async (ctx, api) => {
  const index = await blockingIndex(api.store, ctx.query, ["acl_tokens"], ctx.signal);
  sendJson(ctx.res, api.acl.listTokens(who(ctx)).map(tokenStub), index);
};

/** `PUT /v1/acl/token` (create) and `PUT /v1/acl/token/:accessor` (update). */
export const upsertToken: Route = async (ctx, api) => {
  const accessor = ctx.params.accessor === undefined ? "" : param(ctx, "accessor");
  const { issued, index } = await api.acl.upsertToken(who(ctx), await readJson(ctx.req), accessor);
  sendJson(ctx.res, tokenView(issued.token, issued.secret), index);
};

export const getToken: Route = async (ctx, api) => {
  const accessor = param(ctx, "accessor");
  await blockingIndex(api.store, ctx.query, ["acl_tokens"], ctx.signal);
  const t = api.acl.getToken(who(ctx), accessor);
  sendJson(ctx.res, tokenView(t), t.ModifyIndex);
};

export const deleteToken: Route = async (ctx, api) => {
  sendIndexOnly(ctx.res, await api.acl.deleteToken(who(ctx), param(ctx, "accessor")));
};

/** The caller's own token; without one, Nomad's anonymous token. */
export const tokenSelf: Route = async (ctx, api) => {
  await blockingIndex(api.store, ctx.query, ["acl_tokens"], ctx.signal);
  const me = who(ctx);
  api.acl.requireEnabled();
  if (me.token === undefined) return sendJson(ctx.res, ANONYMOUS_TOKEN, api.store.tableIndex("acl_tokens"));
  sendJson(ctx.res, tokenView(me.token), me.token.ModifyIndex);
};
