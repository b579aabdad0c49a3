/**
 * Issue 30: a volume's mount flags (`mount_options { mount_flags }`, which may carry credentials:
 * Nomad redacts them from every answer) are sealed at rest with its secrets (secrets_at_rest.ts):
 * absent from the state file's bytes, read back whole after a reopen, with or without secrets
 * beside them; flags an older berth stored in the clear are sealed at open.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { makeVolume } from "../../builders/volume.js";
import { tempDir } from "../../helpers/temp_dir.js";

const FLAG = "password=flag-s3cret-41d0";

function stateBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  for (const name of fs.readdirSync(dir)) {
    const p = path.join(dir, name);
    if (fs.statSync(p).isFile()) parts.push(fs.readFileSync(p));
  }
  return Buffer.concat(parts);
}

const mount = { FSType: "ext4", MountFlags: ["noatime", FLAG] };

test("mount flags are sealed at rest and read back whole, with or without secrets", async () => {
  const dir = tempDir("berth-at-rest-flags-");
  let store = new SqliteStateStore(dir);
  try {
    await store.txn((tx) => {
      tx.putVolume(makeVolume("flags", { MountOptions: mount }));
      tx.putVolume(makeVolume("both", { MountOptions: mount, Secrets: { user: "u1" } }));
      tx.putVolume(makeVolume("later"));
    });
    // A stored volume without secrets or flags that gains flags (the store's fast path for such
    // volumes must not write them in the clear).
    await store.txn((tx) => tx.putVolume(makeVolume("later", { MountOptions: mount })));
    assert.deepEqual(store.getVolume("default", "later")?.MountOptions, mount);
    assert.deepEqual(store.getVolume("default", "flags")?.MountOptions, mount);
  } finally {
    store.close();
  }
  assert.equal(stateBytes(dir).includes(FLAG), false, "mount flag not in the state files");
  assert.equal(stateBytes(dir).includes("noatime"), false, "every flag is sealed");

  store = new SqliteStateStore(dir);
  try {
    const flags = store.getVolume("default", "flags")!;
    assert.deepEqual(flags.MountOptions, mount);
    assert.equal(flags.Secrets ?? null, null, "no secrets appear where there were none");
    const both = store.listVolumes().find((v) => v.ID === "both")!;
    assert.deepEqual(both.MountOptions, mount);
    assert.deepEqual(both.Secrets, { user: "u1" });
    assert.deepEqual(store.getVolume("default", "later")?.MountOptions, mount);
    assert.deepEqual(store.quarantined(), []);
  } finally {
    store.close();
  }
});

test("clear mount flags stored by an older berth are sealed at open", async () => {
  const dir = tempDir("berth-at-rest-flags-old-");
  const store = new SqliteStateStore(dir);
  try {
    await store.txn((tx) => tx.putVolume(makeVolume("old", { Secrets: { user: "u1" } })));
  } finally {
    store.close();
  }
  // As an older berth left it: the secrets sealed, the flags in the clear.
  const db = new Database(path.join(dir, "state.db"));
  try {
    const row = db.prepare("SELECT json FROM volumes WHERE id = 'old'").get() as { json: string };
    const rec = JSON.parse(row.json) as Record<string, unknown>;
    db.prepare("UPDATE volumes SET json = ? WHERE id = 'old'").run(
      JSON.stringify({ ...rec, MountOptions: mount }),
    );
  } finally {
    db.close();
  }
  const again = new SqliteStateStore(dir);
  try {
    assert.deepEqual(again.getVolume("default", "old")?.MountOptions, mount);
    assert.deepEqual(again.getVolume("default", "old")?.Secrets, { user: "u1" });
  } finally {
    again.close();
  }
  const raw = new Database(path.join(dir, "state.db"), { readonly: true });
  try {
    const json = (raw.prepare("SELECT json FROM volumes WHERE id = 'old'").get() as { json: string }).json;
    assert.equal(json.includes(FLAG), false, "the clear flag was sealed at open");
  } finally {
    raw.close();
  }
});
