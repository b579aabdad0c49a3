/**
 * The quarantine of stored records that cannot be loaded — written by an older berth, by hand, or
 * by a bug. When the SQLite store opens, one pass reads every record of every table and checks it
 * (checks.ts). A record that fails is moved, in one transaction, to the `quarantine`
 * table (its table, key, raw JSON, the error, when) and is gone from the live table and the
 * indexes derived from it: a node's plugin instances, a job's plugin uses, an alloc's volumes; the
 * plugin records those fed are rebuilt from what is left (engine/derive_plugins.ts's rules). The pass
 * bumps the write index and the touched tables' indexes, as any write does. So nothing the server
 * reads afterwards can throw on a stored record, and a poisoned record can never make the server
 * crash at every start: it starts without it, and the operator sees it (GET /v1/operator/quarantine)
 * and drops it for good (DELETE). The raw JSON stays in the file only: it may hold secrets, so it
 * is never logged nor served.
 *
 * The derived rows (plugin_instances, plugin_jobs) are checked too; one that does not parse is
 * re-derived from its node or job, which are the source of truth, and its plugin rebuilt.
 */
import type Database from "better-sqlite3";
import type { Node } from "../../../structs/node.js";
import type { Job } from "../../../structs/job.js";
import {
  buildPlugin,
  stampEmptySince,
  summaryOf,
  type CSIInfo,
  type CSIPluginSummary,
} from "../../../structs/plugin.js";
import { expectedOf, jobPluginUses, type PluginJobUse } from "../../../structs/plugin_jobs.js";
import { changedPlugin, nodeInstances } from "../engine/derive_plugins.js";
import type { QuarantinedRecord } from "../store.js";
import { LIVE_ALLOCS_OF_JOB, liveAllocsByGroup } from "../engine/schema.js";
import { instanceColumns } from "../engine/plugins.js";
import { REMOVE, fedPluginsQuery } from "./removal.js";
import {
  CHECKED_TABLES,
  NAMESPACED_TABLES,
  checkPluginInfo,
  checkPluginUse,
  parseStored,
  recordProblem,
  type CheckedTable,
  type StoredRow,
} from "./checks.js";

/** What the pass at open did: the records it moved, and how many it checked. */
export interface QuarantineReport {
  checked: number;
  quarantined: QuarantinedRecord[];
  /** Derived rows (plugin uses / instances) that did not parse and were derived again. */
  rederived: number;
  /** Wall time of the pass, ms. */
  elapsedMs: number;
}

/** Each checked table's rows with the key columns its check compares, and how its key reads. */
const SELECT: Record<CheckedTable, string> = {
  nodes: "SELECT id, json FROM nodes",
  jobs: "SELECT namespace, id, json FROM jobs",
  // The alloc with its job copy put back (engine/alloc_jobs.ts); without it when the copy is
  // missing or not JSON, which the alloc's check then reports.
  allocs: `SELECT a.id, a.namespace, a.node_id, a.job_id, a.task_group, a.live, a.job_key,
    CASE WHEN j.json IS NOT NULL AND json_valid(a.json) AND json_valid(j.json)
      THEN json_set(a.json, '$.Job', json(j.json)) ELSE a.json END AS json
    FROM allocs a LEFT JOIN alloc_jobs j ON j.key = a.job_key`,
  volumes: "SELECT namespace, id, plugin_id, json FROM volumes",
  evals: "SELECT id, namespace, job_id, create_index, json FROM evals",
  plugins: "SELECT id, json FROM plugins",
  intents: "SELECT namespace, id, json FROM volume_intents",
  deployments: "SELECT id, namespace, job_id, create_index, json FROM deployments",
  // Keyed in the quarantine as `<job>@<version>`.
  versions: "SELECT namespace, id || '@' || version AS id, id AS job_id, version, json FROM job_versions",
  namespaces: "SELECT name AS id, json FROM namespaces",
  acl_policies: "SELECT name AS id, name, json FROM acl_policies",
  acl_tokens: "SELECT accessor_id AS id, accessor_id, secret_hash, json FROM acl_tokens",
};

function keyOf(table: CheckedTable, row: StoredRow): { namespace: string; key: string } {
  const namespaced = NAMESPACED_TABLES.includes(table);
  return { namespace: namespaced ? String(row.namespace) : "", key: String(row.id) };
}

interface Bad {
  table: CheckedTable;
  row: StoredRow;
  error: string;
}

/**
 * Checks every stored record and quarantines those that fail, in one transaction. Runs once, when
 * the store opens (after the schema migrations), before anything reads the store.
 */
