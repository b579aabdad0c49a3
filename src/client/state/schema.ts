/**
 * The client state DB schema as an ordered list of migrations. `schema_version` holds the number of
 * migrations applied; opening a DB applies the missing ones in one transaction each, so a DB
 * written by an older agent is upgraded in place and a newer one is refused.
 */
import type Database from "better-sqlite3";

export type Migration = (db: Database.Database) => void;

export const MIGRATIONS: readonly Migration[] = [
  (db) => {
    db.exec(`
      CREATE TABLE allocs (
        alloc_id TEXT PRIMARY KEY,
        alloc_json TEXT NOT NULL,
        client_update_json TEXT
      );
      CREATE TABLE task_handles (
        alloc_id TEXT NOT NULL,
        task TEXT NOT NULL,
        handle_json TEXT NOT NULL,
        PRIMARY KEY (alloc_id, task)
      );
      CREATE TABLE csi_volume_stubs (
        alloc_id TEXT NOT NULL,
        alias TEXT NOT NULL,
        stub_json TEXT NOT NULL,
        PRIMARY KEY (alloc_id, alias)
      );
      CREATE TABLE dynamic_plugins (
        role TEXT NOT NULL,
        plugin_id TEXT NOT NULL,
        plugin_json TEXT NOT NULL,
        PRIMARY KEY (role, plugin_id)
      );
      CREATE TABLE pending_releases (
        alloc_id TEXT NOT NULL,
        alias TEXT NOT NULL,
        release_json TEXT NOT NULL,
        PRIMARY KEY (alloc_id, alias)
      );
    `);
  },
  // Mount options' file-system field is Nomad's `FSType` (it was stored as `FsType`).
  (db) => {
    db.exec(`
      UPDATE allocs SET alloc_json = replace(alloc_json, '"FsType":', '"FSType":');
      UPDATE csi_volume_stubs SET stub_json = replace(stub_json, '"FsType":', '"FSType":');
      UPDATE pending_releases SET release_json = replace(release_json, '"FsType":', '"FSType":');
    `);
  },
  // Volumes whose hung unmount berth detached lazily (client/allocrunner/csi_escalate.ts).
  (db) => {
    db.exec(`
      CREATE TABLE volume_attention (
        alloc_id TEXT NOT NULL,
        alias TEXT NOT NULL,
        record_json TEXT NOT NULL,
        PRIMARY KEY (alloc_id, alias)
      );
    `);
  },
];

/** Applies every migration past the DB's recorded version. Throws if the DB is newer than us. */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): number {
  db.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  const row = db.prepare("SELECT version FROM schema_version").get() as { version: number } | undefined;
  if (!row) db.prepare("INSERT INTO schema_version (version) VALUES (0)").run();
  const current = row?.version ?? 0;
  if (current > migrations.length) {
    throw new Error(
      `client state DB has schema version ${current}, newer than this agent understands (${migrations.length})`,
    );
  }
  for (let v = current; v < migrations.length; v++) {
    const step = migrations[v]!;
    db.transaction(() => {
      step(db);
      db.prepare("UPDATE schema_version SET version = ?").run(v + 1);
    })();
  }
  return migrations.length;
}
