/**
 * Which node a controller call goes to (ControllerClient): only connected nodes whose healthy
 * controller has the capability asked for, every one of them in turn across calls (the rotation
 * wraps past the last node ID), the capability and "nobody connected" refusals as before, and a
 * call reads a page of the healthy-controller index, never every controller of the plugin.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { NodeConnections, type NodeConn } from "../../../src/server/clientconn/connections.js";
import { ControllerClient } from "../../../src/server/clientconn/controller.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { StateReader } from "../../../src/server/state/store.js";
import { BerthError } from "../../../src/structs/errors.js";
import { nullLogger } from "../../../src/internal/log.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo } from "../../builders/plugin_info.js";

const params = { PluginID: "p1", ExternalVolumeID: "e", ExternalNodeID: "x", Secrets: {} };
const UNPUBLISH = "ClientCSI.ControllerUnpublishVolume" as const;

/** A connection that answers every call and counts them, by node. */
function answering(calls: Map<string, number>, nodeId: string): NodeConn {
  return {
    isOpen: true,
    call: () => {
      calls.set(nodeId, (calls.get(nodeId) ?? 0) + 1);
      return Promise.resolve({});
    },
    close: () => undefined,
  };
}

/** The store, counting the healthy-controller entries it hands out (both index reads). */
function counting(store: SqliteStateStore): { state: StateReader; read: () => number } {
  let n = 0;
  const state = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        const out = (v as (...a: unknown[]) => unknown).apply(target, args);
        if (prop === "healthyPluginInstances") n += (out as Map<string, unknown>).size;
        if (prop === "healthyPluginInstancesAfter") n += (out as unknown[]).length;
        return out;
      };
    },
  });
  return { state, read: () => n };
}

const id = (i: number) => `n${String(i).padStart(2, "0")}`;

test("controller choice: connected, healthy and capable nodes only, each in turn across calls", async () => {
  const store = new SqliteStateStore(null);
  try {
    // 40 nodes with p1's controller: odd ones cannot attach, n04's is unhealthy, n08 is down.
    await store.txn((tx) => {
      for (let i = 0; i < 40; i++) {
        const info = controllerInfo("p1", i % 2 === 0, i === 4 ? { Healthy: false } : {});
        tx.putNode(
          makeNode(id(i), { Status: i === 8 ? "down" : "ready", CSIControllerPlugins: { p1: info } }),
        );
      }
    });
    const conns = new NodeConnections();
    const calls = new Map<string, number>();
    // Connected: capable n00 n12 n26 n38, an unhealthy n04, a down n08, incapable n13 n27.
    for (const i of [0, 4, 8, 12, 13, 26, 27, 38]) conns.add(id(i), answering(calls, id(i)));
    const cc = new ControllerClient(store, conns, nullLogger);
    for (let k = 0; k < 8; k++) {
      await cc.call("p1", UNPUBLISH, params, { requires: "SupportsAttachDetach" });
    }
    assert.deepEqual(
      Object.fromEntries([...calls].sort()),
      { n00: 2, n12: 2, n26: 2, n38: 2 },
      "each connected capable healthy controller took every fourth call, none of the others any",
    );
    // Without the capability asked for, the incapable connected ones take their turns too.
    calls.clear();
    for (let k = 0; k < 6; k++) await cc.call("p1", UNPUBLISH, params);
    assert.deepEqual(Object.fromEntries([...calls].sort()), {
      n00: 1,
      n12: 1,
      n13: 1,
      n26: 1,
      n27: 1,
      n38: 1,
    });
    // A capability no healthy controller has is refused up front; no capable one connected is 503.
    await assert.rejects(
      cc.call("p1", UNPUBLISH, params, { requires: "SupportsExpand" }),
      (e: unknown) =>
        e instanceof BerthError && e.code === "ERR_CSI_NOT_SUPPORTED" && /Expand/.test(e.message),
    );
    for (const i of [0, 12, 26, 38]) conns.remove(id(i), conns.get(id(i))!);
    calls.clear();
    await assert.rejects(
      cc.call("p1", UNPUBLISH, params, { requires: "SupportsAttachDetach" }),
      (e: unknown) => e instanceof BerthError && e.code === "ERR_CSI_PLUGIN_UNAVAILABLE",
    );
    assert.equal(calls.size, 0, "no call went to an incapable, unhealthy or down node");
    await assert.rejects(
      cc.call("missing", UNPUBLISH, params),
      (e: unknown) => e instanceof BerthError && e.code === "ERR_NOT_FOUND",
    );
  } finally {
    store.close();
  }
});

test("controller choice: a call reads a page of the healthy controllers, not all 2,000", async () => {
  const store = new SqliteStateStore(null);
  try {
    await store.txn((tx) => {
      for (let i = 0; i < 2000; i++) {
        tx.putNode(
          makeNode(`m${String(i).padStart(4, "0")}`, { CSIControllerPlugins: { p1: controllerInfo("p1") } }),
        );
      }
    });
    const conns = new NodeConnections();
    const calls = new Map<string, number>();
    for (let i = 0; i < 2000; i++) {
      const nodeId = `m${String(i).padStart(4, "0")}`;
      conns.add(nodeId, answering(calls, nodeId));
    }
    const { state, read } = counting(store);
    const cc = new ControllerClient(state, conns, nullLogger);
    for (let k = 0; k < 10; k++) await cc.call("p1", UNPUBLISH, params, { requires: "SupportsAttachDetach" });
    assert.equal(calls.size, 10, "ten calls went to ten different controllers");
    assert.ok(read() <= 10 * 8, `ten calls read ${read()} controller instances`);
  } finally {
    store.close();
  }
});

test("controller choice: calls in a steady cluster reuse the pages read; a node write is seen at once", async () => {
  const store = new SqliteStateStore(null);
  try {
    await store.txn((tx) => {
      for (const n of ["a", "b"]) {
        tx.putNode(makeNode(n, { CSIControllerPlugins: { p1: controllerInfo("p1") } }));
      }
    });
    const conns = new NodeConnections();
    const calls = new Map<string, number>();
    for (const n of ["a", "b"]) conns.add(n, answering(calls, n));
    const { state, read } = counting(store);
    const cc = new ControllerClient(state, conns, nullLogger);
    for (let k = 0; k < 20; k++) await cc.call("p1", UNPUBLISH, params);
    assert.deepEqual(Object.fromEntries(calls), { a: 10, b: 10 });
    const steady = read();
    assert.ok(steady <= 4, `twenty calls read ${steady} controller instances (each page once)`);

    // b's controller turns unhealthy: the next calls read the index again and avoid it.
    await store.txn((tx) =>
      tx.putNode({
        ...tx.getNode("b")!,
        CSIControllerPlugins: { p1: controllerInfo("p1", true, { Healthy: false }) },
      }),
    );
    calls.clear();
    for (let k = 0; k < 4; k++) await cc.call("p1", UNPUBLISH, params);
    assert.deepEqual(Object.fromEntries(calls), { a: 4 }, "no call to the unhealthy controller");
    assert.ok(read() > steady, "the node write made the calls read the index again");
  } finally {
    store.close();
  }
});
