/**
 * The embedded StateStore: one SQLite file (WAL, synchronous=FULL) in the server data dir, or
 * `:memory:` for tests and `-dev`. better-sqlite3 is synchronous, so a txn is one SQLite
 * transaction and never interleaves with another.
 */
import path from "node:path";
import { mkdirSync } from "node:fs";
import Database from "better-sqlite3";
import type { Allocation } from "../../structs/alloc.js";
import type { Evaluation } from "../../structs/eval.js";
import type { Job } from "../../structs/job.js";
import { volumeSourceForAlloc } from "../../structs/job.js";
import { allocIndex, isAllocTerminal } from "../../structs/alloc.js";
import type { Node } from "../../structs/node.js";
import {
  buildPlugin,
  instanceOnNode,
  isPluginEmpty,
  stampEmptySince,
  type CSIInfo,
  type CSIPlugin,
} from "../../structs/plugin.js";
import { expectedOf, jobPluginUses, type PluginJobUse } from "../../structs/plugin_jobs.js";
import type { CSIVolume } from "../../structs/volume.js";
import { LIVE_ALLOCS_OF_JOB, liveAllocsByGroup, migrate } from "./sqlite_schema.js";
import { IndexWatch } from "./watch.js";
import type { StateStore, StateWriter, Table } from "./store.js";

type Indexed = { CreateIndex: number; ModifyIndex: number };
type AllocKeys = { namespace: string; job_id: string; live: number };
type Row = { json: string };

function parseRows<T>(rows: unknown[]): T[] {
  return (rows as Row[]).map((r) => JSON.parse(r.json) as T);
}
function parseRow<T>(row: unknown): T | undefined {
  return row === undefined ? undefined : (JSON.parse((row as Row).json) as T);
}

/** The record's JSON with its indexes left out, to tell a real change from a no-op put. */
function contentOf(rec: object): string {
  return JSON.stringify({ ...rec, CreateIndex: 0, ModifyIndex: 0, AllocModifyIndex: 0, JobModifyIndex: 0 });
}

export class SqliteStateStore implements StateStore {
  private readonly db: Database.Database;
  private readonly stmts;
  private currentIndex = 0;
  private readonly tableIndexes = new Map<Table, number>();
  private readonly watch: IndexWatch;
  /** Unix ms; the clock that stamps CSIPlugin.EmptySince (injectable for tests). */
  readonly now: () => number;

