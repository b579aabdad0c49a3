/**
 * Nomad's failover_heartbeat_ttl: when a server starts leading (or starts alone), every node the
 * store says is up gets the failover grace — heartbeats heard in an earlier term are never judged
 * in this one — while a node that registers or heartbeats in this term is held to its TTL. Over an
 * in-memory store with tiny bounds.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as tick } from "node:timers/promises";
import { nullLogger } from "../../../src/internal/log.js";
import { HeartbeatMonitor } from "../../../src/server/heartbeat.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { makeNode } from "../../builders/node.js";

test("failover grace: nodes up at the start of a term get the grace, not one TTL", async (t) => {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => {
    tx.putNode(makeNode("inherited"));
    tx.putNode(makeNode("heard"));
  });
  const hb = new HeartbeatMonitor(store, { evaluate: () => Promise.resolve() }, 40, nullLogger, undefined, {
    failoverMs: 400,
  });
  t.after(async () => {
    await hb.stop();
    store.close();
  });
  hb.start();
  // "heard" heartbeats once in this term, then goes silent: one TTL from then.
  hb.reset("heard");
  await tick(200);
  assert.equal(store.getNode("heard")!.Status, "down", "a node heard in this term keeps its TTL");
  assert.equal(store.getNode("inherited")!.Status, "ready", "a node from an earlier term has the grace");
  const deadline = Date.now() + 3_000;
  while (store.getNode("inherited")!.Status !== "down" && Date.now() < deadline) await tick(10);
  assert.equal(store.getNode("inherited")!.Status, "down", "and is marked down once the grace is over");
});

test("failover grace: never shorter than the TTL", async (t) => {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => tx.putNode(makeNode("n")));
  const hb = new HeartbeatMonitor(store, { evaluate: () => Promise.resolve() }, 300, nullLogger, undefined, {
    failoverMs: 10,
  });
  t.after(async () => {
    await hb.stop();
    store.close();
  });
  hb.start();
  await tick(150);
  assert.equal(store.getNode("n")!.Status, "ready");
});
