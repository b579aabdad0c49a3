/**
 * Stanzas berth keeps but does not act on (KeptStanza: services, networks, vault, artifacts,
 * periodic, …): stored as written so `GET /v1/job/:id` answers them back, and named by
 * job_warnings.ts. Only their shape is checked (an object, or a list of objects); their contents
 * are Nomad's to define. Pure.
 */
import type { KeptStanza } from "./job_stanzas.js";
import { validationError } from "./errors.js";
import { isObject, optArray } from "./json_check.js";

/** An object stanza, or null when absent/null. */
export function keptObject(field: string, v: unknown): KeptStanza | null {
  if (v === undefined || v === null) return null;
  if (!isObject(v)) throw validationError(field, "must be an object");
  return v;
}

/** A list of object stanzas; absent/null reads as empty. */
export function keptList(field: string, v: unknown): KeptStanza[] {
  return optArray(field, v).map((o, i) => {
    if (!isObject(o)) throw validationError(`${field}[${i}]`, "must be an object");
    return o;
  });
}

/** The `…?: KeptStanza` fields of `out` for the `keys` that `input` sets (non-null). */
export function keptFields(
  field: string,
  input: Record<string, unknown>,
  objects: readonly string[],
  lists: readonly string[],
): Record<string, KeptStanza | KeptStanza[]> {
  const out: Record<string, KeptStanza | KeptStanza[]> = {};
  for (const k of objects) {
    const v = keptObject(`${field}.${k}`, input[k]);
    if (v) out[k] = v;
  }
  for (const k of lists) {
    const v = keptList(`${field}.${k}`, input[k]);
    if (v.length > 0) out[k] = v;
  }
  return out;
}
