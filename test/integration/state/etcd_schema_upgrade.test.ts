/**
 * Issue 32: an upgrade of servers whose state is on etcd, across a schema change. The state in a
 * real etcd is laid out as a server at schema 12 left it (before allocs were stored apart from
 * their jobs): built by a current store, copied into a file migrated only to 12 (old_state.ts), and
 * written as etcd's snapshot. A server of this release then starts on it:
 * - while a server of the older release is registered (its lease alive), it waits and says why;
 * - once that server is gone, it migrates the state in etcd and serves it: the job, the node and the
 *   alloc (with its job) read back, etcd's snapshot now has this release's schema;
 * - a second server of this release starts on the migrated state without migrating again.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { createLogger, nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { migrate, SCHEMA_VERSION } from "../../../src/server/state/engine/schema.js";
import { createEtcdClient } from "../../../src/server/state/etcd/client.js";
import { EtcdLog } from "../../../src/server/state/etcd/log.js";
import { ReplicaRows } from "../../../src/server/state/etcd/rows.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { TABLES } from "../../../src/server/state/tables.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { eventually } from "../../helpers/agent_process.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { writeOldStateFile } from "../../builders/old_state.js";

const OLD_SCHEMA = 12;
const PREFIX = "/upgrade";

/** Table → its columns at schema `version` (a fresh database migrated that far). */
function columnsAt(version: number): Record<string, string> {
  const db = new Database(":memory:");
  try {
    migrate(db, version);
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all() as string[];
    return Object.fromEntries(
      tables.map((t) => [
        t,
        (db.prepare(`PRAGMA table_info("${t}")`).all() as { name: string }[]).map((c) => c.name).join(", "),
      ]),
    );
  } finally {
    db.close();
  }
}

/** A state file at OLD_SCHEMA holding a node, a job and a running alloc of it. */
async function oldStateFile(dir: string): Promise<string> {
  const current = path.join(dir, "current");
  const old = path.join(dir, "old");
  fs.mkdirSync(current);
  fs.mkdirSync(old);
  const store = new SqliteStateStore(current);
  const job = await store.txn((tx) => tx.putJob(plainJob("web")));
  await store.txn((tx) => tx.putNode(makeNode("n1")));
  await store.txn((tx) => tx.putAlloc(allocOf(job, "n1", { ID: "alloc-web-1" })));
  store.close();
  // `default`, the only namespace, is made by the migrations themselves.
  const { namespaces: _made, ...columns } = columnsAt(OLD_SCHEMA);
  writeOldStateFile(current, old, OLD_SCHEMA, columns);
  return path.join(old, "state.db");
}

/** Writes the file's rows as etcd's state (snapshot + one entry), as that older server left it. */
async function seedEtcd(endpoint: string, file: string): Promise<void> {
  const db = new Database(file);
  const client = createEtcdClient([endpoint], 5_000);
  try {
    assert.equal(db.pragma("user_version", { simple: true }), OLD_SCHEMA);
    const index = db.prepare("SELECT value FROM meta WHERE key = 'index'").pluck().get() as number;
    const dump = new ReplicaRows(db).dump();
    const entry = {
      schema: OLD_SCHEMA,
      id: "seed",
      txns: [{ i: index + 1, ops: [], tt: [...TABLES], k: [] }],
    };
    assert.ok(await new EtcdLog(client, PREFIX, 1024 * 1024).restoreState(dump, entry, 0, undefined, "0"));
  } finally {
    db.close();
    client.close();
  }
}

test(
  "etcd: a server of this release migrates an older release's state once the old servers are gone",
  { skip: !etcdAvailable() && "no etcd" },
  async (t) => {
    const dir = fs.mkdtempSync(path.join(tmpdir(), "berth-etcdupgrade-"));
    const etcd: EtcdServer = await startEtcd();
    const servers: Server[] = [];
    t.after(async () => {
      for (const s of servers) await s.stop();
      await etcd.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    await seedEtcd(etcd.endpoint, await oldStateFile(dir));

    // A server of the older release is still up: registered under ha/servers with a live lease.
    const client = createEtcdClient([etcd.endpoint], 5_000);
    t.after(() => client.close());
    const lease = client.lease(30, { autoKeepAlive: true });
    await lease.put(`${PREFIX}/ha/servers/old-server-1`).value("{}");

    const lines: string[] = [];
    const log = createLogger({ level: "info", sink: { write: (l) => lines.push(l) } });
    const server = (name: string, logger = nullLogger) => {
      const s = new Server({
        dataDir: path.join(dir, name),
        httpAddr: "127.0.0.1:0",
        log: logger,
        heartbeatTtlMs: 300_000,
        etcd: { endpoints: [etcd.endpoint], prefix: PREFIX },
        member: { name, leaseTtlSec: 2 },
      });
      servers.push(s);
      return s;
    };
    const a = server("a", log);
    let started = false;
    const starting = a.start().then(() => (started = true));
    await eventually("the new server to wait for the old one", async () =>
      lines.some((l) => /waiting for the servers of the older release to stop .*old-server-1/.test(l))
        ? true
        : undefined,
    );
    assert.equal(started, false, "nothing is served while an older server runs");
    assert.ok(
      lines.some((l) => l.includes(`schema version ${OLD_SCHEMA} and this server's is ${SCHEMA_VERSION}`)),
      "the log names both schema versions",
    );

    // The operator stops the old server (its lease ends): the new one migrates and serves.
    await lease.revoke();
    await starting;
    assert.ok(lines.some((l) => l.includes(`migrated the state in etcd from schema version ${OLD_SCHEMA}`)));
    const { pointer } = await new EtcdLog(client, PREFIX, 1024 * 1024).readSnapPointer();
    assert.equal(pointer?.schema, SCHEMA_VERSION, "etcd's state has this release's schema");

    const get = async <T>(s: Server, p: string): Promise<T> => {
      const res = await fetch(`${s.httpAddress}${p}`);
      assert.equal(res.status, 200, `GET ${p}`);
      return (await res.json()) as T;
    };
    const check = async (s: Server) => {
      assert.equal((await get<{ ID: string }>(s, "/v1/job/web")).ID, "web");
      const alloc = await get<{ ID: string; NodeID: string; Job: { ID: string } }>(
        s,
        "/v1/allocation/alloc-web-1",
      );
      assert.equal(alloc.NodeID, "n1");
      assert.equal(alloc.Job.ID, "web", "the alloc's job came through the split into alloc_jobs");
      assert.equal((await get<{ ID: string }>(s, "/v1/node/n1")).ID, "n1");
    };
    await check(a);

    // A second server of this release: the state is already at its schema; it just loads it.
    const linesB: string[] = [];
    const b = server("b", createLogger({ level: "info", sink: { write: (l) => linesB.push(l) } }));
    await b.start();
    assert.ok(!linesB.some((l) => l.includes("migrated the state in etcd")), "migrated once, by the first");
    await check(b);
  },
);
