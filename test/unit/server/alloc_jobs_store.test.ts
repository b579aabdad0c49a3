/**
 * Allocs stored without their job (sqlite_alloc_jobs.ts): one copy per distinct job shared by the
 * allocs that carry it (the job a writer puts is frozen by the write), attached again on read as a
 * frozen object, removed with the last alloc that names it; an older state file's allocs are split
 * on open; an alloc whose copy is missing is quarantined, not served.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import { alloc, volumeJob } from "../../conformance/builders.js";

function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), "berth-alloc-jobs-"));
}

/** The rows as stored: each alloc's JSON and key, and the copies. */
function rows(dir: string): {
  allocs: { id: string; json: string; job_key: string | null }[];
  copies: number;
} {
  const db = new Database(path.join(dir, "state.db"), { readonly: true });
  try {
    return {
      allocs: db.prepare("SELECT id, json, job_key FROM allocs ORDER BY id").all() as {
        id: string;
        json: string;
        job_key: string | null;
      }[],
      copies: (db.prepare("SELECT COUNT(*) AS n FROM alloc_jobs").get() as { n: number }).n,
    };
  } finally {
    db.close();
  }
}

test("alloc jobs: allocs of one job share one stored copy, read back whole and frozen", async () => {
  const dir = tempDir();
  try {
    const s = new SqliteStateStore(dir);
    const job = await s.txn((tx) => tx.putJob(volumeJob("web", { count: 3, perAlloc: true })));
    await s.txn((tx) => {
      for (let i = 0; i < 3; i++) tx.putAlloc(alloc(`a${i}`, job, "n1", i));
    });
    // The writer's own job object is frozen by the write (its key is computed once, not per alloc).
    assert.ok(Object.isFrozen(job) && Object.isFrozen(job.TaskGroups[0]), "the job put is read-only");
    const stored = rows(dir);
    assert.equal(stored.copies, 1, "one copy for three allocs of one job version");
    assert.equal(new Set(stored.allocs.map((r) => r.job_key)).size, 1);
    for (const r of stored.allocs) assert.equal((JSON.parse(r.json) as Allocation).Job, undefined);

    const read = s.allocsByJob("default", "web");
    assert.equal(read.length, 3);
    for (const a of read) assert.deepEqual(a.Job, job);
    // The alloc's volume index still comes from its job's group (alloc_volumes).
    assert.deepEqual(
      s.allocsByVolume("default", "vol1[1]").map((a) => a.ID),
      ["a1"],
    );
    // Read-only: a reader cannot change what the next reader sees.
    const a0 = read[0]!;
    assert.throws(() => {
      a0.Job.Priority = 1;
    }, TypeError);
    assert.throws(() => {
      a0.Job.TaskGroups[0]!.Count = 9;
    }, TypeError);
    assert.equal(s.getAlloc("a0")!.Job.Priority, job.Priority);
    // The alloc itself is the reader's own.
    a0.ClientStatus = "running";
    assert.equal(s.getAlloc("a0")!.ClientStatus, "pending");
    s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("alloc jobs: a copy goes with the last alloc that names it; a no-op put writes nothing", async () => {
  const dir = tempDir();
  try {
    const s = new SqliteStateStore(dir);
    const v0 = await s.txn((tx) => tx.putJob(volumeJob("web", { count: 2 })));
    await s.txn((tx) => {
      tx.putAlloc(alloc("a0", v0, "n1", 0));
      tx.putAlloc(alloc("a1", v0, "n1", 1));
    });
    // Putting back what was read (its frozen job included) changes nothing.
    const index = s.index();
    await s.txn((tx) => tx.putAlloc(tx.getAlloc("a0")!));
    assert.equal(s.index(), index, "no-op put");

    // A node's update keeps the shared copy; an in-place update to a new job version adds one.
    await s.txn((tx) => tx.putAlloc({ ...tx.getAlloc("a0")!, ClientStatus: "running" }));
    assert.equal(rows(dir).copies, 1);
    const v1 = await s.txn((tx) => tx.putJob({ ...tx.getJob("default", "web")!, Priority: 70 }));
    await s.txn((tx) => tx.putAlloc({ ...tx.getAlloc("a0")!, Job: v1 }));
    assert.equal(rows(dir).copies, 2);
    assert.equal(s.getAlloc("a0")!.Job.Priority, 70);
    assert.equal(s.getAlloc("a1")!.Job.Priority, v0.Priority);

    await s.txn((tx) => tx.putAlloc({ ...tx.getAlloc("a1")!, Job: v1 }));
    assert.equal(rows(dir).copies, 1, "the first copy went with its last alloc");
    await s.txn((tx) => tx.deleteAlloc("a0"));
    assert.equal(rows(dir).copies, 1, "a1 still names the copy");
    await s.txn((tx) => tx.deleteAlloc("a1"));
    assert.equal(rows(dir).copies, 0);

    // A txn that fails leaves no copy behind, and a later put of the same job stores it again.
    await assert.rejects(
      s.txn((tx) => {
        tx.putAlloc(alloc("a2", v1, "n1", 0));
        throw new Error("boom");
      }),
      /boom/,
    );
    assert.equal(rows(dir).copies, 0);
    await s.txn((tx) => tx.putAlloc(alloc("a2", v1, "n1", 0)));
    assert.deepEqual(s.getAlloc("a2")!.Job, v1);
    s.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("alloc jobs: an older state file's allocs are split on open and read the same", async () => {
  const dir = tempDir();
  try {
    const s = new SqliteStateStore(dir);
    const job = await s.txn((tx) => tx.putJob(volumeJob("web", { count: 2 })));
    await s.txn((tx) => {
      tx.putAlloc(alloc("a0", job, "n1", 0, { ClientStatus: "running" }));
      tx.putAlloc(alloc("a1", job, "n2", 1));
    });
    const before = s.listAllocs();
    s.close();

    // The file as the schema before allocs' job copies left it (and so before periodic launches and
    // plugin capacities):
    // every alloc row with its job inside.
    const db = new Database(path.join(dir, "state.db"));
    try {
      const version = db.pragma("user_version", { simple: true }) as number;
      db.exec(`
        UPDATE allocs SET json = (SELECT json_set(allocs.json, '$.Job', json(j.json)) FROM alloc_jobs j WHERE j.key = allocs.job_key);
        DROP INDEX allocs_by_job_key;
        ALTER TABLE allocs DROP COLUMN job_key;
        DROP TABLE alloc_jobs;
        DROP TABLE periodic_launches;
        DROP TABLE plugin_capacity;
      `);
      db.pragma(`user_version = ${version - 3}`);
    } finally {
      db.close();
    }

    const again = new SqliteStateStore(dir);
    try {
      assert.deepEqual(again.quarantined(), []);
      assert.deepEqual(again.listAllocs(), before);
      assert.equal(again.hasLiveAllocOfJob("default", "web", job.CreateIndex), true);
      assert.equal(again.hasLiveAllocOfJob("default", "web", job.CreateIndex + 1), false);
    } finally {
      again.close();
    }
    const stored = rows(dir);
    assert.equal(stored.copies, 1);
    for (const r of stored.allocs) {
      assert.equal((JSON.parse(r.json) as Allocation).Job, undefined);
      assert.ok(r.job_key);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("alloc jobs: an alloc whose copy is missing is quarantined on open, not served", async () => {
  const dir = tempDir();
  try {
    const s = new SqliteStateStore(dir);
    const web = await s.txn((tx) => tx.putJob(volumeJob("web")));
    const api = await s.txn((tx) => tx.putJob(volumeJob("api", { source: "vol2" })));
    await s.txn((tx) => {
      tx.putAlloc(alloc("a0", web, "n1"));
      tx.putAlloc(alloc("b0", api, "n1"));
    });
    s.close();
    const db = new Database(path.join(dir, "state.db"));
    try {
      db.prepare("DELETE FROM alloc_jobs WHERE key = (SELECT job_key FROM allocs WHERE id = 'a0')").run();
    } finally {
      db.close();
    }

    const again = new SqliteStateStore(dir);
    try {
      const q = again.quarantined();
      assert.deepEqual(
        q.map((r) => [r.table, r.key, r.error]),
        [["allocs", "a0", "Allocation.Job: must be an object"]],
      );
      assert.deepEqual(
        again.listAllocs().map((a) => a.ID),
        ["b0"],
      );
      assert.deepEqual(again.allocsByVolume("default", "vol1"), []);
    } finally {
      again.close();
    }
    assert.equal(rows(dir).copies, 1, "b0's copy stays");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
