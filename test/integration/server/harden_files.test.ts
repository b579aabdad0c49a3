/**
 * Files at rest, through the real wiring: a `-server` agent started in process on a data dir an
 * older berth left open (0755 dirs, 0644 state files) and the client's state DB. After start the
 * data dir is 0711 (traversable for a task's user, not listable), the server and client state dirs
 * and the keystore 0700, every SQLite file (-wal, -shm too) and the key 0600.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Agent } from "../../../src/agent/agent.js";
import { parseAgentArgs } from "../../../src/agent/options.js";
import { nullLogger } from "../../../src/internal/log.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import { tempDir } from "../../helpers/temp_dir.js";

const mode = (p: string) => fs.statSync(p).mode & 0o777;

function openUp(dir: string): void {
  fs.chmodSync(dir, 0o755);
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) openUp(p);
    else fs.chmodSync(p, 0o644);
  }
}

function assertSqliteFilesPrivate(dir: string): void {
  const files = fs.readdirSync(dir).filter((f) => f.startsWith("state.db"));
  assert.ok(files.includes("state.db"), `state.db in ${dir}`);
  for (const f of files) assert.equal(mode(path.join(dir, f)), 0o600, `${dir}/${f}`);
}

test("a server agent's data dir, state dir, keystore and state files are private, tightened at start", async () => {
  const dataDir = path.join(tempDir("berth-harden-files-"), "data");
  const opts = parseAgentArgs(["-server", "-data-dir", dataDir, "-http-addr", "127.0.0.1:0"]);
  const first = new Agent(opts, nullLogger);
  await first.start();
  await first.stop();
  openUp(dataDir);
  assert.equal(mode(path.join(dataDir, "server", "state.db")), 0o644, "opened up as an older berth left it");

  const agent = new Agent(opts, nullLogger);
  await agent.start();
  try {
    assert.equal(mode(dataDir), 0o711);
    const serverDir = path.join(dataDir, "server");
    assert.equal(mode(serverDir), 0o700);
    assertSqliteFilesPrivate(serverDir);
    const keystore = path.join(serverDir, "keystore");
    assert.equal(mode(keystore), 0o700);
    for (const k of fs.readdirSync(keystore)) assert.equal(mode(path.join(keystore, k)), 0o600, k);
  } finally {
    await agent.stop();
  }
});

test("the client's state dir and DB are private when made and tightened when an older berth left them open", () => {
  const dataDir = tempDir("berth-harden-client-");
  const db = StateDB.open(dataDir);
  const clientDir = path.join(dataDir, "client");
  try {
    assert.equal(mode(clientDir), 0o700);
    assertSqliteFilesPrivate(clientDir);
  } finally {
    db.close();
  }
  openUp(clientDir);
  const again = StateDB.open(dataDir);
  try {
    assert.equal(mode(clientDir), 0o700);
    assertSqliteFilesPrivate(clientDir);
  } finally {
    again.close();
  }
});
