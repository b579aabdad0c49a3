/**
 * Heartbeat grace: a server whose event loop stalled longer than a node's TTL does not mark the node
 * down for heartbeats it could not read — the node gets the grace, and one that really stopped is
 * still marked down after it; and expiries that do happen re-evaluate each job once, not once per
 * node. Over an in-memory store, the loop blocked by a busy wait (tiny TTLs).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { setTimeout as tick } from "node:timers/promises";
import { nullLogger } from "../../../src/internal/log.js";
import { HeartbeatMonitor } from "../../../src/server/heartbeat.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";

const TTL_MS = 200;

/** Blocks the event loop, as a long scheduling pass would. */
function busyWait(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // spin
  }
}

async function until(what: string, fn: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick(5);
  }
}

function noEvals() {
  const calls: string[] = [];
  return { calls, scheduler: { evaluate: async (_ns: string, id: string) => void calls.push(id) } };
}

test("heartbeat grace: a stall longer than the TTL marks no live node down; a silent one goes down after the grace", async (t) => {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => {
    tx.putNode(makeNode("alive"));
    tx.putNode(makeNode("silent"));
  });
  const { scheduler } = noEvals();
  const hb = new HeartbeatMonitor(store, scheduler, TTL_MS, nullLogger, undefined, { failoverMs: 0 });
  const timers: { later?: NodeJS.Timeout; beating?: NodeJS.Timeout } = {};
  let ended = false;
  t.after(async () => {
    ended = true;
    clearTimeout(timers.later);
    clearInterval(timers.beating);
    await hb.stop();
    store.close();
  });
  hb.start();
  await tick(20);
  busyWait(TTL_MS * 3);
  // The live node's call timed out during the stall; like a client, it heartbeats again a little
  // after (well within one TTL), then keeps beating.
  timers.later = setTimeout(() => {
    if (ended) return;
    hb.reset("alive");
    timers.beating = setInterval(() => hb.reset("alive"), TTL_MS / 4);
  }, TTL_MS / 2);
  await until("the silent node marked down", () => store.getNode("silent")!.Status === "down");
  assert.equal(store.getNode("alive")!.Status, "ready", "the live node was never marked down");
  await tick(TTL_MS * 2);
  assert.equal(store.getNode("alive")!.Status, "ready");
});

test("heartbeat grace: heartbeats that waited in a socket during a stall are read before any node is marked down", async (t) => {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => {
    tx.putNode(makeNode("alive"));
    tx.putNode(makeNode("silent"));
  });
  const { scheduler } = noEvals();
  // No grace at all: this is about the order of the expiry and the heartbeats queued behind it.
  const hb = new HeartbeatMonitor(store, scheduler, TTL_MS, nullLogger, undefined, {
    graceMs: 0,
    failoverMs: 0,
  });
  // A separate process heartbeats every 20 ms over a pipe, stall or not.
  const child = spawn(process.execPath, ["-e", "setInterval(() => process.stdout.write('beat\\n'), 20)"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  t.after(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await exited;
    assert.notEqual(child.signalCode ?? child.exitCode, null, "the heartbeat process is gone");
    await hb.stop();
    store.close();
  });
  createInterface({ input: child.stdout }).on("line", () => hb.reset("alive"));
  await until("the first heartbeat", () => store.getNode("alive") !== undefined && beats(hb));
  hb.reset("silent");
  busyWait(TTL_MS * 3);
  await until("the silent node marked down", () => store.getNode("silent")!.Status === "down");
  await tick(TTL_MS);
  assert.equal(store.getNode("alive")!.Status, "ready", "the live node was never marked down");
});

/** True once the monitor has a timer armed for "alive" (its first heartbeat was read). */
function beats(hb: HeartbeatMonitor): boolean {
  return (hb as unknown as { timers: Map<string, unknown> }).timers.has("alive");
}

test("heartbeat expiry: nodes lost together re-evaluate each affected job once", async (t) => {
  const store = new SqliteStateStore(null);
  const job = plainJob("j");
  const nodes = Array.from({ length: 10 }, (_, i) => `n${i}`);
  await store.txn((tx) => {
    tx.putJob(job);
    for (const n of nodes) {
      tx.putNode(makeNode(n));
      tx.putAlloc(allocOf(job, n));
    }
  });
  const { calls, scheduler } = noEvals();
  const hb = new HeartbeatMonitor(store, scheduler, 30, nullLogger, undefined, { failoverMs: 0 });
  t.after(async () => {
    await hb.stop();
    store.close();
  });
  hb.start();
  await until("every node marked down", () => nodes.every((n) => store.getNode(n)!.Status === "down"));
  await until("the job re-evaluated", () => calls.length > 0);
  await tick(50);
  assert.ok(
    calls.length < nodes.length,
    `job evaluated ${calls.length} times for ${nodes.length} nodes lost`,
  );
  assert.ok(store.allocsByJob("default", "j").every((a) => a.ClientStatus === "lost"));
});
