/**
 * The loop the deployment watcher and the node drainer share (src/server/follow_tables.ts), on a
 * real in-memory store: a write to a followed table made while a pass runs brings another pass (it
 * is waited for from the index seen before the pass); a write to another table does not; a pass
 * that throws is logged and run again after the backoff; the wake-up time a pass answers is kept.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createLogger } from "../../../src/internal/log.js";
import { followTables } from "../../../src/server/follow_tables.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { node, volume } from "../../conformance/builders.js";

function setup(pass: (n: number, store: SqliteStateStore) => Promise<number | null>) {
  const store = new SqliteStateStore(null);
  const lines: string[] = [];
  const log = createLogger({ sink: { write: (l) => lines.push(l) } });
  const ctl = new AbortController();
  let passes = 0;
  const loop = followTables(
    {
      store,
      tables: ["nodes"],
      pass: () => pass(++passes, store),
      name: "test follower",
      log,
      settleMs: 5,
      errorBackoffMs: 20,
      maxWaitMs: 60_000,
    },
    ctl.signal,
  );
  const stop = async () => {
    ctl.abort();
    await loop;
    store.close();
  };
  return { store, lines, passes: () => passes, stop };
}

const until = async (what: string, ok: () => boolean) => {
  const deadline = Date.now() + 5_000;
  while (!ok()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

test("follow tables: a write during a pass brings another pass; a write elsewhere does not", async () => {
  const f = setup(async (n, store) => {
    // The first pass writes to the followed table while it runs, as a pass that races a write.
    if (n === 1) await store.txn((tx) => tx.putNode(node("n1")));
    return null;
  });
  try {
    await until("the pass after the write made during the first", () => f.passes() >= 2);
    assert.deepEqual(f.lines, [], "no pass failed");
    await f.store.txn((tx) => tx.putVolume(volume("unrelated")));
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(f.passes(), 2, "a volume write does not wake a follower of nodes");
    await f.store.txn((tx) => tx.putNode(node("n2")));
    await until("the pass after a node write", () => f.passes() === 3);
  } finally {
    await f.stop();
  }
});

test("follow tables: a failing pass is logged and retried after the backoff; a wake-up time is kept", async () => {
  const f = setup(async (n) => {
    if (n === 1) throw new Error("boom");
    return n === 2 ? Date.now() + 30 : null;
  });
  try {
    await until("the retry and the timed wake-up", () => f.passes() >= 3);
    assert.equal(f.lines.filter((l) => l.includes("[ERROR]")).length, 1);
    assert.match(f.lines[0]!, /test follower pass failed error="boom"/);
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(f.passes(), 3, "no write, no wake-up time: the loop waits");
  } finally {
    await f.stop();
  }
});
