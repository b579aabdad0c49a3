/**
 * The SQLite statements of deployments (structs/deployment.ts) and job versions, kept apart from
 * the other tables' statements. Job versions are the job records as each version was stored, kept
 * bounded as Nomad's state store keeps them (JOB_TRACKED_VERSIONS, the newest stable one kept).
 */
import type Database from "better-sqlite3";
import type { Job } from "../../../structs/job.js";
import { parseRows } from "./statements.js";

/** Nomad's JobDefaultTrackedVersions. */
export const JOB_TRACKED_VERSIONS = 6;

export function prepareDeploymentStatements(db: Database.Database) {
  return {
    get: db.prepare("SELECT json FROM deployments WHERE id = ?"),
    list: db.prepare("SELECT json FROM deployments ORDER BY create_index, rowid"),
    listNs: db.prepare("SELECT json FROM deployments WHERE namespace = ? ORDER BY create_index, rowid"),
    byJob: db.prepare(
      "SELECT json FROM deployments WHERE namespace = ? AND job_id = ? ORDER BY create_index, rowid",
    ),
    put: db.prepare(
      "INSERT INTO deployments (id, namespace, job_id, create_index, json) VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET namespace = excluded.namespace, job_id = excluded.job_id, create_index = excluded.create_index, json = excluded.json",
    ),
    del: db.prepare("DELETE FROM deployments WHERE id = ?"),
    /** Every deployment of the job, of any incarnation: a purge takes them with it (Nomad's DeleteJobTxn). */
    delByJob: db.prepare("DELETE FROM deployments WHERE namespace = ? AND job_id = ?"),
    versions: db.prepare(
      "SELECT json FROM job_versions WHERE namespace = ? AND id = ? ORDER BY version DESC",
    ),
    putVersion: db.prepare(
      "INSERT INTO job_versions (namespace, id, version, json) VALUES (?, ?, ?, ?) ON CONFLICT(namespace, id, version) DO UPDATE SET json = excluded.json",
    ),
    delVersion: db.prepare("DELETE FROM job_versions WHERE namespace = ? AND id = ? AND version = ?"),
    delVersions: db.prepare("DELETE FROM job_versions WHERE namespace = ? AND id = ?"),
  };
}

export type DeploymentStatements = ReturnType<typeof prepareDeploymentStatements>;

/**
 * Stores `job` as its version and drops the oldest beyond JOB_TRACKED_VERSIONS, keeping the newest
 * stable version when it would be the one dropped (so auto_revert has a target), as Nomad does.
 * Answers whether anything was written.
 */
export function upsertJobVersion(s: DeploymentStatements, job: Job): void {
  s.putVersion.run(job.Namespace, job.ID, job.Version, JSON.stringify(job));
  const all = parseRows<Job>(s.versions.all(job.Namespace, job.ID));
  if (all.length <= JOB_TRACKED_VERSIONS) return;
  const stableIdx = all.findIndex((j) => j.Stable === true);
  const max = JOB_TRACKED_VERSIONS;
  const drop = stableIdx === max ? all[max - 1] : all[max];
  if (drop) s.delVersion.run(drop.Namespace, drop.ID, drop.Version);
}
