/**
 * Between passes the scheduler keeps its node list following node writes (scheduler.ts
 * NODE_LIST_REFRESH_MS, node_list_cache.ts): after a refresh, a pass reads no node at all, and a
 * refresh after one node write reads that node alone. Over an in-memory store, with the refresh
 * interval driven by mocked timers.
 */
import { test, mock } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { makeNode } from "../../builders/node.js";

/** Counts the store's node reads. */
function countNodeReads(store: SqliteStateStore) {
  const reads = { list: 0, one: 0 };
  const listNodes = store.listNodes.bind(store);
  const getNode = store.getNode.bind(store);
  store.listNodes = () => {
    reads.list++;
    return listNodes();
  };
  store.getNode = (id) => {
    reads.one++;
    return getNode(id);
  };
  return reads;
}

test("scheduler: the node list is read between passes, by delta, and a pass reads none", async (t) => {
  mock.timers.enable({ apis: ["setInterval"] });
  const store = new SqliteStateStore(null);
  const scheduler = new Scheduler(store, nullLogger);
  t.after(async () => {
    await scheduler.stop();
    store.close();
    mock.timers.reset();
  });
  await store.txn((tx) => {
    for (let i = 0; i < 10; i++) tx.putNode(makeNode(`n${i}`));
    tx.putJob(
      validateJob({
        ID: "web",
        Type: "service",
        TaskGroups: [{ Name: "g", Count: 3, Tasks: [{ Name: "t", Driver: "exec" }] }],
      }),
    );
  });
  const reads = countNodeReads(store);
  mock.timers.tick(1_000);
  assert.equal(reads.list, 1, "the first refresh reads the nodes whole");

  await store.txn((tx) => tx.putNode({ ...tx.getNode("n3")!, Status: "down" }));
  const one = reads.one;
  mock.timers.tick(1_000);
  assert.equal(reads.list, 1, "a refresh after one node write reads no list");
  assert.equal(reads.one - one, 1, "it reads the node written");
  mock.timers.tick(1_000);
  assert.equal(reads.one - one, 1, "a refresh with nothing written reads nothing");

  const result = await scheduler.evaluate("default", "web");
  assert.equal(result.placed, 3);
  assert.equal(reads.list, 1, "the pass took the list the refresh had read");
});
