/**
 * A downgrade is refused: a state file whose schema version is past this release's (written by a
 * later berth) does not open, with an error that says so, and the file is left as it was.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";

test("a state DB written by a later release is refused, unchanged", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-schema-newer-"));
  try {
    new SqliteStateStore(dir).close();
    const file = path.join(dir, "state.db");
    const db = new Database(file);
    const latest = db.pragma("user_version", { simple: true }) as number;
    db.pragma(`user_version = ${latest + 1}`);
    db.close();
    const before = readFileSync(file);
    assert.throws(
      () => new SqliteStateStore(dir),
      (err: Error) =>
        err.message.includes(`schema version ${latest + 1}, newer than this berth understands (${latest})`) &&
        err.message.includes("later release"),
    );
    assert.deepEqual(readFileSync(file), before, "the file is left as it was");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