export function quarantineBadRecords(db: Database.Database, nowMs: number): QuarantineReport {
  const started = performance.now();
  let checked = 0;
  const bad: Bad[] = [];
  for (const table of CHECKED_TABLES) {
    for (const row of db.prepare(SELECT[table]).iterate() as Iterable<StoredRow>) {
      checked++;
      const error = recordProblem(table, row);
      if (error !== undefined) bad.push({ table, row, error });
    }
  }
  const badUses = brokenDerivedRows(
    db,
    "SELECT rowid, plugin_id, namespace, job_id, json FROM plugin_jobs",
    (r) => checkPluginUse(parseStored(r.json), r),
  );
  const badInstances = brokenDerivedRows(
    db,
    "SELECT rowid, plugin_id, node_id, controller, node FROM plugin_instances",
    (r) => {
      if (r.controller === null && r.node === null) throw new Error("an instance row with neither side");
      for (const side of [r.controller, r.node]) {
        if (side === null) continue;
        if (typeof side !== "string") throw new Error("an instance column that is not JSON text");
        checkPluginInfo(parseStored(side));
      }
    },
  );
  const quarantined: QuarantinedRecord[] = [];
  if (bad.length + badUses.length + badInstances.length > 0) {
    db.transaction(() => {
      const mover = new Mover(db, nowMs);
      for (const b of bad) quarantined.push(mover.quarantine(b));
      mover.rederiveUses(badUses);
      mover.rederiveInstances(badInstances);
      mover.finish();
    })();
  }
  return {
    checked,
    quarantined,
    rederived: badUses.length + badInstances.length,
    elapsedMs: performance.now() - started,
  };
}

/** Rows of a derived table that `check` refuses. */
function brokenDerivedRows(db: Database.Database, sql: string, check: (row: StoredRow) => void): StoredRow[] {
  const out: StoredRow[] = [];
  for (const row of db.prepare(sql).iterate() as Iterable<StoredRow>) {
    try {
      check(row);
    } catch {
      out.push(row);
    }
  }
  return out;
}

/** The writes of one quarantine pass (inside its transaction). */
class Mover {
  private readonly touched = new Set<string>();
  private readonly plugins = new Set<string>();
  private readonly gone = new Set<string>();
  private readonly writeIndex: number;

  constructor(
    private readonly db: Database.Database,
    private readonly nowMs: number,
  ) {
    const meta = db.prepare("SELECT value FROM meta WHERE key = 'index'").get() as
      { value: number } | undefined;
    this.writeIndex = (meta?.value ?? 0) + 1;
  }

  private run(sql: string, ...args: unknown[]): Database.RunResult {
    return this.db.prepare(sql).run(...args);
  }

  private pluginIds(sql: string, ...args: unknown[]): string[] {
    return (this.db.prepare(sql).all(...args) as { plugin_id: string }[]).map((r) => r.plugin_id);
  }

  quarantine(b: Bad): QuarantinedRecord {
    const { namespace, key } = keyOf(b.table, b.row);
    this.run(
      "INSERT OR REPLACE INTO quarantine (tbl, namespace, key, json, error, time_ms) VALUES (?, ?, ?, ?, ?, ?)",
      b.table,
      namespace,
      key,
      b.row.json,
      b.error,
      this.nowMs,
    );
    this.remove(b.table, b.row);
    this.touched.add(b.table);
    return { table: b.table, namespace, key, error: b.error, timeMs: this.nowMs };
  }

  /** Deletes the record and what is derived from it (removal.ts), noting the plugins to rebuild. */
  private remove(table: CheckedTable, row: StoredRow): void {
    const fed = fedPluginsQuery(table, row);
    if (fed) this.affect(this.pluginIds(...fed));
    for (const [sql, ...args] of REMOVE[table](row)) this.run(sql, ...args);
    if (table === "plugins") {
      this.gone.add(String(row.id));
      this.affect([String(row.id)]);
    }
  }

  private affect(ids: string[]): void {
    for (const id of ids) this.plugins.add(id);
  }

  /** Broken plugin_jobs rows: derived again from their job, when it is still stored. */
  rederiveUses(rows: StoredRow[]): void {
    for (const r of rows) {
      this.run("DELETE FROM plugin_jobs WHERE rowid = ?", r.rowid);
      this.affect([String(r.plugin_id)]);
      const jobRow = this.db
        .prepare("SELECT json FROM jobs WHERE namespace = ? AND id = ?")
        .get(r.namespace, r.job_id) as { json: string } | undefined;
      const use =
        jobRow && jobPluginUses(JSON.parse(jobRow.json) as Job).find((u) => u.pluginId === r.plugin_id);
      if (use) {
        this.run(
          "INSERT INTO plugin_jobs (plugin_id, namespace, job_id, json) VALUES (?, ?, ?, ?)",
          use.pluginId,
          use.namespace,
          use.jobId,
          JSON.stringify(use),
        );
      }
    }
  }

