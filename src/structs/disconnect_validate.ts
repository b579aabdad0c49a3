/**
 * Checks a task group's disconnect settings as Nomad's DisconnectStrategy.Validate and
 * TaskGroup.Validate do (the facts: which combinations are refused, the reconcile options, which
 * job types may stop on the client), naming the field. Pure; the block is stored as written.
 */
import { validationError } from "./errors.js";
import { RECONCILE_OPTIONS } from "./disconnect.js";
import type { JobType, TaskGroup } from "./job.js";
import { checkFields } from "./job_fields.js";
import { optBool, optNumber, optOneOf } from "./json_check.js";

const DISCONNECT_FIELDS: ReadonlySet<string> = new Set([
  "LostAfter",
  "StopOnClientAfter",
  "Replace",
  "Reconcile",
]);

const set = (v: unknown) => v !== undefined && v !== null;

export function checkDisconnect(field: string, g: TaskGroup, type: JobType): void {
  const d = g.Disconnect;
  const df = `${field}.Disconnect`;
  if (d) {
    checkFields(df, d, DISCONNECT_FIELDS);
    const lostAfter = optNumber(`${df}.LostAfter`, d.LostAfter, 0, { integer: true, min: 0 });
    optNumber(`${df}.StopOnClientAfter`, d.StopOnClientAfter, 0, { integer: true, min: 0 });
    optBool(`${df}.Replace`, d.Replace, true);
    optOneOf(`${df}.Reconcile`, d.Reconcile, RECONCILE_OPTIONS, "reconcile option", "best_score");
    if (set(d.StopOnClientAfter) && lostAfter > 0)
      throw validationError(df, "cannot be configured with both lost_after and stop_on_client_after");
    if (lostAfter > 0 && set(g.MaxClientDisconnect))
      throw validationError(df, "using both lost_after and max_client_disconnect is not allowed");
    if (set(d.StopOnClientAfter) && set(g.StopAfterClientDisconnect))
      throw validationError(
        df,
        "using both stop_on_client_after and stop_after_client_disconnect is not allowed",
      );
  }
  if (set(g.MaxClientDisconnect) && set(g.StopAfterClientDisconnect))
    throw validationError(
      `${field}.MaxClientDisconnect`,
      "max_client_disconnect and stop_after_client_disconnect are mutually exclusive",
    );
  const stopsOnClient = set(d?.StopOnClientAfter) || set(g.StopAfterClientDisconnect);
  if (stopsOnClient && type !== "service" && type !== "batch")
    throw validationError(
      set(d?.StopOnClientAfter) ? `${df}.StopOnClientAfter` : `${field}.StopAfterClientDisconnect`,
      "can only be used with service or batch job types",
    );
}
