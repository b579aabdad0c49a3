/**
 * Orphans of interrupted creates, one layer at a time: which intents are orphans (decide.ts, pure),
 * what the API shows of one (never the spec's secrets), and the intents' store table (durable
 * across a reopen, its own table index, a throwing txn writes none).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { orphanIntents, orphanView, unrecordedStorage } from "../../../src/server/orphans/decide.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { intentOf } from "../../../src/structs/volume_intent.js";
import { makeVolume } from "../../builders/volume.js";

const intent = (id: string, over: { PluginID?: string; Name?: string } = {}) =>
  intentOf(makeVolume(id, { PluginID: "p1", Secrets: { token: "s3cret" }, ...over }), 1_700_000_000_000);

test("orphanIntents: every intent not in flight, whatever is recorded under its ID", () => {
  const intents = [intent("busy"), intent("lost"), intent("lost", { PluginID: "p2" })];
  assert.deepEqual(
    orphanIntents(intents, (_ns, id) => id === "busy").map((i) => `${i.ID}@${i.PluginID}`),
    ["lost@p1", "lost@p2"],
  );
});

test("unrecordedStorage: listed IDs no berth volume holds, once each, sorted", () => {
  const recorded = [makeVolume("a", { ExternalID: "ext-a" })];
  assert.deepEqual(unrecordedStorage(["ext-c", "ext-a", "ext-b", "ext-c"], recorded), ["ext-b", "ext-c"]);
  assert.deepEqual(unrecordedStorage([], recorded), []);
});

test("orphanView: names and the plugin's listing, never the spec or its secrets", () => {
  const view = orphanView(intent("lost"), { unrecorded: null, error: "plugin does not support ListVolumes" });
  assert.deepEqual(Object.keys(view).sort(), [
    "CreateIndex",
    "CreateTime",
    "ID",
    "ListError",
    "ModifyIndex",
    "Name",
    "Namespace",
    "PluginID",
    "UnrecordedStorage",
  ]);
  assert.ok(!JSON.stringify(view).includes("s3cret"));
  assert.equal(view.CreateTime, 1_700_000_000_000 * 1_000_000, "Unix nanoseconds");
});

test("store: intents are durable, move only their own table index, and a throwing txn writes none", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-intents-"));
  try {
    let s = new SqliteStateStore(dir);
    const put = await s.txn((tx) => tx.putVolumeIntent(intent("a")));
    assert.deepEqual([put.CreateIndex, put.ModifyIndex], [1, 1]);
    assert.equal(s.tableIndex("intents"), 1);
    assert.equal(s.tableIndex("volumes"), 0);
    await assert.rejects(
      s.txn((tx) => {
        tx.putVolumeIntent(intent("b"));
        throw new Error("refused");
      }),
    );
    s.close();
    s = new SqliteStateStore(dir);
    assert.deepEqual(
      s.listVolumeIntents().map((i) => [i.ID, i.Spec.Secrets]),
      [["a", { token: "s3cret" }]],
      "kept across a reopen, spec included (adopt repeats it)",
    );
    await s.txn((tx) => tx.deleteVolumeIntent("default", "a"));
    assert.equal(s.getVolumeIntent("default", "a"), undefined);
    assert.equal(s.tableIndex("intents"), 2);
    await s.txn((tx) => tx.deleteVolumeIntent("default", "a"));
    assert.equal(s.index(), 2, "deleting nothing writes nothing");
    s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