  /** Broken plugin_instances rows: derived again from their node, when it is still stored. */
  rederiveInstances(rows: StoredRow[]): void {
    for (const r of rows) {
      this.run("DELETE FROM plugin_instances WHERE rowid = ?", r.rowid);
      this.affect([String(r.plugin_id)]);
      const nodeRow = this.db.prepare("SELECT json FROM nodes WHERE id = ?").get(r.node_id) as
        { json: string } | undefined;
      if (!nodeRow) continue;
      const inst = nodeInstances(JSON.parse(nodeRow.json) as Node, String(r.plugin_id));
      if (!inst.controller && !inst.node) continue;
      this.run(
        "INSERT INTO plugin_instances (plugin_id, node_id, controller, node, controller_healthy, node_healthy, provider, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        r.plugin_id,
        r.node_id,
        ...instanceColumns(inst),
      );
    }
  }

  /** Rebuilds the affected plugins and moves the indexes of every table the pass changed. */
  finish(): void {
    for (const id of this.plugins) this.rebuildPlugin(id);
    if (this.touched.size === 0) return;
    this.run(
      "INSERT INTO meta (key, value) VALUES ('index', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      this.writeIndex,
    );
    for (const t of this.touched) {
      this.run(
        "INSERT INTO table_index (name, idx) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET idx = excluded.idx",
        t,
        this.writeIndex,
      );
    }
  }

  /**
   * The plugin's summary from its sources alone (every node's instances, every declaring job's
   * expectation), as applyPluginDelta would reach it delta by delta. O(instances): only here, at
   * open, for the plugins a quarantined or re-derived row fed.
   */
  private rebuildPlugin(id: string): void {
    const prevRow = this.gone.has(id)
      ? undefined
      : (this.db.prepare("SELECT json FROM plugins WHERE id = ?").get(id) as { json: string } | undefined);
    const prev = prevRow ? (JSON.parse(prevRow.json) as CSIPluginSummary) : undefined;
    const rows = this.db
      .prepare("SELECT node_id, controller, node FROM plugin_instances WHERE plugin_id = ? ORDER BY node_id")
      .all(id) as { node_id: string; controller: string | null; node: string | null }[];
    const entries = rows.map((r) => ({
      nodeId: r.node_id,
      controller: r.controller ? (JSON.parse(r.controller) as CSIInfo) : undefined,
      node: r.node ? (JSON.parse(r.node) as CSIInfo) : undefined,
    }));
    const live = this.db.prepare(LIVE_ALLOCS_OF_JOB);
    const jobs = (
      this.db
        .prepare("SELECT json FROM plugin_jobs WHERE plugin_id = ? ORDER BY namespace, job_id")
        .all(id) as {
        json: string;
      }[]
    ).map((r) => {
      const use = JSON.parse(r.json) as PluginJobUse;
      return expectedOf(use, use.system ? liveAllocsByGroup(live, use.namespace, use.jobId) : {});
    });
    if (!prev && entries.length === 0 && jobs.length === 0) return;
    const built = buildPlugin(id, entries, jobs, {
      CreateIndex: prev ? prev.CreateIndex : this.writeIndex,
      ModifyIndex: this.writeIndex,
    });
    const next = changedPlugin(prev, stampEmptySince(summaryOf(built), prev, this.nowMs), this.nowMs);
    if (!next) return;
    this.run(
      "INSERT INTO plugins (id, json) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET json = excluded.json",
      id,
      JSON.stringify(next),
    );
    this.touched.add("plugins");
  }
}

/** The store's reads and deletes of the quarantine table. */
export function quarantineStatements(db: Database.Database) {
  const list = db.prepare(
    "SELECT tbl, namespace, key, error, time_ms FROM quarantine ORDER BY time_ms, tbl, namespace, key",
  );
  const del = db.prepare("DELETE FROM quarantine WHERE tbl = ? AND namespace = ? AND key = ?");
  return {
    list(): QuarantinedRecord[] {
      return (
        list.all() as { tbl: CheckedTable; namespace: string; key: string; error: string; time_ms: number }[]
      ).map((r) => ({ table: r.tbl, namespace: r.namespace, key: r.key, error: r.error, timeMs: r.time_ms }));
    },
    drop(table: string, namespace: string, key: string): boolean {
      return del.run(table, namespace, key).changes > 0;
    },
  };
}
