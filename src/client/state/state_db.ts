/**
 * The client state DB: one SQLite file, `<dataDir>/client/state.db` (WAL), holding what a restarted
 * agent needs to pick up where it stopped — allocs, task handles, CSI volume stubs, the dynamic
 * plugin registry and releases in progress. Every write is an upsert or a delete, so every method is
 * idempotent. Values are stored as JSON; the DB never interprets them.
 */
import Database from "better-sqlite3";
import { safeJoin } from "../../structs/ids.js";
import { ensureDirMode, preparePrivateDbFile, tightenDbFiles } from "../../internal/private_files.js";
import type { Allocation } from "../../structs/alloc.js";
import type { AllocClientUpdate } from "../../structs/rpc.js";
import type { TaskHandle } from "../drivers/driver.js";
import type { PluginRole, RegisteredPlugin } from "../dynamicplugins/types.js";
import { migrate } from "./schema.js";
import type { CsiVolumeStub, PendingRelease, VolumeAttention } from "./types.js";

export interface StoredAlloc {
  alloc: Allocation;
  clientUpdate: AllocClientUpdate | null;
}

export class StateDB {
  private readonly db: Database.Database;

  /** Opens (creating when needed) `<dataDir>/client/state.db`; `":memory:"` opens a throwaway DB. */
  static open(dataDir: string): StateDB {
    if (dataDir === ":memory:") return new StateDB(new Database(":memory:"));
    const dir = safeJoin(dataDir, "client");
    // Root only, tightened when an older berth left it 0755/0644 (internal/private_files.ts).
    ensureDirMode(dir);
    const file = safeJoin(dir, "state.db");
    preparePrivateDbFile(file);
    const db = new StateDB(new Database(file));
    tightenDbFiles(file);
    return db;
  }

  private constructor(db: Database.Database) {
    this.db = db;
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    migrate(this.db);
  }

  close(): void {
    this.db.close();
  }

  schemaVersion(): number {
    return (this.db.prepare("SELECT version FROM schema_version").get() as { version: number }).version;
  }

  // ---- allocs ----

  putAlloc(alloc: Allocation): void {
    this.db
      .prepare(
        `INSERT INTO allocs (alloc_id, alloc_json) VALUES (?, ?)
         ON CONFLICT (alloc_id) DO UPDATE SET alloc_json = excluded.alloc_json`,
      )
      .run(alloc.ID, JSON.stringify(alloc));
  }

  /** Records the last status the client reported for an alloc; a no-op for an unknown alloc. */
  putAllocClientUpdate(update: AllocClientUpdate): void {
    this.db
      .prepare("UPDATE allocs SET client_update_json = ? WHERE alloc_id = ?")
      .run(JSON.stringify(update), update.ID);
  }

  getAlloc(allocId: string): StoredAlloc | undefined {
    const row = this.db
      .prepare("SELECT alloc_json, client_update_json FROM allocs WHERE alloc_id = ?")
      .get(allocId) as { alloc_json: string; client_update_json: string | null } | undefined;
    return row && toStoredAlloc(row);
  }

  listAllocs(): StoredAlloc[] {
    const rows = this.db
      .prepare("SELECT alloc_json, client_update_json FROM allocs ORDER BY alloc_id")
      .all() as { alloc_json: string; client_update_json: string | null }[];
    return rows.map(toStoredAlloc);
  }

  /** Forgets an alloc and everything stored under it (handles, stubs, pending releases). */
  deleteAlloc(allocId: string): void {
    this.db.transaction(() => {
      for (const table of ["allocs", "task_handles", "csi_volume_stubs", "pending_releases"]) {
        this.db.prepare(`DELETE FROM ${table} WHERE alloc_id = ?`).run(allocId);
      }
    })();
  }

  // ---- task handles ----

  putTaskHandle(allocId: string, task: string, handle: TaskHandle): void {
    this.db
      .prepare(
        `INSERT INTO task_handles (alloc_id, task, handle_json) VALUES (?, ?, ?)
         ON CONFLICT (alloc_id, task) DO UPDATE SET handle_json = excluded.handle_json`,
      )
      .run(allocId, task, JSON.stringify(handle));
  }

