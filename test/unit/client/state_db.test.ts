import assert from "node:assert/strict";
import { test } from "node:test";
import Database from "better-sqlite3";
import { StateDB } from "../../../src/client/state/state_db.js";
import { MIGRATIONS, migrate } from "../../../src/client/state/schema.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import { plugin, stub } from "../../builders/client_records.js";
import { tempDir } from "../../helpers/temp_dir.js";

const alloc = (id: string) => ({ ID: id, Name: "j.g[0]" }) as unknown as Allocation;

test("state db: file in <dataDir>/client, WAL, schema at the latest version", () => {
  const dir = tempDir();
  const db = StateDB.open(dir);
  assert.equal(db.schemaVersion(), MIGRATIONS.length);
  db.close();
  const raw = new Database(`${dir}/client/state.db`);
  assert.equal(raw.pragma("journal_mode", { simple: true }), "wal");
  raw.close();
});

test("state db: migrations apply once, in order, and a newer DB is refused", () => {
  const raw = new Database(":memory:");
  const applied: number[] = [];
  const steps = [() => applied.push(1), () => applied.push(2)];
  assert.equal(migrate(raw, steps.slice(0, 1)), 1);
  assert.equal(migrate(raw, steps), 2);
  assert.equal(migrate(raw, steps), 2);
  assert.deepEqual(applied, [1, 2]);
  assert.throws(() => migrate(raw, steps.slice(0, 1)), /newer than this agent/);
});

test("state db: everything survives a reopen; writes are idempotent upserts", () => {
  const dir = tempDir();
  let db = StateDB.open(dir);
  db.putAlloc(alloc("a1"));
  db.putAlloc(alloc("a1"));
  db.putAllocClientUpdate({ ID: "a1", ClientStatus: "running", ClientDescription: "", TaskStates: {} });
  db.putTaskHandle("a1", "web", { driver: "exec", pid: 42, startedAt: 1, state: {} });
  db.putVolumeStubs("a1", { data: stub() });
  db.putVolumeStubs("a1", { data: stub({ targetPath: "/t2" }) });
  db.putDynamicPlugin(plugin());
  db.putPendingRelease("a1", "data", { stub: stub(), unmounted: false });
  db.close();

  db = StateDB.open(dir);
  assert.equal(db.listAllocs().length, 1);
  assert.equal(db.getAlloc("a1")?.clientUpdate?.ClientStatus, "running");
  assert.equal(db.getTaskHandle("a1", "web")?.pid, 42);
  assert.equal(db.getVolumeStubs("a1").data?.targetPath, "/t2");
  assert.deepEqual(
    db.listAllVolumeStubs().map((s) => [s.allocId, s.alias]),
    [["a1", "data"]],
  );
  assert.deepEqual(db.listDynamicPlugins(), [plugin()]);
  assert.deepEqual(db.listAllocsWithPendingReleases(), ["a1"]);

  db.completeRelease("a1", "data");
  assert.deepEqual(db.getVolumeStubs("a1"), {});
  assert.deepEqual(db.getPendingReleases("a1"), {});
  db.completeRelease("a1", "data");
  db.deleteDynamicPlugin("csi-node", "fake");
  assert.deepEqual(db.listDynamicPlugins(), []);
  db.deleteAlloc("a1");
  assert.equal(db.getAlloc("a1"), undefined);
  assert.equal(db.getTaskHandle("a1", "web"), undefined);
  db.close();
});

test("state db: stubs in use leave out those whose release already unmounted them", () => {
  const db = StateDB.open(":memory:");
  db.putVolumeStubs("a1", { data: stub({ targetPath: "/a1" }) });
  db.putVolumeStubs("a2", { data: stub({ targetPath: "/a2" }) });
  db.putVolumeStubs("a3", { data: stub({ targetPath: "/a3" }) });
  db.putPendingRelease("a2", "data", { stub: stub(), unmounted: false });
  db.putPendingRelease("a3", "data", { stub: stub(), unmounted: true });
  assert.deepEqual(
    db.listVolumeStubsInUse().map((s) => [s.allocId, s.stub.targetPath]),
    [
      ["a1", "/a1"],
      ["a2", "/a2"],
    ],
  );
  db.close();
});

test("state db: a client update for an unknown alloc is ignored", () => {
  const db = StateDB.open(":memory:");
  db.putAllocClientUpdate({ ID: "nope", ClientStatus: "running", ClientDescription: "", TaskStates: {} });
  assert.equal(db.getAlloc("nope"), undefined);
  db.close();
});
