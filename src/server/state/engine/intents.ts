/**
 * The SQLite statements of volume create intents (structs/volume_intent.ts), kept apart from the
 * other tables' statements: one table keyed by namespace + volume ID, JSON records.
 */
import type Database from "better-sqlite3";

export function prepareIntentStatements(db: Database.Database) {
  return {
    get: db.prepare("SELECT json FROM volume_intents WHERE namespace = ? AND id = ?"),
    list: db.prepare("SELECT json FROM volume_intents ORDER BY namespace, id"),
    put: db.prepare(
      "INSERT INTO volume_intents (namespace, id, json) VALUES (?, ?, ?) ON CONFLICT(namespace, id) DO UPDATE SET json = excluded.json",
    ),
    del: db.prepare("DELETE FROM volume_intents WHERE namespace = ? AND id = ?"),
  };
}

export type IntentStatements = ReturnType<typeof prepareIntentStatements>;
