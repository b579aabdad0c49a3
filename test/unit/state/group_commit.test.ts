/**
 * Group commit (src/server/state/local/group_commit.ts) in the SQLite store, on a real state file: txns
 * asked for in one turn of the event loop share one transaction and one COMMIT, yet each keeps its
 * own savepoint (a throwing txn undoes only itself) and its own index, in the order asked. The last
 * tests drive GroupCommit alone with a fake host, for what a real SQLite file cannot be made to do
 * on demand (a COMMIT that fails) and for the time bound.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { GroupCommit, type GroupCommitHost } from "../../../src/server/state/local/group_commit.js";
import { makeVolume } from "../../builders/volume.js";
import { tempDir } from "../../helpers/temp_dir.js";

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test("group commit: a txn that throws in a batch undoes only itself; the others commit, each at its own index", async () => {
  const dir = tempDir("berth-group-commit-");
  // No time bound: the batch count below must not depend on how loaded the machine is.
  let s = new SqliteStateStore(dir, { groupCommit: { maxBatchMs: 60_000 } });
  await s.txn((tx) => tx.putVolume(makeVolume("before")));
  const base = s.index();
  const batches = s.groupCommitStats().batches;

  // Asked for in one turn: one batch.
  const results = await Promise.allSettled([
    s.txn((tx) => tx.putVolume(makeVolume("a")).ModifyIndex),
    s.txn((tx) => {
      tx.putVolume(makeVolume("b"));
      throw new Error("b refused");
    }),
    s.txn((tx) => {
      assert.ok(tx.getVolume("default", "a"), "a txn sees the writes of those before it in its batch");
      assert.equal(tx.getVolume("default", "b"), undefined, "and not those of one that threw");
      return tx.putVolume(makeVolume("c")).ModifyIndex;
    }),
    s.txn((tx) => ({ index: tx.index(), writeIndex: tx.writeIndex })),
  ]);

  assert.equal(s.groupCommitStats().batches, batches + 1, "the four txns shared one commit");
  assert.deepEqual(results[0], { status: "fulfilled", value: base + 1 });
  assert.equal(results[1].status, "rejected");
  assert.match(String(results[1].reason), /b refused/, "its own error");
  assert.deepEqual(results[2], { status: "fulfilled", value: base + 2 }, "the failed txn took no index");
  assert.deepEqual(
    results[3],
    { status: "fulfilled", value: { index: base + 2, writeIndex: base + 3 } },
    "a read-only txn sees the batch so far and takes no index",
  );
  const check = (store: SqliteStateStore, when: string) => {
    assert.equal(store.index(), base + 2, when);
    assert.equal(store.tableIndex("volumes"), base + 2, when);
    assert.deepEqual(
      store.listVolumes().map((v) => [v.ID, v.ModifyIndex]),
      [
        ["a", base + 1],
        ["before", base],
        ["c", base + 2],
      ],
      when,
    );
  };
  check(s, "in memory");
  s.close();
  s = new SqliteStateStore(dir);
  check(s, "reopened from the file");
  s.close();
});

test("group commit: across batches, txns commit in the order asked with consecutive indexes", async () => {
  const s = new SqliteStateStore(tempDir("berth-group-commit-"), { groupCommit: { maxBatch: 3 } });
  const asked: Promise<number | null>[] = [];
  const followUps: Promise<number>[] = [];
  for (let i = 0; i < 20; i++) {
    if (i % 5 === 4) {
      asked.push(s.txn(() => null)); // writes nothing
    } else if (i % 7 === 6) {
      asked.push(
        s
          .txn((tx) => {
            tx.putVolume(makeVolume(`bad${i}`));
            throw new Error("refused");
          })
          .catch(() => null),
      );
    } else {
      const p = s.txn((tx) => tx.putVolume(makeVolume(`v${i}`)).ModifyIndex);
      asked.push(p);
      // Asked for once an earlier one is acknowledged: a later batch, a later index.
      if (i === 0) followUps.push(p.then(() => s.txn((tx) => tx.putVolume(makeVolume("late")).ModifyIndex)));
    }
    if (i === 10) await turn(); // some in one turn, the rest in the next
  }
  const indexes = (await Promise.all(asked)).filter((x): x is number => x !== null);
  const [late] = await Promise.all(followUps);
  const writes = indexes.length;
  assert.equal(writes, 14);
  for (let k = 1; k < writes; k++) {
    assert.ok(indexes[k]! > indexes[k - 1]!, `in the order asked: ${indexes.join(",")}`);
  }
  assert.deepEqual(
    [...indexes, late!].sort((x, y) => x - y),
    Array.from({ length: writes + 1 }, (_, k) => k + 1),
    "one new index per writing txn, none skipped, none shared",
  );
  assert.ok(late! > indexes[0]!, "a txn asked for after an acknowledgement commits after it");
  assert.equal(s.index(), writes + 1);
  for (const v of s.listVolumes()) assert.ok(!v.ID.startsWith("bad"), `${v.ID} was refused and written`);
  const stats = s.groupCommitStats();
  assert.ok(stats.largestBatch <= 3, `batches bounded by maxBatch: largest ${stats.largestBatch}`);
  assert.equal(stats.ops, 21);
  s.close();
});

test("group commit: blocking queries wake once the batch has committed, with its last index", async () => {
  const s = new SqliteStateStore(tempDir("berth-group-commit-"));
  const ac = new AbortController();
  let volumesWoke: number | undefined;
  let nodesWoke = false;
  const volumes = s.waitFor(["volumes"], 0, ac.signal, 60_000).then((i) => (volumesWoke = i));
  const nodes = s.waitFor(["nodes"], 0, ac.signal, 60_000).then(
    () => (nodesWoke = true),
    () => undefined,
  );
  await Promise.all([1, 2, 3].map((i) => s.txn((tx) => tx.putVolume(makeVolume(`v${i}`)))));
  await turn();
  assert.equal(volumesWoke, 3, "woken after the batch, at its last txn's index");
  assert.equal(nodesWoke, false, "a waiter on an untouched table sleeps on");
  await volumes;
  ac.abort();
  await nodes;
  s.close();
});

test("group commit: closing the store commits the txns still queued", async () => {
  const dir = tempDir("berth-group-commit-");
  let s = new SqliteStateStore(dir);
  const pending = s.txn((tx) => tx.putVolume(makeVolume("queued")).ModifyIndex);
  s.close();
  assert.equal(await pending, 1, "answered, not dropped");
  await assert.rejects(
    s.txn(() => 1),
    /closed/,
  );
  s = new SqliteStateStore(dir);
  assert.equal(s.getVolume("default", "queued")?.ModifyIndex, 1);
  s.close();
});

/**
 * A host that records what GroupCommit asks of it; it cannot begin a transaction while `failBegin`
 * is set, and its COMMIT fails while `failCommit` is.
 */
