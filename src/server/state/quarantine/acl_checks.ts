/**
 * The load checks of stored ACL records (checks.ts runs them when the store opens): a
 * policy whose rules no longer parse, or a token missing the fields token resolution reads, is
 * quarantined rather than failing every request that names it. Messages never carry a secret hash.
 */
import { parsePolicy, PolicyError } from "../../../structs/acl_policy.js";
import { validationError } from "../../../structs/errors.js";
import { isObject } from "../../../structs/json_check.js";

type Row = Record<string, unknown>;

export function checkAclPolicy(v: unknown, row: Row): void {
  if (!isObject(v)) throw validationError("ACLPolicy", "must be an object");
  if (v.Name !== row.name) throw validationError("Name", "does not match the row's key");
  if (typeof v.Rules !== "string") throw validationError("Rules", "must be a string");
  try {
    parsePolicy(v.Rules, false);
  } catch (err) {
    if (err instanceof PolicyError) throw validationError("Rules", err.message);
    throw err;
  }
}

export function checkAclToken(v: unknown, row: Row): void {
  if (!isObject(v)) throw validationError("ACLToken", "must be an object");
  if (v.AccessorID !== row.accessor_id) throw validationError("AccessorID", "does not match the row's key");
  if (v.SecretHash !== row.secret_hash) throw validationError("SecretHash", "does not match the row's index");
  if (v.Type !== "client" && v.Type !== "management")
    throw validationError("Type", "must be client or management");
  if (!Array.isArray(v.Policies) || v.Policies.some((p) => typeof p !== "string"))
    throw validationError("Policies", "must be a list of strings");
  for (const k of ["CreateTime", "ExpirationTime", "ExpirationTTL", "CreateIndex", "ModifyIndex"]) {
    if (typeof v[k] !== "number") throw validationError(k, "must be a number");
  }
}