  /** `dataDir` null opens an in-memory store. */
  constructor(dataDir: string | null, opts: { now?: () => number } = {}) {
    this.now = opts.now ?? Date.now;
    let file = ":memory:";
    if (dataDir !== null) {
      mkdirSync(dataDir, { recursive: true });
      file = path.join(dataDir, "state.db");
    }
    this.db = new Database(file);
    if (dataDir !== null) this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = FULL");
    migrate(this.db);
    const db = this.db;
    this.stmts = {
      getMeta: db.prepare("SELECT value FROM meta WHERE key = 'index'"),
      setMeta: db.prepare(
        "INSERT INTO meta (key, value) VALUES ('index', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      ),
      allTableIdx: db.prepare("SELECT name, idx FROM table_index"),
      setTableIdx: db.prepare(
        "INSERT INTO table_index (name, idx) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET idx = excluded.idx",
      ),
      getNode: db.prepare("SELECT json FROM nodes WHERE id = ?"),
      listNodes: db.prepare("SELECT json FROM nodes ORDER BY id"),
      putNode: db.prepare(
        "INSERT INTO nodes (id, json) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET json = excluded.json",
      ),
      getJob: db.prepare("SELECT json FROM jobs WHERE namespace = ? AND id = ?"),
      listJobs: db.prepare("SELECT json FROM jobs ORDER BY namespace, id"),
      listJobsNs: db.prepare("SELECT json FROM jobs WHERE namespace = ? ORDER BY id"),
      putJob: db.prepare(
        "INSERT INTO jobs (namespace, id, json) VALUES (?, ?, ?) ON CONFLICT(namespace, id) DO UPDATE SET json = excluded.json",
      ),
      delJob: db.prepare("DELETE FROM jobs WHERE namespace = ? AND id = ?"),
      getAlloc: db.prepare("SELECT json FROM allocs WHERE id = ?"),
      listAllocs: db.prepare("SELECT json FROM allocs ORDER BY id"),
      listAllocsNs: db.prepare("SELECT json FROM allocs WHERE namespace = ? ORDER BY id"),
      allocsByNode: db.prepare("SELECT json FROM allocs WHERE node_id = ? ORDER BY id"),
      allocsByJob: db.prepare("SELECT json FROM allocs WHERE namespace = ? AND job_id = ? ORDER BY id"),
      allocsByVolume: db.prepare(
        "SELECT a.json FROM alloc_volumes v JOIN allocs a ON a.id = v.alloc_id WHERE v.namespace = ? AND v.volume_id = ? ORDER BY a.id",
      ),
      putAlloc: db.prepare(
        "INSERT INTO allocs (id, namespace, node_id, job_id, task_group, live, json) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET namespace = excluded.namespace, node_id = excluded.node_id, job_id = excluded.job_id, task_group = excluded.task_group, live = excluded.live, json = excluded.json",
      ),
      allocKeys: db.prepare("SELECT namespace, job_id, live FROM allocs WHERE id = ?"),
      liveAllocsOfJob: db.prepare(LIVE_ALLOCS_OF_JOB),
      delAllocVolumes: db.prepare("DELETE FROM alloc_volumes WHERE alloc_id = ?"),
      delAlloc: db.prepare("DELETE FROM allocs WHERE id = ?"),
      delNode: db.prepare("DELETE FROM nodes WHERE id = ?"),
      putAllocVolume: db.prepare(
        "INSERT OR IGNORE INTO alloc_volumes (namespace, volume_id, alloc_id) VALUES (?, ?, ?)",
      ),
      getVolume: db.prepare("SELECT json FROM volumes WHERE namespace = ? AND id = ?"),
      listVolumes: db.prepare("SELECT json FROM volumes ORDER BY namespace, id"),
      listVolumesNs: db.prepare("SELECT json FROM volumes WHERE namespace = ? ORDER BY id"),
      volumesByPlugin: db.prepare("SELECT json FROM volumes WHERE plugin_id = ? ORDER BY namespace, id"),
      putVolume: db.prepare(
        "INSERT INTO volumes (namespace, id, plugin_id, json) VALUES (?, ?, ?, ?) ON CONFLICT(namespace, id) DO UPDATE SET plugin_id = excluded.plugin_id, json = excluded.json",
      ),
      delVolume: db.prepare("DELETE FROM volumes WHERE namespace = ? AND id = ?"),
      getPlugin: db.prepare("SELECT json FROM plugins WHERE id = ?"),
      listPlugins: db.prepare("SELECT json FROM plugins ORDER BY id"),
      putPlugin: db.prepare(
        "INSERT INTO plugins (id, json) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET json = excluded.json",
      ),
      delPlugin: db.prepare("DELETE FROM plugins WHERE id = ?"),
      instancesOf: db.prepare("SELECT node_id, controller, node FROM plugin_instances WHERE plugin_id = ?"),
      putInstance: db.prepare(
        "INSERT INTO plugin_instances (plugin_id, node_id, controller, node) VALUES (?, ?, ?, ?) ON CONFLICT(plugin_id, node_id) DO UPDATE SET controller = excluded.controller, node = excluded.node",
      ),
      delInstance: db.prepare("DELETE FROM plugin_instances WHERE plugin_id = ? AND node_id = ?"),
      usesOfPlugin: db.prepare("SELECT json FROM plugin_jobs WHERE plugin_id = ?"),
      usesOfJob: db.prepare("SELECT plugin_id, json FROM plugin_jobs WHERE namespace = ? AND job_id = ?"),
      putUse: db.prepare(
        "INSERT INTO plugin_jobs (plugin_id, namespace, job_id, json) VALUES (?, ?, ?, ?) ON CONFLICT(plugin_id, namespace, job_id) DO UPDATE SET json = excluded.json",
      ),
      delUse: db.prepare("DELETE FROM plugin_jobs WHERE plugin_id = ? AND namespace = ? AND job_id = ?"),
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
    this.currentIndex = (this.stmts.getMeta.get() as { value: number } | undefined)?.value ?? 0;
    for (const r of this.stmts.allTableIdx.all() as { name: Table; idx: number }[]) {
      this.tableIndexes.set(r.name, r.idx);
    }
    this.watch = new IndexWatch(
      (t) => this.tableIndex(t),
      () => this.index(),
    );
  }

  index(): number {
    return this.currentIndex;
  }
  tableIndex(table: Table): number {
    return this.tableIndexes.get(table) ?? 0;
  }

  getNode(id: string): Node | undefined {
    return parseRow<Node>(this.stmts.getNode.get(id));
  }
  listNodes(): Node[] {
    return parseRows<Node>(this.stmts.listNodes.all());
  }
  getJob(namespace: string, id: string): Job | undefined {
    return parseRow<Job>(this.stmts.getJob.get(namespace, id));
  }
  listJobs(namespace?: string): Job[] {
    return parseRows<Job>(
      namespace === undefined ? this.stmts.listJobs.all() : this.stmts.listJobsNs.all(namespace),
    );
  }
  getAlloc(id: string): Allocation | undefined {
    return parseRow<Allocation>(this.stmts.getAlloc.get(id));
  }
  listAllocs(namespace?: string): Allocation[] {
    return parseRows<Allocation>(
      namespace === undefined ? this.stmts.listAllocs.all() : this.stmts.listAllocsNs.all(namespace),
    );
  }
  allocsByNode(nodeId: string): Allocation[] {
    return parseRows<Allocation>(this.stmts.allocsByNode.all(nodeId));
  }
  allocsByJob(namespace: string, jobId: string): Allocation[] {
    return parseRows<Allocation>(this.stmts.allocsByJob.all(namespace, jobId));
  }
  allocsByVolume(namespace: string, volumeId: string): Allocation[] {
    return parseRows<Allocation>(this.stmts.allocsByVolume.all(namespace, volumeId));
  }
  getVolume(namespace: string, id: string): CSIVolume | undefined {
    return parseRow<CSIVolume>(this.stmts.getVolume.get(namespace, id));
  }
  listVolumes(filter: { namespace?: string; pluginId?: string } = {}): CSIVolume[] {
    let vols: CSIVolume[];
    if (filter.pluginId !== undefined) {
      vols = parseRows<CSIVolume>(this.stmts.volumesByPlugin.all(filter.pluginId));
      if (filter.namespace !== undefined) vols = vols.filter((v) => v.Namespace === filter.namespace);
    } else if (filter.namespace !== undefined) {
      vols = parseRows<CSIVolume>(this.stmts.listVolumesNs.all(filter.namespace));
    } else {
      vols = parseRows<CSIVolume>(this.stmts.listVolumes.all());
    }
    return vols;
  }
  getPlugin(id: string): CSIPlugin | undefined {
    return parseRow<CSIPlugin>(this.stmts.getPlugin.get(id));
  }
  listPlugins(): CSIPlugin[] {
    return parseRows<CSIPlugin>(this.stmts.listPlugins.all());
  }
  getEval(id: string): Evaluation | undefined {
    return parseRow<Evaluation>(this.stmts.getEval.get(id));
  }
  listEvals(namespace?: string): Evaluation[] {
    return parseRows<Evaluation>(
      namespace === undefined ? this.stmts.listEvals.all() : this.stmts.listEvalsNs.all(namespace),
    );
  }
  evalsByJob(namespace: string, jobId: string): Evaluation[] {
    return parseRows<Evaluation>(this.stmts.evalsByJob.all(namespace, jobId));
  }

  txn<T>(fn: (tx: StateWriter) => T): Promise<T> {
    try {
      return Promise.resolve(this.txnSync(fn));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  waitFor(
    tables: readonly Table[],
    minIndex: number,
    signal: AbortSignal | undefined,
    timeoutMs: number,
  ): Promise<number> {
    return this.watch.wait(tables, minIndex, signal, timeoutMs);
  }

  close(): void {
    this.watch.wakeAll();
    if (this.db.open) this.db.close();
  }

  private txnSync<T>(fn: (tx: StateWriter) => T): T {
    const touched = new Set<Table>();
    const writeIndex = this.currentIndex + 1;
    const run = this.db.transaction(() => {
      const writer = new Writer(this, writeIndex, touched);
      const result = fn(writer);
      writer.flushPlugins();
      if (touched.size > 0) {
        this.stmts.setMeta.run(writeIndex);
        for (const t of touched) this.stmts.setTableIdx.run(t, writeIndex);
      }
      return result;
    });
    const result = run();
    if (touched.size > 0) {
      this.currentIndex = writeIndex;
      for (const t of touched) this.tableIndexes.set(t, writeIndex);
      this.watch.notify(touched);
    }
    return result;
  }

  /** @internal used by Writer */
  get statements() {
    return this.stmts;
  }
}

/** The job group a live (placed, not terminal) alloc counts for, "" for none: see expectedOf. */
function liveGroupOf(a: Allocation | undefined): string {
  return a && !isAllocTerminal(a) ? JSON.stringify([a.Namespace, a.JobID, a.TaskGroup]) : "";
}

/** Stamps indexes on a record: CreateIndex kept from the previous version, ModifyIndex = now. */
function stamp<T extends Indexed>(rec: T, prev: Indexed | undefined, idx: number): T {
  return { ...rec, CreateIndex: prev ? prev.CreateIndex : idx, ModifyIndex: idx };
}

class Writer implements StateWriter {
  /**
   * Plugins whose expected counts an alloc write moved (a system job's live allocs), rebuilt once
   * before the next plugin read of this txn or its commit: a scheduler pass that places an alloc
   * on each of N nodes rebuilds each plugin once, not N times.
   */
  private readonly stalePlugins = new Set<string>();

  constructor(
    private readonly store: SqliteStateStore,
    readonly writeIndex: number,
    private readonly touched: Set<Table>,
  ) {}

  private get s() {
    return this.store.statements;
  }

  index(): number {
    return this.store.index();
  }
  tableIndex(t: Table): number {
    return this.store.tableIndex(t);
  }
  getNode(id: string) {
    return this.store.getNode(id);
  }
  listNodes() {
    return this.store.listNodes();
  }
  getJob(ns: string, id: string) {
    return this.store.getJob(ns, id);
  }
  listJobs(ns?: string) {
    return this.store.listJobs(ns);
  }
  getAlloc(id: string) {
    return this.store.getAlloc(id);
  }
  listAllocs(ns?: string) {
    return this.store.listAllocs(ns);
  }
  allocsByNode(nodeId: string) {
    return this.store.allocsByNode(nodeId);
  }
  allocsByJob(ns: string, jobId: string) {
    return this.store.allocsByJob(ns, jobId);
  }
  allocsByVolume(ns: string, volumeId: string) {
    return this.store.allocsByVolume(ns, volumeId);
  }
  getVolume(ns: string, id: string) {
    return this.store.getVolume(ns, id);
  }
  listVolumes(filter?: { namespace?: string; pluginId?: string }) {
    return this.store.listVolumes(filter);
  }
  getEval(id: string) {
    return this.store.getEval(id);
  }
  listEvals(ns?: string) {
    return this.store.listEvals(ns);
  }
  evalsByJob(ns: string, jobId: string) {
    return this.store.evalsByJob(ns, jobId);
  }
  getPlugin(id: string) {
    this.flushPlugins();
    return this.store.getPlugin(id);
  }
  listPlugins() {
    this.flushPlugins();
    return this.store.listPlugins();
  }

  /** Rebuilds the plugins alloc writes left stale (see stalePlugins). */
  flushPlugins(): void {
    for (const id of this.stalePlugins) this.rebuildPlugin(id);
  }

  putNode(node: Node): Node {
    const prev = this.getNode(node.ID);
    if (prev && contentOf(prev) === contentOf(node)) return prev;
    const rec = stamp(node, prev, this.writeIndex);
    this.s.putNode.run(rec.ID, JSON.stringify(rec));
    this.touched.add("nodes");
    const pluginIds = new Set([
      ...Object.keys(prev?.CSIControllerPlugins ?? {}),
      ...Object.keys(prev?.CSINodePlugins ?? {}),
      ...Object.keys(rec.CSIControllerPlugins),
      ...Object.keys(rec.CSINodePlugins),
    ]);
    for (const id of pluginIds) {
      this.recordInstances(id, rec);
      this.rebuildPlugin(id);
    }
    return rec;
  }

  deleteNode(id: string): void {
    const prev = this.getNode(id);
    if (!prev) return;
    this.s.delNode.run(id);
    this.touched.add("nodes");
    const gone: Node = { ...prev, CSIControllerPlugins: {}, CSINodePlugins: {} };
    const pluginIds = new Set([
      ...Object.keys(prev.CSIControllerPlugins),
      ...Object.keys(prev.CSINodePlugins),
    ]);
    for (const pid of pluginIds) {
      this.recordInstances(pid, gone);
      this.rebuildPlugin(pid);
    }
  }

  putJob(job: Job): Job {
    const prev = this.getJob(job.Namespace, job.ID);
    if (prev && contentOf(prev) === contentOf(job)) return prev;
    const rec = stamp(job, prev, this.writeIndex);
    this.s.putJob.run(rec.Namespace, rec.ID, JSON.stringify(rec));
    this.touched.add("jobs");
    this.syncPluginUses(rec.Namespace, rec.ID, jobPluginUses(rec));
    return rec;
  }

  deleteJob(namespace: string, id: string): void {
    if (this.s.delJob.run(namespace, id).changes === 0) return;
    this.touched.add("jobs");
    this.syncPluginUses(namespace, id, []);
  }

  deletePlugin(id: string): boolean {
    const cur = this.getPlugin(id);
    if (!cur || !isPluginEmpty(cur)) return false;
    this.s.delPlugin.run(id);
    this.touched.add("plugins");
    return true;
  }

  /** Replaces the job's plugin uses with `uses`, rebuilding every plugin it named before or now. */
  private syncPluginUses(namespace: string, jobId: string, uses: PluginJobUse[]): void {
    const old = new Map(
      (this.s.usesOfJob.all(namespace, jobId) as { plugin_id: string; json: string }[]).map((r) => [
        r.plugin_id,
        r.json,
      ]),
    );
    const next = new Map(uses.map((u) => [u.pluginId, JSON.stringify(u)]));
    for (const [pluginId, json] of next) {
      if (old.get(pluginId) === json) continue;
      this.s.putUse.run(pluginId, namespace, jobId, json);
      this.rebuildPlugin(pluginId);
    }
    for (const pluginId of old.keys()) {
      if (next.has(pluginId)) continue;
      this.s.delUse.run(pluginId, namespace, jobId);
      this.rebuildPlugin(pluginId);
    }
  }

  putAlloc(alloc: Allocation): Allocation {
    const prev = this.getAlloc(alloc.ID);
    if (prev && contentOf(prev) === contentOf(alloc)) return prev;
    const rec = { ...stamp(alloc, prev, this.writeIndex), AllocModifyIndex: this.writeIndex };
    const live = isAllocTerminal(rec) ? 0 : 1;
    this.s.putAlloc.run(
      rec.ID,
      rec.Namespace,
      rec.NodeID,
      rec.JobID,
      rec.TaskGroup,
      live,
      JSON.stringify(rec),
    );
    if (liveGroupOf(prev) !== liveGroupOf(rec)) {
      if (prev) this.systemPluginsStale(prev.Namespace, prev.JobID);
      this.systemPluginsStale(rec.Namespace, rec.JobID);
    }
    this.s.delAllocVolumes.run(rec.ID);
    const group = rec.Job.TaskGroups.find((g) => g.Name === rec.TaskGroup);
    for (const req of Object.values(group?.Volumes ?? {})) {
      if (req.Type !== "csi") continue;
      this.s.putAllocVolume.run(rec.Namespace, volumeSourceForAlloc(req, allocIndex(rec)), rec.ID);
    }
    this.touched.add("allocs");
    return rec;
  }

  deleteAlloc(id: string): void {
    const keys = this.s.allocKeys.get(id) as AllocKeys | undefined;
    if (!keys) return;
    this.s.delAlloc.run(id);
    if (keys.live === 1) this.systemPluginsStale(keys.namespace, keys.job_id);
    this.s.delAllocVolumes.run(id);
    this.touched.add("allocs");
  }

  putVolume(vol: CSIVolume): CSIVolume {
    const prev = this.getVolume(vol.Namespace, vol.ID);
    if (prev && contentOf(prev) === contentOf(vol)) return prev;
    const rec = stamp(vol, prev, this.writeIndex);
    this.s.putVolume.run(rec.Namespace, rec.ID, rec.PluginID, JSON.stringify(rec));
    this.touched.add("volumes");
    return rec;
  }

  deleteVolume(namespace: string, id: string): void {
    if (this.s.delVolume.run(namespace, id).changes > 0) this.touched.add("volumes");
  }

  putEval(ev: Evaluation): Evaluation {
    const prev = this.getEval(ev.ID);
    if (prev && contentOf(prev) === contentOf(ev)) return prev;
    const rec = stamp(ev, prev, this.writeIndex);
    this.s.putEval.run(rec.ID, rec.Namespace, rec.JobID, rec.CreateIndex, JSON.stringify(rec));
    this.touched.add("evals");
    return rec;
  }

  deleteEval(id: string): void {
    if (this.s.delEval.run(id).changes > 0) this.touched.add("evals");
  }

  /** Records `node`'s instances of plugin `id`, as the plugin counts them (a down node's are unhealthy). */
  private recordInstances(id: string, node: Node): void {
    const reported = node.CSIControllerPlugins[id];
    const reportedNode = node.CSINodePlugins[id];
    const controller = reported && instanceOnNode(reported, node.Status);
    const nodeInfo = reportedNode && instanceOnNode(reportedNode, node.Status);
    if (controller || nodeInfo) {
      this.s.putInstance.run(
        id,
        node.ID,
        controller ? JSON.stringify(controller) : null,
        nodeInfo ? JSON.stringify(nodeInfo) : null,
      );
    } else {
      this.s.delInstance.run(id, node.ID);
    }
  }

  /**
   * Marks stale the plugins a system job declares: their expected counts are its live allocs, which
   * just changed. Other jobs' expectations do not depend on their allocs.
   */
  private systemPluginsStale(namespace: string, jobId: string): void {
    for (const r of this.s.usesOfJob.all(namespace, jobId) as { plugin_id: string; json: string }[]) {
      if ((JSON.parse(r.json) as PluginJobUse).system) this.stalePlugins.add(r.plugin_id);
    }
  }

  /**
   * Rebuilds plugin `id` from all its instances and the jobs that declare it (for a system job,
   * its live allocs per group). A plugin left with neither is kept, stamped EmptySince, for the
   * garbage collector to remove after its threshold.
   */
  private rebuildPlugin(id: string): void {
    this.stalePlugins.delete(id);
    const rows = this.s.instancesOf.all(id) as {
      node_id: string;
      controller: string | null;
      node: string | null;
    }[];
    const uses = parseRows<PluginJobUse>(this.s.usesOfPlugin.all(id));
    const prev = this.store.getPlugin(id);
    if (!prev && rows.length === 0 && uses.length === 0) return;
    const entries = rows.map((r) => ({
      nodeId: r.node_id,
      ...(r.controller !== null ? { controller: JSON.parse(r.controller) as CSIInfo } : {}),
      ...(r.node !== null ? { node: JSON.parse(r.node) as CSIInfo } : {}),
    }));
    const expected = uses.map((u) =>
      expectedOf(u, u.system ? liveAllocsByGroup(this.s.liveAllocsOfJob, u.namespace, u.jobId) : {}),
    );
    const built = buildPlugin(id, entries, expected, {
      CreateIndex: prev ? prev.CreateIndex : this.writeIndex,
      ModifyIndex: this.writeIndex,
    });
    const next = stampEmptySince(built, prev, this.store.now());
    if (prev && contentOf(prev) === contentOf(next)) return;
    this.s.putPlugin.run(id, JSON.stringify(next));
    this.touched.add("plugins");
  }
}
