import { test } from "node:test";
import assert from "node:assert/strict";
import { NodeConnections, type NodeConn } from "../../../src/server/clientconn/connections.js";
import { ControllerClient } from "../../../src/server/clientconn/controller.js";
import { HeartbeatMonitor } from "../../../src/server/heartbeat.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { BerthError } from "../../../src/structs/errors.js";
import { nullLogger } from "../../../src/internal/log.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo } from "../../builders/plugin_info.js";

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fakeConn(answer: () => Promise<unknown>): NodeConn & { calls: number } {
  const c = {
    isOpen: true,
    calls: 0,
    call: () => {
      c.calls++;
      return answer();
    },
    close: () => undefined,
  };
  return c as unknown as NodeConn & { calls: number };
}

test("controller client: fails over on retryable errors, not on others", async () => {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { CSIControllerPlugins: { p1: controllerInfo("p1") } }));
    tx.putNode(makeNode("n2", { CSIControllerPlugins: { p1: controllerInfo("p1") } }));
  });
  const conns = new NodeConnections();
  const down = fakeConn(() => Promise.reject(new BerthError("ERR_CSI_UNAVAILABLE", "down")));
  const up = fakeConn(() => Promise.resolve({ PublishContext: { ok: "1" } }));
  conns.add("n1", down);
  conns.add("n2", up);
  const cc = new ControllerClient(store, conns, nullLogger);
  const params = {
    PluginID: "p1",
    ExternalVolumeID: "e",
    ExternalNodeID: "x",
    Capability: { AccessMode: "single-node-writer" as const, AttachmentMode: "file-system" as const },
    MountOptions: null,
    ReadOnly: false,
    Secrets: {},
    VolumeContext: {},
  };
  for (let i = 0; i < 2; i++) {
    assert.deepEqual(await cc.call("p1", "ClientCSI.ControllerPublishVolume", params), {
      PublishContext: { ok: "1" },
    });
  }
  assert.ok(down.calls >= 1);
  const bad = fakeConn(() => Promise.reject(new BerthError("ERR_CSI_INVALID_ARGUMENT", "bad")));
  conns.add("n2", bad);
  conns.remove("n1", down);
  await assert.rejects(cc.call("p1", "ClientCSI.ControllerPublishVolume", params), /bad/);
  conns.remove("n2", bad);
  await assert.rejects(
    cc.call("p1", "ClientCSI.ControllerPublishVolume", params, { retryDeadlineMs: 0 }),
    (e: unknown) => e instanceof BerthError && e.code === "ERR_CSI_PLUGIN_UNAVAILABLE",
  );
  store.close();
});

test("controller client: a lone controller answering ABORTED is retried with backoff until it succeeds", async () => {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { CSIControllerPlugins: { p1: controllerInfo("p1") } }));
  });
  const conns = new NodeConnections();
  let answers = 0;
  const busy = fakeConn(() =>
    ++answers <= 2
      ? Promise.reject(new BerthError("ERR_CSI_ABORTED", "an operation on e is in progress"))
      : Promise.resolve({}),
  );
  conns.add("n1", busy);
  const cc = new ControllerClient(store, conns, nullLogger);
  const params = { PluginID: "p1", ExternalVolumeID: "e", ExternalNodeID: "x", Secrets: {} };
  assert.deepEqual(await cc.call("p1", "ClientCSI.ControllerUnpublishVolume", params), {});
  assert.equal(busy.calls, 3);
  const never = fakeConn(() => Promise.reject(new BerthError("ERR_CSI_ABORTED", "busy")));
  conns.add("n1", never);
  await assert.rejects(
    cc.call("p1", "ClientCSI.ControllerUnpublishVolume", params, { retryDeadlineMs: 300 }),
    (e: BerthError) => e.code === "ERR_CSI_ABORTED",
    "past the deadline the plugin's own code is the answer",
  );
});

test("heartbeat: a node that misses its TTL is marked down", async () => {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => tx.putNode(makeNode("n1")));
  const hb = new HeartbeatMonitor(store, { evaluate: () => Promise.resolve() }, 30, nullLogger, undefined, {
    failoverMs: 0,
  });
  hb.start();
  await tick(15);
  hb.reset("n1");
  await tick(20);
  assert.equal(store.getNode("n1")!.Status, "ready", "a heartbeat within the TTL keeps it up");
  await tick(40);
  assert.equal(store.getNode("n1")!.Status, "down");
  await hb.stop();
  store.close();
});
