/**
 * The load check of a stored namespace record (quarantine.ts runs it when the store opens). Pure.
 * Structure only, not Nomad's name rule: a namespace the upgrade migration recorded for names
 * already in use (berth's ID rule, which allows '_' and '.') must load.
 */
import { validationError } from "../../../structs/errors.js";
import { isObject, optString, optStringArray, optStringMap } from "../../../structs/json_check.js";

export function checkNamespaceRecord(v: unknown, row: Record<string, unknown>): void {
  if (!isObject(v)) throw validationError("Namespace", "must be an object");
  if (v.Name !== row.id) {
    throw validationError(
      "Namespace.Name",
      `${JSON.stringify(v.Name)} does not match the row's key ${JSON.stringify(row.id)}`,
    );
  }
  optString("Namespace.Description", v.Description, "");
  optString("Namespace.Quota", v.Quota, "");
  optStringMap("Namespace.Meta", v.Meta);
  if (v.Capabilities !== undefined && v.Capabilities !== null) {
    if (!isObject(v.Capabilities)) throw validationError("Namespace.Capabilities", "must be an object");
    for (const f of [
      "EnabledTaskDrivers",
      "DisabledTaskDrivers",
      "EnabledNetworkModes",
      "DisabledNetworkModes",
    ]) {
      optStringArray(`Namespace.Capabilities.${f}`, v.Capabilities[f], []);
    }
  }
  for (const f of ["CreateIndex", "ModifyIndex"]) {
    const n = v[f];
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0)
      throw validationError(`Namespace.${f}`, "must be a non-negative integer");
  }
}