function fakeHost() {
  const log: string[] = [];
  const host: GroupCommitHost<string[]> & { failBegin: boolean; failCommit: boolean; log: string[] } = {
    failBegin: false,
    failCommit: false,
    log,
    transaction(body) {
      if (host.failBegin) throw new Error("the database connection is not open");
      log.push("begin");
      body();
      if (host.failCommit) {
        log.push("rollback");
        throw new Error("disk I/O error");
      }
      log.push("commit");
    },
    isolated: (fn) => fn(log),
    committed: () => log.push("committed"),
    rolledBack: () => log.push("rolledBack"),
  };
  return host;
}

test("group commit: a batch whose COMMIT fails rejects every txn in it, and the next batch goes on", async () => {
  const host = fakeHost();
  const gc = new GroupCommit(host);
  host.failCommit = true;
  const settled: string[] = [];
  const first = [
    gc
      .submit((log) => log.push("op1"))
      .then(
        () => settled.push("op1 ok"),
        (e: Error) => settled.push(`op1 ${e.message}`),
      ),
    gc
      .submit(() => {
        throw new Error("op2's own");
      })
      .then(
        () => settled.push("op2 ok"),
        (e: Error) => settled.push(`op2 ${e.message}`),
      ),
  ];
  await Promise.all(first);
  assert.deepEqual(settled, ["op1 disk I/O error", "op2 op2's own"]);
  assert.deepEqual(host.log, ["begin", "op1", "rollback", "rolledBack"], "never reported committed");
  host.failCommit = false;
  host.log.length = 0;
  assert.equal(await gc.submit((log) => log.push("op3")), 2, "the op's own result");
  assert.deepEqual(host.log, ["begin", "op3", "commit", "committed"]);
  assert.deepEqual(gc.stats(), { batches: 1, ops: 1, largestBatch: 1 });
});

test("group commit: a batch takes no more txns once it has run maxBatchMs; the rest go in the next", async () => {
  const host = fakeHost();
  let now = 0;
  const gc = new GroupCommit(host, { maxBatch: 100, maxBatchMs: 5 }, () => now);
  const ops = Array.from({ length: 6 }, (_, i) =>
    gc.submit((log) => {
      now += 2; // each op "takes" 2 ms
      log.push(`op${i}`);
    }),
  );
  await Promise.all(ops);
  assert.deepEqual(host.log, [
    "begin",
    "op0",
    "op1",
    "op2",
    "commit",
    "committed",
    "begin",
    "op3",
    "op4",
    "op5",
    "commit",
    "committed",
  ]);
  assert.throws(() => new GroupCommit(host, { maxBatch: 0, maxBatchMs: 1 }), /maxBatch/);
});

// The bug this catches spins forever: the timeout turns that into a failure.
test(
  "group commit: a transaction that cannot even begin fails its txns instead of retrying them forever",
  { timeout: 10_000 },
  async () => {
    const host = fakeHost();
    const gc = new GroupCommit(host, { maxBatch: 2, maxBatchMs: 5 });
    host.failBegin = true;
    const results = await Promise.allSettled([1, 2, 3].map((i) => gc.submit(() => i)));
    assert.deepEqual(
      results.map((r) => (r.status === "rejected" ? String(r.reason) : r.value)),
      [1, 2, 3].map(() => "Error: the database connection is not open"),
    );
    host.failBegin = false;
    assert.equal(await gc.submit(() => "after"), "after");
    assert.deepEqual(
      host.log,
      ["rolledBack", "rolledBack", "begin", "commit", "committed"],
      "two batches of two, then one",
    );
  },
);
