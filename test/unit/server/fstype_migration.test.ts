/**
 * Mount options' file-system field was stored as `FsType`; Nomad's name is `FSType`. A migration
 * of each state DB (the client's last) renames it in stored records, so old volumes, jobs and allocs keep
 * their file system.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import Database from "better-sqlite3";
import { migrate as migrateServer } from "../../../src/server/state/engine/schema.js";
import {
  MIGRATIONS as CLIENT_MIGRATIONS,
  migrate as migrateClient,
} from "../../../src/client/state/schema.js";

const OLD = JSON.stringify({ ID: "v", MountOptions: { FsType: "ext4", MountFlags: [] } });

test("server state: FsType in stored volumes, jobs and allocs becomes FSType", () => {
  // The schema version just before the rename (migrations appended after it must not move it).
  const beforeRename = 6;
  const fresh = new Database(":memory:");
  migrateServer(fresh, beforeRename);
  fresh
    .prepare("INSERT INTO volumes (namespace, id, plugin_id, json) VALUES ('default', 'v', 'p', ?)")
    .run(OLD);
  fresh.prepare("INSERT INTO jobs (namespace, id, json) VALUES ('default', 'j', ?)").run(OLD);
  fresh
    .prepare("INSERT INTO allocs (id, namespace, node_id, job_id, json) VALUES ('a', 'default', 'n', 'j', ?)")
    .run(OLD);
  migrateServer(fresh);
  for (const table of ["volumes", "jobs", "allocs"]) {
    const { json } = fresh.prepare(`SELECT json FROM ${table}`).get() as { json: string };
    assert.deepEqual(JSON.parse(json).MountOptions, { FSType: "ext4", MountFlags: [] }, table);
  }
});

test("client state: FsType in stored allocs, volume stubs and pending releases becomes FSType", () => {
  const db = new Database(":memory:");
  // The migrations just before the rename (the second one; those appended after it must not move it).
  migrateClient(db, CLIENT_MIGRATIONS.slice(0, 1));
  db.prepare("INSERT INTO allocs (alloc_id, alloc_json) VALUES ('a', ?)").run(OLD);
  db.prepare("INSERT INTO csi_volume_stubs (alloc_id, alias, stub_json) VALUES ('a', 'x', ?)").run(OLD);
  db.prepare("INSERT INTO pending_releases (alloc_id, alias, release_json) VALUES ('a', 'x', ?)").run(OLD);
  migrateClient(db);
  for (const [table, col] of [
    ["allocs", "alloc_json"],
    ["csi_volume_stubs", "stub_json"],
    ["pending_releases", "release_json"],
  ] as const) {
    const row = db.prepare(`SELECT ${col} AS json FROM ${table}`).get() as { json: string };
    assert.deepEqual(JSON.parse(row.json).MountOptions, { FSType: "ext4", MountFlags: [] }, table);
  }
});