  getTaskHandle(allocId: string, task: string): TaskHandle | undefined {
    const row = this.db
      .prepare("SELECT handle_json FROM task_handles WHERE alloc_id = ? AND task = ?")
      .get(allocId, task) as { handle_json: string } | undefined;
    return row && (JSON.parse(row.handle_json) as TaskHandle);
  }

  deleteTaskHandle(allocId: string, task: string): void {
    this.db.prepare("DELETE FROM task_handles WHERE alloc_id = ? AND task = ?").run(allocId, task);
  }

  // ---- CSI volume stubs ----

  putVolumeStubs(allocId: string, stubs: Record<string, CsiVolumeStub>): void {
    const stmt = this.db.prepare(
      `INSERT INTO csi_volume_stubs (alloc_id, alias, stub_json) VALUES (?, ?, ?)
       ON CONFLICT (alloc_id, alias) DO UPDATE SET stub_json = excluded.stub_json`,
    );
    this.db.transaction(() => {
      for (const [alias, stub] of Object.entries(stubs)) stmt.run(allocId, alias, JSON.stringify(stub));
    })();
  }

  getVolumeStubs(allocId: string): Record<string, CsiVolumeStub> {
    const rows = this.db
      .prepare("SELECT alias, stub_json FROM csi_volume_stubs WHERE alloc_id = ? ORDER BY alias")
      .all(allocId) as { alias: string; stub_json: string }[];
    return Object.fromEntries(rows.map((r) => [r.alias, JSON.parse(r.stub_json) as CsiVolumeStub]));
  }

  /** Every stub on this node, for rebuilding the volume manager's staging reference counts. */
  listAllVolumeStubs(): { allocId: string; alias: string; stub: CsiVolumeStub }[] {
    const rows = this.db
      .prepare("SELECT alloc_id, alias, stub_json FROM csi_volume_stubs ORDER BY alloc_id, alias")
      .all() as { alloc_id: string; alias: string; stub_json: string }[];
    return rows.map((r) => ({
      allocId: r.alloc_id,
      alias: r.alias,
      stub: JSON.parse(r.stub_json) as CsiVolumeStub,
    }));
  }

  /**
   * The stubs whose volume this node still holds for their alloc: every stub but those whose
   * release has already unmounted it (its pending record's checkpoint says so). What rebuilds the
   * volume manager's staging users after a restart: an agent killed between a release's unmount
   * and its end leaves that alloc's stub behind, and counting the alloc as a user of the staging
   * would keep the staging mounted after every later user is gone.
   */
  listVolumeStubsInUse(): { allocId: string; alias: string; stub: CsiVolumeStub }[] {
    const rows = this.db
      .prepare(
        `SELECT s.alloc_id, s.alias, s.stub_json, p.release_json FROM csi_volume_stubs s
         LEFT JOIN pending_releases p ON p.alloc_id = s.alloc_id AND p.alias = s.alias
         ORDER BY s.alloc_id, s.alias`,
      )
      .all() as { alloc_id: string; alias: string; stub_json: string; release_json: string | null }[];
    return rows
      .filter((r) => r.release_json === null || !(JSON.parse(r.release_json) as PendingRelease).unmounted)
      .map((r) => ({ allocId: r.alloc_id, alias: r.alias, stub: JSON.parse(r.stub_json) as CsiVolumeStub }));
  }

  deleteVolumeStub(allocId: string, alias: string): void {
    this.db.prepare("DELETE FROM csi_volume_stubs WHERE alloc_id = ? AND alias = ?").run(allocId, alias);
  }

  // ---- dynamic plugins ----

  putDynamicPlugin(plugin: RegisteredPlugin): void {
    this.db
      .prepare(
        `INSERT INTO dynamic_plugins (role, plugin_id, plugin_json) VALUES (?, ?, ?)
         ON CONFLICT (role, plugin_id) DO UPDATE SET plugin_json = excluded.plugin_json`,
      )
      .run(plugin.role, plugin.pluginId, JSON.stringify(plugin));
  }

  listDynamicPlugins(): RegisteredPlugin[] {
    const rows = this.db
      .prepare("SELECT plugin_json FROM dynamic_plugins ORDER BY role, plugin_id")
      .all() as { plugin_json: string }[];
    return rows.map((r) => JSON.parse(r.plugin_json) as RegisteredPlugin);
  }

  deleteDynamicPlugin(role: PluginRole, pluginId: string): void {
    this.db.prepare("DELETE FROM dynamic_plugins WHERE role = ? AND plugin_id = ?").run(role, pluginId);
  }

