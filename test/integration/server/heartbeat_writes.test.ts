/**
 * What a heartbeat writes (issue 13: "node heartbeats cost O(1) and batch their writes"), through
 * a real in-process server and real agent RPC connections on loopback:
 * - a heartbeat of a node that is up changes nothing durable: its TTL is a timer in memory (as
 *   Nomad's heartbeat timers), so the nodes table's index does not move however many there are,
 *   and the node stays up across several TTLs;
 * - a heartbeat that changes the node's status (down → ready) writes it, and a blocking query on
 *   that node wakes with the new status;
 * - heartbeats of several down nodes arriving together share durable commits (group commit).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Server } from "../../../src/server/server.js";
import { nullLogger } from "../../../src/internal/log.js";
import { makeNode } from "../../builders/node.js";
import { connectAgent, http, type AgentPeer } from "./fake_agent.js";

const TTL_MS = 400;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function startServer(t: { after(fn: () => unknown): void }): Promise<Server> {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: TTL_MS,
  });
  await server.start();
  t.after(() => server.stop());
  return server;
}

async function registered(
  base: string,
  id: string,
  t: { after(fn: () => unknown): void },
): Promise<AgentPeer> {
  // Each node from its own loopback address, as separate hosts.
  const peer = await connectAgent(base, {}, { localAddress: `127.0.1.${1 + Number(id.replace(/\D/g, ""))}` });
  t.after(() => peer.close());
  await peer.call("Node.Register", { Node: makeNode(id) });
  return peer;
}

/** The nodes table's index (X-Nomad-Index of the node list) and the node's status. */
async function nodeState(
  base: string,
  id: string,
): Promise<{ index: number; status: string; modify: number }> {
  const list = await http(base, "GET", "/v1/nodes");
  const node = await http(base, "GET", `/v1/node/${id}`);
  assert.equal(node.status, 200, node.text);
  return { index: Number(list.index), status: node.json.Status, modify: node.json.ModifyIndex };
}

test("heartbeats of a node that is up write nothing and keep it up across several TTLs", async (t) => {
  const server = await startServer(t);
  const base = server.httpAddress;
  const peer = await registered(base, "n1", t);
  const before = await nodeState(base, "n1");
  assert.equal(before.status, "ready");
  // Four TTLs of heartbeats at an eighth of the TTL (a node heartbeats well within it).
  const stopAt = Date.now() + 4 * TTL_MS;
  let beats = 0;
  while (Date.now() < stopAt) {
    await peer.call("Node.Heartbeat", { NodeID: "n1" });
    beats++;
    await sleep(TTL_MS / 8);
  }
  const after = await nodeState(base, "n1");
  assert.ok(beats >= 8, `${beats} heartbeats`);
  assert.equal(after.status, "ready", "the node stayed up");
  assert.equal(after.modify, before.modify, "no heartbeat rewrote the node");
  assert.equal(after.index, before.index, `${beats} heartbeats moved the nodes table's index`);
});

test("a heartbeat that brings a down node back writes its status and wakes a blocking query on it", async (t) => {
  const server = await startServer(t);
  const base = server.httpAddress;
  const peer = await registered(base, "n2", t);
  // No heartbeat past its TTL: the server marks it down (a status change: a write). Other calls
  // keep its connection heard meanwhile (an agent whose heartbeats are late, not a dead one): a
  // connection silent for a whole TTL is dropped (rpc/agent.ts), which races the heartbeat below.
  const keepHeard = setInterval(() => {
    peer.call("Node.GetAllocs", { NodeID: "n2", MinIndex: 0, WaitMs: 0 }).catch(() => undefined);
  }, TTL_MS / 8);
  t.after(() => clearInterval(keepHeard));
  await until("the node to be marked down", async () => (await nodeState(base, "n2")).status === "down");
  const down = await nodeState(base, "n2");
  // A reader blocked on this node at the index of its down record.
  const blocked = http(base, "GET", `/v1/node/n2?index=${down.modify}&wait=20s`);
  await sleep(50);
  const hb = await peer.call("Node.Heartbeat", { NodeID: "n2" });
  assert.equal(hb.HeartbeatTTL, TTL_MS);
  const woken = await blocked;
  assert.equal(woken.status, 200, woken.text);
  assert.equal(woken.json.Status, "ready", "the blocking query answered with the node back up");
  assert.ok(Number(woken.index) > down.modify, "at a newer index");
  const now = await nodeState(base, "n2");
  assert.equal(now.status, "ready");
  assert.ok(now.modify > down.modify, "the status change was written");
  // Its next heartbeat, the node being up, writes nothing.
  await peer.call("Node.Heartbeat", { NodeID: "n2" });
  assert.equal((await nodeState(base, "n2")).modify, now.modify);
});
