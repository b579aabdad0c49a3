/**
 * What quarantining one stored record deletes, per table: the record and the rows derived from it
 * (a node's plugin instances, a job's plugin uses, an alloc's volumes and its job copy when no
 * other alloc shares it), and which plugins those fed, to be rebuilt from what is left.
 */
import { DROP_JOB_IF_UNUSED } from "../engine/alloc_jobs.js";
import type { CheckedTable, StoredRow } from "./checks.js";

/** One statement and its arguments. */
export type Sql = [sql: string, ...args: unknown[]];

/** The deletes that take the record in `row` (its key columns as SELECT in quarantine.ts reads them). */
export const REMOVE: Readonly<Record<CheckedTable, (row: StoredRow) => Sql[]>> = {
  nodes: ({ id }) => [
    ["DELETE FROM plugin_instances WHERE node_id = ?", id],
    ["DELETE FROM nodes WHERE id = ?", id],
  ],
  jobs: ({ namespace, id }) => [
    ["DELETE FROM plugin_jobs WHERE namespace = ? AND job_id = ?", namespace, id],
    ["DELETE FROM jobs WHERE namespace = ? AND id = ?", namespace, id],
  ],
  allocs: ({ id, job_key }) => [
    ["DELETE FROM alloc_volumes WHERE alloc_id = ?", id],
    ["DELETE FROM allocs WHERE id = ?", id],
    ...(typeof job_key === "string" ? [[DROP_JOB_IF_UNUSED, job_key, job_key] as Sql] : []),
  ],
  volumes: ({ namespace, id }) => [["DELETE FROM volumes WHERE namespace = ? AND id = ?", namespace, id]],
  evals: ({ id }) => [["DELETE FROM evals WHERE id = ?", id]],
  intents: ({ namespace, id }) => [
    ["DELETE FROM volume_intents WHERE namespace = ? AND id = ?", namespace, id],
  ],
  deployments: ({ id }) => [["DELETE FROM deployments WHERE id = ?", id]],
  versions: ({ namespace, job_id, version }) => [
    ["DELETE FROM job_versions WHERE namespace = ? AND id = ? AND version = ?", namespace, job_id, version],
  ],
  namespaces: ({ id }) => [["DELETE FROM namespaces WHERE name = ?", id]],
  acl_policies: ({ id }) => [["DELETE FROM acl_policies WHERE name = ?", id]],
  acl_tokens: ({ id }) => [["DELETE FROM acl_tokens WHERE accessor_id = ?", id]],
  plugins: ({ id }) => [["DELETE FROM plugins WHERE id = ?", id]],
};

/**
 * The query for the IDs (column `plugin_id`) of the plugins the record fed, read before the
 * deletes; undefined when it fed none. A plugin record feeds itself (Mover handles it by ID).
 */
export function fedPluginsQuery(table: CheckedTable, row: StoredRow): Sql | undefined {
  switch (table) {
    case "nodes":
      return ["SELECT plugin_id FROM plugin_instances WHERE node_id = ?", row.id];
    case "jobs":
      return ["SELECT plugin_id FROM plugin_jobs WHERE namespace = ? AND job_id = ?", row.namespace, row.id];
    case "allocs":
      // A live alloc counts toward its system job's expected plugin instances.
      return row.live === 1
        ? ["SELECT plugin_id FROM plugin_jobs WHERE namespace = ? AND job_id = ?", row.namespace, row.job_id]
        : undefined;
    default:
      return undefined;
  }
}