  // ---- pending releases ----

  putPendingRelease(allocId: string, alias: string, release: PendingRelease): void {
    this.db
      .prepare(
        `INSERT INTO pending_releases (alloc_id, alias, release_json) VALUES (?, ?, ?)
         ON CONFLICT (alloc_id, alias) DO UPDATE SET release_json = excluded.release_json`,
      )
      .run(allocId, alias, JSON.stringify(release));
  }

  getPendingReleases(allocId: string): Record<string, PendingRelease> {
    const rows = this.db
      .prepare("SELECT alias, release_json FROM pending_releases WHERE alloc_id = ? ORDER BY alias")
      .all(allocId) as { alias: string; release_json: string }[];
    return Object.fromEntries(rows.map((r) => [r.alias, JSON.parse(r.release_json) as PendingRelease]));
  }

  /** Alloc IDs with a release in progress, for resuming them after a restart. */
  listAllocsWithPendingReleases(): string[] {
    const rows = this.db
      .prepare("SELECT DISTINCT alloc_id FROM pending_releases ORDER BY alloc_id")
      .all() as { alloc_id: string }[];
    return rows.map((r) => r.alloc_id);
  }

  /**
   * Records that an operator's detach unmounted one alloc's volume on this node: the stub goes, and
   * a release the alloc has pending skips to asking the server (which the detach already did).
   */
  markNodeDetached(allocId: string, alias: string): void {
    this.db.transaction(() => {
      const pending = this.getPendingReleases(allocId)[alias];
      if (pending) this.putPendingRelease(allocId, alias, { ...pending, unmounted: true });
      this.deleteVolumeStub(allocId, alias);
    })();
  }

  /** Finishes one volume's release: the pending record and the stub go together. */
  completeRelease(allocId: string, alias: string): void {
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM pending_releases WHERE alloc_id = ? AND alias = ?").run(allocId, alias);
      this.deleteVolumeStub(allocId, alias);
    })();
  }

  // ---- volumes needing attention (an escalated release) ----

  putVolumeAttention(rec: VolumeAttention): void {
    this.db
      .prepare(
        `INSERT INTO volume_attention (alloc_id, alias, record_json) VALUES (?, ?, ?)
         ON CONFLICT (alloc_id, alias) DO UPDATE SET record_json = excluded.record_json`,
      )
      .run(rec.allocId, rec.alias, JSON.stringify(rec));
  }

  listVolumeAttention(): VolumeAttention[] {
    const rows = this.db
      .prepare("SELECT record_json FROM volume_attention ORDER BY alloc_id, alias")
      .all() as { record_json: string }[];
    return rows.map((r) => JSON.parse(r.record_json) as VolumeAttention);
  }

  /** Records that the plugin answered since; a record already dropped stays dropped. */
  markVolumeAttentionPluginTold(allocId: string, alias: string): void {
    const row = this.db
      .prepare("SELECT record_json FROM volume_attention WHERE alloc_id = ? AND alias = ?")
      .get(allocId, alias) as { record_json: string } | undefined;
    if (!row) return;
    this.putVolumeAttention({ ...(JSON.parse(row.record_json) as VolumeAttention), pluginTold: true });
  }

  /** How many records there are; 0 once the DB is closed (a metrics scrape after a stop). */
  countVolumeAttention(): number {
    if (!this.db.open) return 0;
    return (this.db.prepare("SELECT COUNT(*) AS n FROM volume_attention").get() as { n: number }).n;
  }

  /** Drops every record of a volume: it was mounted on this node again. */
  clearVolumeAttention(namespace: string, volumeId: string): void {
    for (const rec of this.listVolumeAttention()) {
      if (rec.namespace !== namespace || rec.volumeId !== volumeId) continue;
      this.db
        .prepare("DELETE FROM volume_attention WHERE alloc_id = ? AND alias = ?")
        .run(rec.allocId, rec.alias);
    }
  }
}

function toStoredAlloc(row: { alloc_json: string; client_update_json: string | null }): StoredAlloc {
  return {
    alloc: JSON.parse(row.alloc_json) as Allocation,
    clientUpdate:
      row.client_update_json === null ? null : (JSON.parse(row.client_update_json) as AllocClientUpdate),
  };
}
