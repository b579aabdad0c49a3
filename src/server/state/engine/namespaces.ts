/**
 * The SQLite side of namespaces (structs/namespace.ts): the `namespaces` table's migration, its
 * statements, and the guarantee that `default` is always stored. One row per namespace, keyed by
 * name, the record as JSON.
 */
import type Database from "better-sqlite3";
import { DEFAULT_NAMESPACE, defaultNamespace, type Namespace } from "../../../structs/namespace.js";

/** The tables whose rows name a namespace: a store upgraded to namespaces gets a record for each. */
const NAMESPACED = ["jobs", "allocs", "volumes", "evals", "volume_intents", "deployments"];

/**
 * The index the records written outside a StateStore transaction (the migration, the open-time
 * repair) are stamped with: the store's current one, which they do not move, so a store that was
 * empty still starts at index 0 and its first write is index 1. They are as old as the store.
 */
function currentIndex(db: Database.Database): number {
  const meta = db.prepare("SELECT value FROM meta WHERE key = 'index'").get() as
    { value: number } | undefined;
  return meta?.value ?? 0;
}

/**
 * The migration that makes namespaces objects: the table, `default`, and a record for every
 * namespace a stored job, alloc, volume, eval, create intent or deployment already names, so an
 * upgraded cluster keeps writing where it wrote before (those names passed berth's ID rule, which
 * is why the records are not re-validated here).
 */
export function migrateNamespaces(db: Database.Database): void {
  db.exec("CREATE TABLE namespaces (name TEXT PRIMARY KEY, json TEXT NOT NULL)");
  const names = new Set<string>([DEFAULT_NAMESPACE]);
  for (const t of NAMESPACED) {
    for (const r of db.prepare(`SELECT DISTINCT namespace FROM ${t}`).all() as { namespace: unknown }[]) {
      if (typeof r.namespace === "string" && r.namespace !== "") names.add(r.namespace);
    }
  }
  const idx = currentIndex(db);
  const put = db.prepare("INSERT INTO namespaces (name, json) VALUES (?, ?)");
  for (const name of [...names].sort()) {
    const base = defaultNamespace(idx);
    const rec: Namespace = name === DEFAULT_NAMESPACE ? base : { ...base, Name: name, Description: "" };
    put.run(name, JSON.stringify(rec));
  }
}

/**
 * Stores `default` again when it is missing (its record was quarantined as unreadable when the
 * store opened): `default` always exists. Runs once at open, after the quarantine pass.
 */
export function ensureDefaultNamespace(db: Database.Database): void {
  if (db.prepare("SELECT 1 FROM namespaces WHERE name = ?").get(DEFAULT_NAMESPACE)) return;
  db.prepare("INSERT INTO namespaces (name, json) VALUES (?, ?)").run(
    DEFAULT_NAMESPACE,
    JSON.stringify(defaultNamespace(currentIndex(db))),
  );
}

export function prepareNamespaceStatements(db: Database.Database) {
  return {
    get: db.prepare("SELECT json FROM namespaces WHERE name = ?"),
    list: db.prepare("SELECT json FROM namespaces ORDER BY name"),
    put: db.prepare(
      "INSERT INTO namespaces (name, json) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET json = excluded.json",
    ),
    del: db.prepare("DELETE FROM namespaces WHERE name = ?"),
  };
}

export type NamespaceStatements = ReturnType<typeof prepareNamespaceStatements>;
