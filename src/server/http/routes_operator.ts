/**
 * /v1/operator/quarantine: the stored records the server could not load when it opened its state
 * (src/server/state/quarantine/quarantine.ts). Nomad has no such endpoint; it sits under Nomad's /v1/operator
 * tree of low-level operator tools, keeps Nomad's habits (a JSON list, `?namespace=` for the
 * namespaced tables, DELETE to remove, as `DELETE /v1/operator/raft/peer` does) and never answers a
 * record's content: it may hold secrets. To recover one, fix and submit it again through the
 * ordinary API; then drop the entry.
 */
import { notFound, validationError } from "../../structs/errors.js";
import { CHECKED_TABLES, NAMESPACED_TABLES, type CheckedTable } from "../state/quarantine/checks.js";
import { namespaceOf, type Route } from "../request_ctx.js";
import { sendJson } from "./respond.js";

/** A quarantined record as the API shows it (QuarantineTime in unix ns, as Nomad's *Time fields). */
export interface QuarantinedRecordView {
  Table: string;
  Namespace: string;
  Key: string;
  Error: string;
  QuarantineTime: number;
}

export const listQuarantine: Route = (ctx, api) => {
  const list: QuarantinedRecordView[] = api.store.quarantined().map((q) => ({
    Table: q.table,
    Namespace: q.namespace,
    Key: q.key,
    Error: q.error,
    QuarantineTime: q.timeMs * 1_000_000,
  }));
  sendJson(ctx.res, list, Math.max(1, api.store.index()));
  return Promise.resolve();
};

function tableParam(v: string | undefined): CheckedTable {
  if (v !== undefined && (CHECKED_TABLES as readonly string[]).includes(v)) return v as CheckedTable;
  throw validationError(
    "table",
    `unknown table ${JSON.stringify(v ?? "")} (want one of ${CHECKED_TABLES.join(", ")})`,
  );
}

/**
 * Drops one entry for good. The key is the record's ID as stored, which a hand-written row may
 * have outside berth's ID rules, so it is only required to be non-empty: it is a lookup key,
 * never a path.
 */
export const deleteQuarantined: Route = async (ctx, api) => {
  const table = tableParam(ctx.params.table);
  const key = ctx.params.key ?? "";
  if (key === "") throw validationError("key", "is required");
  const namespace = NAMESPACED_TABLES.includes(table) ? (namespaceOf(ctx) ?? "default") : "";
  if (!(await api.store.dropQuarantined(table, namespace, key))) {
    throw notFound(`quarantined ${table} record`, namespace ? `${namespace}/${key}` : key);
  }
  sendJson(ctx.res, {}, api.store.index());
};
