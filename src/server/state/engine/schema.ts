/**
 * The SQLite schema. Records are stored as JSON with the columns their lookups need indexed.
 * `user_version` versions it; each migration moves one version forward inside a transaction.
 */
import type Database from "better-sqlite3";
import { migrateAllocJobs } from "./alloc_jobs.js";
import { isAllocTerminal, type Allocation } from "../../../structs/alloc.js";
import type { Job } from "../../../structs/job.js";
import { isPluginEmpty, type CSIPlugin } from "../../../structs/plugin.js";
import { BerthError } from "../../../structs/errors.js";
import {
  expectedOf,
  jobDescriptions,
  jobPluginUses,
  totalExpected,
  type PluginJobUse,
} from "../../../structs/plugin_jobs.js";
import { migrateNamespaces } from "./namespaces.js";
import { CHANGE_INDEXES_MIGRATION } from "./changes.js";
import { PERIODIC_LAUNCHES_MIGRATION } from "./periodic.js";
import { PLUGIN_CAPACITY_MIGRATION } from "./capacity.js";
import { migratePluginSummaries } from "./plugins.js";

/**
 * A job's live allocs (placed, not terminal: `allocs.live`) per task group, from the
 * allocs_live_by_job index alone: what a system job expects of the plugins it declares.
 */
export const LIVE_ALLOCS_OF_JOB =
  "SELECT task_group, COUNT(*) AS n FROM allocs WHERE namespace = ? AND job_id = ? AND live = 1 GROUP BY task_group";

export function liveAllocsByGroup(
  stmt: Database.Statement,
  namespace: string,
  jobId: string,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of stmt.all(namespace, jobId) as { task_group: string; n: number }[]) out[r.task_group] = r.n;
  return out;
}

/**
 * `use(JSON.parse(json))`, or undefined when that throws: a migration step skips a stored record
 * it cannot read (written by hand or by a bug) instead of failing the open, and the check that
 * follows the migrations quarantines it (quarantine/quarantine.ts).
 */
function loadable<T, R>(json: string, use: (value: T) => R): R | undefined {
  try {
    return use(JSON.parse(json) as T);
  } catch {
    return undefined;
  }
}

/** SQL, or a function for a step that must compute from the stored JSON. */
type Migration = string | ((db: Database.Database) => void);

