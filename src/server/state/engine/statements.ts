/** The store's prepared statements, one per lookup or write (schema.ts has the tables). */
import type Database from "better-sqlite3";
import { ALLOC_COLUMNS } from "./alloc_jobs.js";
import { LIVE_ALLOCS_OF_JOB } from "./schema.js";

/** Every statement of the tables below, one flat object (the engine's `statements`), grouped per table. */
export function prepareStatements(db: Database.Database) {
  return {
    ...metaStatements(db),
    ...nodeStatements(db),
    ...jobStatements(db),
    ...allocStatements(db),
    ...volumeStatements(db),
    ...pluginStatements(db),
    ...evalStatements(db),
  };
}

/** The store's write index and the per-table indexes (tables `meta`, `table_index`). */
function metaStatements(db: Database.Database) {
  return {
    getMeta: db.prepare("SELECT value FROM meta WHERE key = 'index'"),
    setMeta: db.prepare(
      "INSERT INTO meta (key, value) VALUES ('index', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    ),
    allTableIdx: db.prepare("SELECT name, idx FROM table_index"),
    setTableIdx: db.prepare(
      "INSERT INTO table_index (name, idx) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET idx = excluded.idx",
    ),
  };
}

/** Nodes, by ID. */
function nodeStatements(db: Database.Database) {
  return {
    getNode: db.prepare("SELECT json FROM nodes WHERE id = ?"),
    listNodes: db.prepare("SELECT json FROM nodes ORDER BY id"),
    putNode: db.prepare(
      "INSERT INTO nodes (id, json) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET json = excluded.json",
    ),
    delNode: db.prepare("DELETE FROM nodes WHERE id = ?"),
  };
}

/** Jobs, by (namespace, ID). */
function jobStatements(db: Database.Database) {
  return {
    getJob: db.prepare("SELECT json FROM jobs WHERE namespace = ? AND id = ?"),
    listJobs: db.prepare("SELECT json FROM jobs ORDER BY namespace, id"),
    listJobsNs: db.prepare("SELECT json FROM jobs WHERE namespace = ? ORDER BY id"),
    putJob: db.prepare(
      "INSERT INTO jobs (namespace, id, json) VALUES (?, ?, ?) ON CONFLICT(namespace, id) DO UPDATE SET json = excluded.json",
    ),
    delJob: db.prepare("DELETE FROM jobs WHERE namespace = ? AND id = ?"),
  };
}

/** Allocs (stored without their job, alloc_jobs.ts) and the volumes their groups request (`alloc_volumes`). */
function allocStatements(db: Database.Database) {
  return {
    // Alloc rows hold the alloc without its job (alloc_jobs.ts): read with AllocJobs.
    getAlloc: db.prepare(`SELECT ${ALLOC_COLUMNS} FROM allocs WHERE id = ?`),
    listAllocs: db.prepare(`SELECT ${ALLOC_COLUMNS} FROM allocs ORDER BY id`),
    listAllocsNs: db.prepare(`SELECT ${ALLOC_COLUMNS} FROM allocs WHERE namespace = ? ORDER BY id`),
    allocsByNode: db.prepare(`SELECT ${ALLOC_COLUMNS} FROM allocs WHERE node_id = ? ORDER BY id`),
    allocsByJob: db.prepare(
      `SELECT ${ALLOC_COLUMNS} FROM allocs WHERE namespace = ? AND job_id = ? ORDER BY id`,
    ),
    allocsByVolume: db.prepare(
      "SELECT a.json, a.job_key FROM alloc_volumes v JOIN allocs a ON a.id = v.alloc_id WHERE v.namespace = ? AND v.volume_id = ? ORDER BY a.id",
    ),
    putAlloc: db.prepare(
      "INSERT INTO allocs (id, namespace, node_id, job_id, task_group, live, json, job_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET namespace = excluded.namespace, node_id = excluded.node_id, job_id = excluded.job_id, task_group = excluded.task_group, live = excluded.live, json = excluded.json, job_key = excluded.job_key",
    ),
    allocKeys: db.prepare("SELECT namespace, job_id, live, node_id, job_key FROM allocs WHERE id = ?"),
    liveAllocsOfJob: db.prepare(LIVE_ALLOCS_OF_JOB),
    liveAllocOfIncarnation: db.prepare(
      "SELECT 1 FROM allocs a JOIN alloc_jobs j ON j.key = a.job_key WHERE a.namespace = ? AND a.job_id = ? AND a.live = 1 AND j.create_index = ? LIMIT 1",
    ),
    delAllocVolumes: db.prepare("DELETE FROM alloc_volumes WHERE alloc_id = ?"),
    delAlloc: db.prepare("DELETE FROM allocs WHERE id = ?"),
    putAllocVolume: db.prepare(
      "INSERT OR IGNORE INTO alloc_volumes (namespace, volume_id, alloc_id) VALUES (?, ?, ?)",
    ),
  };
}

/** CSI volumes, by (namespace, ID), with their plugin indexed. */
function volumeStatements(db: Database.Database) {
  return {
    getVolume: db.prepare("SELECT json FROM volumes WHERE namespace = ? AND id = ?"),
    /** The stored text and its two indexes, read by SQLite (putVolume's no-op check by text). */
    volumeForPut: db.prepare(
      "SELECT json, iif(json_valid(json), json_extract(json, '$.CreateIndex'), NULL) AS c, iif(json_valid(json), json_extract(json, '$.ModifyIndex'), NULL) AS m FROM volumes WHERE namespace = ? AND id = ?",
    ),
    listVolumes: db.prepare("SELECT json FROM volumes ORDER BY namespace, id"),
    listVolumesNs: db.prepare("SELECT json FROM volumes WHERE namespace = ? ORDER BY id"),
    volumesByPlugin: db.prepare("SELECT json FROM volumes WHERE plugin_id = ? ORDER BY namespace, id"),
    putVolume: db.prepare(
      "INSERT INTO volumes (namespace, id, plugin_id, json) VALUES (?, ?, ?, ?) ON CONFLICT(namespace, id) DO UPDATE SET plugin_id = excluded.plugin_id, json = excluded.json",
    ),
    delVolume: db.prepare("DELETE FROM volumes WHERE namespace = ? AND id = ?"),
  };
}

/** Plugin summaries and the plugin uses their declaring jobs make (`plugin_jobs`); instances are in plugins.ts. */
function pluginStatements(db: Database.Database) {
  return {
    putPlugin: db.prepare(
      "INSERT INTO plugins (id, json) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET json = excluded.json",
    ),
    delPlugin: db.prepare("DELETE FROM plugins WHERE id = ?"),
    usesOfJob: db.prepare("SELECT plugin_id, json FROM plugin_jobs WHERE namespace = ? AND job_id = ?"),
    putUse: db.prepare(
      "INSERT INTO plugin_jobs (plugin_id, namespace, job_id, json) VALUES (?, ?, ?, ?) ON CONFLICT(plugin_id, namespace, job_id) DO UPDATE SET json = excluded.json",
    ),
    delUse: db.prepare("DELETE FROM plugin_jobs WHERE plugin_id = ? AND namespace = ? AND job_id = ?"),
  };
}

/** Evaluations, oldest first by CreateIndex. */
function evalStatements(db: Database.Database) {
  return {
    getEval: db.prepare("SELECT json FROM evals WHERE id = ?"),
    listEvals: db.prepare("SELECT json FROM evals ORDER BY create_index, rowid"),
    listEvalsNs: db.prepare("SELECT json FROM evals WHERE namespace = ? ORDER BY create_index, rowid"),
    evalsByJob: db.prepare(
      "SELECT json FROM evals WHERE namespace = ? AND job_id = ? ORDER BY create_index, rowid",
    ),
    putEval: db.prepare(
      "INSERT INTO evals (id, namespace, job_id, create_index, json) VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET namespace = excluded.namespace, job_id = excluded.job_id, create_index = excluded.create_index, json = excluded.json",
    ),
    delEval: db.prepare("DELETE FROM evals WHERE id = ?"),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;

type Row = { json: string };

export function parseRows<T>(rows: unknown[]): T[] {
  return (rows as Row[]).map((r) => JSON.parse(r.json) as T);
}
export function parseRow<T>(row: unknown): T | undefined {
  return row === undefined ? undefined : (JSON.parse((row as Row).json) as T);
}
