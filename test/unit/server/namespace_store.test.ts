/**
 * The namespaces table of the SQLite store: `default` exists in a fresh store without moving its
 * index, namespace writes are stamped and watched like any table, a store upgraded from before
 * namespaces gets a record for every namespace its rows name, and a `default` record that cannot
 * be loaded is quarantined and stored again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { migrate } from "../../../src/server/state/engine/schema.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { validateNamespace } from "../../../src/structs/namespace.js";
import { plainJob } from "../../builders/job.js";
import { makeVolume } from "../../builders/volume.js";

/** The schema version just before the namespaces migration. */
const BEFORE_NAMESPACES = 8;

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-ns-store-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("a fresh store has `default` at index 0; namespace writes are stamped, watched and skipped when unchanged", async () => {
  const s = new SqliteStateStore(null);
  try {
    assert.equal(s.index(), 0);
    assert.equal(s.tableIndex("namespaces"), 0);
    assert.deepEqual(s.listNamespaces(), [
      {
        Name: "default",
        Description: "Default shared namespace",
        Quota: "",
        Capabilities: null,
        Meta: {},
        CreateIndex: 0,
        ModifyIndex: 0,
      },
    ]);
    const woke = s.waitFor(["namespaces"], 0, undefined, 30_000);
    const a = await s.txn((tx) => tx.putNamespace(validateNamespace({ Name: "a", Description: "x" })));
    assert.equal(await woke, 1);
    assert.deepEqual([a.CreateIndex, a.ModifyIndex, s.tableIndex("namespaces")], [1, 1, 1]);
    await s.txn((tx) => tx.putNamespace(validateNamespace({ Name: "a", Description: "x" })));
    assert.equal(s.index(), 1, "an unchanged put writes nothing");
    const a2 = await s.txn((tx) => tx.putNamespace(validateNamespace({ Name: "a", Description: "y" })));
    assert.deepEqual([a2.CreateIndex, a2.ModifyIndex], [1, 2]);
    assert.deepEqual(
      s.listNamespaces().map((n) => n.Name),
      ["a", "default"],
    );
    await s.txn((tx) => tx.deleteNamespace("a"));
    assert.equal(s.getNamespace("a"), undefined);
    assert.equal(s.tableIndex("namespaces"), 3);
    await s.txn((tx) => tx.deleteNamespace("a"));
    assert.equal(s.index(), 3, "deleting nothing writes nothing");
  } finally {
    s.close();
  }
});

test("upgrading a store from before namespaces records every namespace its rows name", async (t) => {
  const dir = tempDir(t);
  const db = new Database(path.join(dir, "state.db"));
  migrate(db, BEFORE_NAMESPACES);
  db.prepare("INSERT INTO meta (key, value) VALUES ('index', 7)").run();
  const job = { ...plainJob("web"), Namespace: "prod", CreateIndex: 3, ModifyIndex: 3 };
  db.prepare("INSERT INTO jobs (namespace, id, json) VALUES (?, ?, ?)").run(
    "prod",
    "web",
    JSON.stringify(job),
  );
  const vol = { ...makeVolume("v1"), Namespace: "team_b.x", CreateIndex: 4, ModifyIndex: 4 };
  db.prepare("INSERT INTO volumes (namespace, id, plugin_id, json) VALUES (?, ?, ?, ?)").run(
    "team_b.x",
    "v1",
    "p1",
    JSON.stringify(vol),
  );
  db.close();

  const s = new SqliteStateStore(dir);
  try {
    assert.deepEqual(s.quarantined(), []);
    assert.deepEqual(
      s.listNamespaces().map((n) => [n.Name, n.CreateIndex, n.ModifyIndex]),
      [
        ["default", 7, 7],
        ["prod", 7, 7],
        // A name berth's ID rule allowed before, outside Nomad's pattern: kept, so its volume stays reachable.
        ["team_b.x", 7, 7],
      ],
    );
    assert.equal(s.index(), 7, "the migration does not move the index");
    assert.equal(s.getJob("prod", "web")?.ID, "web");
  } finally {
    s.close();
  }
});

test("a `default` record that cannot be loaded is quarantined and stored again", async (t) => {
  const dir = tempDir(t);
  new SqliteStateStore(dir).close();
  const db = new Database(path.join(dir, "state.db"));
  db.prepare("UPDATE namespaces SET json = ? WHERE name = 'default'").run('{"Name": "default", "Meta": 5');
  db.close();

  const s = new SqliteStateStore(dir);
  try {
    assert.deepEqual(
      s.quarantined().map((q) => [q.table, q.key]),
      [["namespaces", "default"]],
    );
    assert.equal(s.getNamespace("default")?.Description, "Default shared namespace");
  } finally {
    s.close();
  }
});