const MIGRATIONS: Migration[] = [
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
  CREATE TABLE table_index (name TEXT PRIMARY KEY, idx INTEGER NOT NULL);
  CREATE TABLE nodes (id TEXT PRIMARY KEY, json TEXT NOT NULL);
  CREATE TABLE jobs (namespace TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (namespace, id));
  CREATE TABLE allocs (
    id TEXT PRIMARY KEY, namespace TEXT NOT NULL, node_id TEXT NOT NULL, job_id TEXT NOT NULL, json TEXT NOT NULL
  );
  CREATE INDEX allocs_by_node ON allocs (node_id);
  CREATE INDEX allocs_by_job ON allocs (namespace, job_id);
  CREATE TABLE alloc_volumes (
    namespace TEXT NOT NULL, volume_id TEXT NOT NULL, alloc_id TEXT NOT NULL,
    PRIMARY KEY (namespace, volume_id, alloc_id)
  );
  CREATE INDEX alloc_volumes_by_alloc ON alloc_volumes (alloc_id);
  CREATE TABLE volumes (
    namespace TEXT NOT NULL, id TEXT NOT NULL, plugin_id TEXT NOT NULL, json TEXT NOT NULL,
    PRIMARY KEY (namespace, id)
  );
  CREATE INDEX volumes_by_plugin ON volumes (plugin_id);
  CREATE TABLE plugin_instances (
    plugin_id TEXT NOT NULL, node_id TEXT NOT NULL, controller TEXT, node TEXT,
    PRIMARY KEY (plugin_id, node_id)
  );
  CREATE TABLE plugins (id TEXT PRIMARY KEY, json TEXT NOT NULL);
  `,
  // v2: the jobs that declare each plugin (plugin_jobs.ts), filled from the jobs already stored,
  // and the plugin records' new fields (ControllerJobs, NodeJobs, EmptySince). Every plugin stored
  // before had an instance, so none is empty.
  (db) => {
    db.exec(`
      CREATE TABLE plugin_jobs (
        plugin_id TEXT NOT NULL, namespace TEXT NOT NULL, job_id TEXT NOT NULL, json TEXT NOT NULL,
        PRIMARY KEY (plugin_id, namespace, job_id)
      );
      CREATE INDEX plugin_jobs_by_job ON plugin_jobs (namespace, job_id);
    `);
    const put = db.prepare(
      "INSERT INTO plugin_jobs (plugin_id, namespace, job_id, json) VALUES (?, ?, ?, ?)",
    );
    const byPlugin = new Map<string, PluginJobUse[]>();
    for (const row of db.prepare("SELECT json FROM jobs").all() as { json: string }[]) {
      for (const use of loadable(row.json, (j: Job) => jobPluginUses(j)) ?? []) {
        put.run(use.pluginId, use.namespace, use.jobId, JSON.stringify(use));
        byPlugin.set(use.pluginId, [...(byPlugin.get(use.pluginId) ?? []), use]);
      }
    }
    const putPlugin = db.prepare("UPDATE plugins SET json = ? WHERE id = ?");
    for (const row of db.prepare("SELECT id, json FROM plugins").all() as { id: string; json: string }[]) {
      const p = loadable(row.json, (v: CSIPlugin) => v);
      if (!p) continue;
      const expected = (byPlugin.get(row.id) ?? []).map((u) => expectedOf(u, {}));
      const next = { ...p, ...jobDescriptions(expected), EmptySince: 0 };
      putPlugin.run(JSON.stringify(next), row.id);
    }
  },
  // v3 as written (plugin expected counts): ControllersExpected / NodesExpected become what the
  // declaring jobs expect, no longer how many instances report. A system job expects its live
  // allocs, so allocs gain their task group and liveness (placed, not terminal) as columns with a
  // covering index to count them by; plugin_jobs rows take the new PluginJobUse shape (declaring
  // groups per side); every plugin record's job descriptions and expected counts are recomputed.
  (db) => {
    db.exec(`
      ALTER TABLE allocs ADD COLUMN task_group TEXT NOT NULL DEFAULT '';
      ALTER TABLE allocs ADD COLUMN live INTEGER NOT NULL DEFAULT 0;
    `);
    const setAlloc = db.prepare("UPDATE allocs SET task_group = ?, live = ? WHERE id = ?");
    for (const row of db.prepare("SELECT json FROM allocs").all() as { json: string }[]) {
      const a = loadable(row.json, (v: Allocation) => ({ ...v, terminal: isAllocTerminal(v) }));
      if (a && typeof a.TaskGroup === "string") setAlloc.run(a.TaskGroup, a.terminal ? 0 : 1, a.ID);
    }
    db.exec("CREATE INDEX allocs_live_by_job ON allocs (namespace, job_id, live, task_group)");

    db.exec("DELETE FROM plugin_jobs");
    const put = db.prepare(
      "INSERT INTO plugin_jobs (plugin_id, namespace, job_id, json) VALUES (?, ?, ?, ?)",
    );
    const live = db.prepare(LIVE_ALLOCS_OF_JOB);
    const byPlugin = new Map<string, PluginJobUse[]>();
    for (const row of db.prepare("SELECT json FROM jobs").all() as { json: string }[]) {
      for (const use of loadable(row.json, (j: Job) => jobPluginUses(j)) ?? []) {
        put.run(use.pluginId, use.namespace, use.jobId, JSON.stringify(use));
        byPlugin.set(use.pluginId, [...(byPlugin.get(use.pluginId) ?? []), use]);
      }
    }
    const putPlugin = db.prepare("UPDATE plugins SET json = ? WHERE id = ?");
    for (const row of db.prepare("SELECT id, json FROM plugins").all() as { id: string; json: string }[]) {
      const p = loadable(row.json, (v: CSIPlugin) => v);
      if (!p) continue;
      const expected = (byPlugin.get(row.id) ?? []).map((u) =>
        expectedOf(u, u.system ? liveAllocsByGroup(live, u.namespace, u.jobId) : {}),
      );
      const jobs = jobDescriptions(expected);
      const next: CSIPlugin = {
        ...p,
        ControllersExpected: totalExpected(jobs.ControllerJobs),
        NodesExpected: totalExpected(jobs.NodeJobs),
        ...jobs,
      };
      // Listing jobs that expect 0 can only make a plugin non-empty, never empty.
      if (!isPluginEmpty(next)) next.EmptySince = 0;
      putPlugin.run(JSON.stringify(next), row.id);
    }
  },
  // Evaluations (structs/eval.ts), looked up by job; the scheduler bounds how many a job keeps.
  `
  CREATE TABLE evals (
    id TEXT PRIMARY KEY, namespace TEXT NOT NULL, job_id TEXT NOT NULL, create_index INTEGER NOT NULL,
    json TEXT NOT NULL
  );
  CREATE INDEX evals_by_job ON evals (namespace, job_id, create_index);
  `,
  // Stored records that failed to load, moved out of the live tables when the store opened
  // (quarantine/quarantine.ts). `json` is the record as it was stored, kept for the operator, never served.
  `
  CREATE TABLE quarantine (
    tbl TEXT NOT NULL, namespace TEXT NOT NULL, key TEXT NOT NULL, json TEXT NOT NULL,
    error TEXT NOT NULL, time_ms INTEGER NOT NULL,
    PRIMARY KEY (tbl, namespace, key)
  );
  `,
  // Volume create intents (structs/volume_intent.ts): written before CreateVolume, removed with the
  // record; one left over marks storage a crash may have orphaned.
  `
  CREATE TABLE volume_intents (
    namespace TEXT NOT NULL, id TEXT NOT NULL, json TEXT NOT NULL, PRIMARY KEY (namespace, id)
  );
  `,
  // Mount options' file-system field is Nomad's `FSType` (it was stored as `FsType`).
  `
  UPDATE volumes SET json = replace(json, '"FsType":', '"FSType":');
  UPDATE jobs SET json = replace(json, '"FsType":', '"FSType":');
  UPDATE allocs SET json = replace(json, '"FsType":', '"FSType":');
  `,
  // Deployments (structs/deployment.ts), looked up by job; and the job versions each job keeps
  // (deployments.ts), filled with the current version of every job already stored.
  `
  CREATE TABLE deployments (
    id TEXT PRIMARY KEY, namespace TEXT NOT NULL, job_id TEXT NOT NULL, create_index INTEGER NOT NULL,
    json TEXT NOT NULL
  );
  CREATE INDEX deployments_by_job ON deployments (namespace, job_id, create_index);
  CREATE TABLE job_versions (
    namespace TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL, json TEXT NOT NULL,
    PRIMARY KEY (namespace, id, version)
  );
  INSERT OR IGNORE INTO job_versions (namespace, id, version, json)
    SELECT namespace, id, COALESCE(json_extract(json, '$.Version'), 0), json FROM jobs
    WHERE json_valid(json);
  `,
  // Namespaces as objects (namespaces.ts): `default`, and one for every namespace in use.
  migrateNamespaces,
  // ACL policies and tokens (structs/acl_records.ts, acl.ts). A token is found by the
  // SHA-256 of its secret (the secret itself is never stored); `acl_bootstrap` in meta records the
  // index of the one-time bootstrap.
  `
  CREATE TABLE acl_policies (name TEXT PRIMARY KEY, json TEXT NOT NULL);
  CREATE TABLE acl_tokens (accessor_id TEXT PRIMARY KEY, secret_hash TEXT NOT NULL, json TEXT NOT NULL);
  CREATE UNIQUE INDEX acl_tokens_by_secret ON acl_tokens (secret_hash);
  `,
  // Volumes, allocs and nodes by ModifyIndex (changes.ts): what changed since an index.
  CHANGE_INDEXES_MIGRATION,
  // Plugin rows become small summaries moved by delta; instances gain indexed health columns.
  (db) => migratePluginSummaries(db),
  // Allocs stored without their job: one shared copy per distinct job (alloc_jobs.ts).
  migrateAllocJobs,
  // The last launch of each periodic job (periodic.ts), Nomad's periodic_launch table.
  PERIODIC_LAUNCHES_MIGRATION,
  // What the leader's capacity poll measured per plugin and topology segment (capacity.ts).
  PLUGIN_CAPACITY_MIGRATION,
];

/** The schema version this berth writes: each migration moves `user_version` one step. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Moves the schema up to `target` (the latest by default; an older one makes old files in tests). */
export function migrate(db: Database.Database, target = MIGRATIONS.length): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    // A downgrade: this release cannot know what the newer one's schema means.
    throw new BerthError(
      "ERR_CONFLICT",
      `the state DB has schema version ${current}, newer than this berth understands ` +
        `(${MIGRATIONS.length}): it was written by a later release; run that release, or restore a ` +
        `snapshot taken by this one`,
    );
  }
  for (let v = current; v < Math.min(target, MIGRATIONS.length); v++) {
    const step = MIGRATIONS[v];
    if (step === undefined) break;
    db.transaction(() => {
      if (typeof step === "string") db.exec(step);
      else step(db);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
