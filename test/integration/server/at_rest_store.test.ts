/**
 * Secrets at rest in the real SQLite store (secrets_at_rest.ts, keyring.ts), on real files: a
 * volume's and a create intent's secrets never appear in the state file's bytes (database, WAL,
 * shared memory) yet read back whole after a reopen; the keyring lives in `<dir>/keystore/` (0700,
 * key 0600), the state dir is 0700 and its files 0600 (tightened when an older berth left them
 * open); clear secrets an older berth stored are sealed at open; a missing, foreign or altered key
 * is a startup error naming the keystore, never a volume silently without its secrets.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { intentOf } from "../../../src/structs/volume_intent.js";
import { makeVolume } from "../../builders/volume.js";
import { tempDir } from "../../helpers/temp_dir.js";

const SECRET = "at-rest-s3cret-9f2c";
const INTENT_SECRET = "intent-s3cret-77ab";

/** Every byte of every file below `dir` (the keystore excepted: it holds the key, not secrets). */
function stateBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  for (const name of fs.readdirSync(dir)) {
    const p = path.join(dir, name);
    if (fs.statSync(p).isFile()) parts.push(fs.readFileSync(p));
  }
  return Buffer.concat(parts);
}

const mode = (p: string) => fs.statSync(p).mode & 0o777;

async function storeWithSecrets(dir: string): Promise<void> {
  const store = new SqliteStateStore(dir);
  try {
    await store.txn((tx) => {
      tx.putVolume(makeVolume("vol1", { Secrets: { password: SECRET, user: "admin" } }));
      tx.putVolume(makeVolume("plain"));
      tx.putVolumeIntent(intentOf(makeVolume("vol2", { Secrets: { token: INTENT_SECRET } }), Date.now()));
    });
    // Read back inside the same process: the rest of the server sees them in the clear.
    assert.deepEqual(store.getVolume("default", "vol1")?.Secrets, { password: SECRET, user: "admin" });
  } finally {
    store.close();
  }
}

test("secrets are absent from the state file's bytes and read back whole after a reopen", async () => {
  const dir = tempDir("berth-at-rest-");
  await storeWithSecrets(dir);
  const bytes = stateBytes(dir);
  assert.ok(bytes.length > 0);
  assert.equal(bytes.includes(SECRET), false, "volume secret not in the state files");
  assert.equal(bytes.includes(INTENT_SECRET), false, "intent secret not in the state files");
  assert.equal(bytes.includes("admin"), false, "every value of the map is sealed");

  const keystore = path.join(dir, "keystore");
  const keys = fs.readdirSync(keystore);
  assert.equal(keys.length, 1);
  assert.equal(mode(keystore), 0o700);
  assert.equal(mode(path.join(keystore, keys[0]!)), 0o600);
  assert.equal(mode(dir), 0o700);
  assert.equal(mode(path.join(dir, "state.db")), 0o600);

  const store = new SqliteStateStore(dir);
  try {
    assert.deepEqual(store.getVolume("default", "vol1")?.Secrets, { password: SECRET, user: "admin" });
    assert.deepEqual(store.listVolumes().find((v) => v.ID === "vol1")?.Secrets, {
      password: SECRET,
      user: "admin",
    });
    assert.equal(store.getVolume("default", "plain")?.Secrets ?? null, null);
    assert.deepEqual(store.getVolumeIntent("default", "vol2")?.Spec.Secrets, { token: INTENT_SECRET });
    assert.deepEqual(store.quarantined(), [], "sealed records pass the open-time check");
  } finally {
    store.close();
  }
});

test("an older berth's open state (0755 dir, 0644 files, secrets in the clear) is tightened and sealed at open", async () => {
  const dir = tempDir("berth-at-rest-old-");
  // A state as an older berth left it: written by the store, then its secret put back in the
  // clear, the keystore gone (it had none) and the modes opened up.
  await storeWithSecrets(dir);
  fs.rmSync(path.join(dir, "keystore"), { recursive: true });
  const db = new Database(path.join(dir, "state.db"));
  const clear = JSON.stringify(makeVolume("vol1", { Secrets: { password: SECRET } }));
  db.prepare("UPDATE volumes SET json = ? WHERE id = 'vol1'").run(clear);
  db.prepare("DELETE FROM volume_intents").run();
  db.close();
  assert.equal(stateBytes(dir).includes(SECRET), true, "the old state holds the secret in the clear");
  fs.chmodSync(dir, 0o755);
  for (const f of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, f), 0o644);

  const store = new SqliteStateStore(dir);
  try {
    assert.deepEqual(store.getVolume("default", "vol1")?.Secrets, { password: SECRET });
    assert.equal(mode(dir), 0o700);
    for (const f of ["state.db", "state.db-wal", "state.db-shm"]) {
      if (fs.existsSync(path.join(dir, f))) assert.equal(mode(path.join(dir, f)), 0o600, f);
    }
  } finally {
    store.close();
  }
  // Checkpointed by the close: the clear copy is gone from every file.
  assert.equal(stateBytes(dir).includes(SECRET), false, "sealed at open");
});

test("a missing, foreign or altered key is a startup error naming the keystore; the secrets stay sealed", async () => {
  const dir = tempDir("berth-at-rest-key-");
  await storeWithSecrets(dir);
  const keystore = path.join(dir, "keystore");
  const saved = tempDir("berth-at-rest-saved-");
  fs.cpSync(keystore, saved, { recursive: true });

  fs.rmSync(keystore, { recursive: true });
  assert.throws(
    () => new SqliteStateStore(dir),
    (err: Error) =>
      /holds 2 sealed secret set\(s\) but the keystore .*keystore holds no key/.test(err.message) &&
      (err as { code?: string }).code === "ERR_VALIDATION",
  );
  assert.equal(fs.existsSync(keystore), false, "no new key is made over sealed secrets");

  // Another server's key.
  const other = tempDir("berth-at-rest-other-");
  new SqliteStateStore(other).close();
  fs.cpSync(path.join(other, "keystore"), keystore, { recursive: true });
  assert.throws(
    () => new SqliteStateStore(dir),
    /sealed with key [0-9a-f-]+, which the keystore .* does not hold/,
  );

  // The right key file, its bytes altered.
  fs.rmSync(keystore, { recursive: true });
  fs.cpSync(saved, keystore, { recursive: true });
  const file = path.join(keystore, fs.readdirSync(keystore)[0]!);
  const k = JSON.parse(fs.readFileSync(file, "utf8")) as { Key: string };
  const raw = Buffer.from(k.Key, "base64");
  raw[0] = raw[0]! ^ 0xff;
  fs.writeFileSync(file, JSON.stringify({ ...k, Key: raw.toString("base64") }));
  assert.throws(
    () => new SqliteStateStore(dir),
    /do not open with key .* \(the key file does not match this state/,
  );

  // The saved keystore back: everything opens.
  fs.rmSync(keystore, { recursive: true });
  fs.cpSync(saved, keystore, { recursive: true });
  const store = new SqliteStateStore(dir);
  try {
    assert.deepEqual(store.getVolume("default", "vol1")?.Secrets, { password: SECRET, user: "admin" });
  } finally {
    store.close();
  }
});
