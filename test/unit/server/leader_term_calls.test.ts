/**
 * A leader loop's external calls are fenced by its term (leader/gate.ts, internal/fence.ts): the
 * controller condition poll started by a LeaderGate, the real controller client and node
 * connection registry, a fake node connection that records every ControllerGetVolume it is sent.
 * When the term ends mid-pass, or its session stops being confirmed fresh (a paused leader that
 * resumes, before its election notices), no further call is sent.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { NodeConnections, type NodeConn } from "../../../src/server/clientconn/connections.js";
import { ControllerClient } from "../../../src/server/clientconn/controller.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { ControllerConditionPoller } from "../../../src/server/volumecondition/poller.js";
import { LeaderGate, type LeaderLoop } from "../../../src/server/leader/gate.js";
import { KeyedMutex } from "../../../src/internal/keyed_mutex.js";
import { nullLogger } from "../../../src/internal/log.js";
import { makeNode } from "../../builders/node.js";
import { makeVolume } from "../../builders/volume.js";
import { controllerInfo } from "../../builders/plugin_info.js";

/** A node whose ControllerGetVolume answers when `gate()` resolves; every call sent is recorded. */
function node(gate: () => Promise<void>): NodeConn & { sent: string[] } {
  const c = {
    isOpen: true,
    sent: [] as string[],
    call: async (_method: string, params: { ExternalVolumeID: string }) => {
      c.sent.push(params.ExternalVolumeID);
      await gate();
      return { ExternalID: params.ExternalVolumeID, PublishedExternalNodeIDs: [], Condition: null };
    },
    close: () => undefined,
  };
  return c as unknown as NodeConn & { sent: string[] };
}

async function setup(gate: () => Promise<void>) {
  const store = new SqliteStateStore(null);
  const info = controllerInfo("p1", true, {
    ControllerInfo: { ...controllerInfo("p1").ControllerInfo!, SupportsGet: true, SupportsCondition: true },
  });
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { CSIControllerPlugins: { p1: info } }));
    for (const id of ["v1", "v2", "v3", "v4"]) tx.putVolume(makeVolume(id));
  });
  const conn = node(gate);
  const conns = new NodeConnections();
  conns.add("n1", conn);
  const poller = new ControllerConditionPoller(
    store,
    new ControllerClient(store, conns, nullLogger),
    new KeyedMutex(),
    nullLogger,
    { concurrency: 1, intervalMs: 5 },
  );
  const loops = (): LeaderLoop[] => [
    { name: "controller condition", start: (t) => poller.start(t.signal), stop: () => poller.stop() },
  ];
  return { conn, loops };
}

async function until(cond: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 2));
  }
}

test("a term that ends mid-pass sends no further controller call", async () => {
  let answer!: () => void;
  const answered = new Promise<void>((r) => (answer = r));
  const { conn, loops } = await setup(() => answered);
  const gate = new LeaderGate(loops, nullLogger);
  await gate.gain({ revision: "3" });
  await until(() => conn.sent.length === 1);
  const losing = gate.lose("lease lost");
  answer();
  await losing;
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(conn.sent, ["ext-v1"], "only the call sent before the term ended");
  await gate.close("server stopping");
});

test("a term whose session is no longer confirmed fresh sends nothing, before the election notices", async () => {
  let stale: string | undefined;
  let answer!: () => void;
  const answered = new Promise<void>((r) => (answer = r));
  const { conn, loops } = await setup(() => answered);
  const gate = new LeaderGate(loops, nullLogger);
  await gate.gain({ revision: "4", refusal: () => stale });
  try {
    await staleRun();
  } finally {
    answer();
    await gate.close("server stopping");
  }
  async function staleRun() {
    await until(() => conn.sent.length === 1);
    // The process was paused past its lease: the term is still "running" here, but stale.
    stale = "this server's etcd lease was last confirmed 5000 ms ago (TTL 3000 ms)";
    answer();
    // Several more passes' worth of time (the interval is 5 ms): none may send.
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(gate.state, "leader", "the gate has not been told yet");
    assert.deepEqual(conn.sent, ["ext-v1"], "nothing sent once the session went stale");
    stale = undefined;
    await until(() => conn.sent.length > 1);
  }
});
