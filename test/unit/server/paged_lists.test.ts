/**
 * The controller client's retry policy for the paged list calls (unit: a fake node connection):
 * ABORTED and INVALID_ARGUMENT from ListVolumes/ListSnapshots are answered after one call on one
 * candidate, a refused token as ERR_VALIDATION naming `next_token`; ABORTED from another method is
 * still retried across candidates ("operation pending").
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { NodeConnections, type NodeConn } from "../../../src/server/clientconn/connections.js";
import { ControllerClient } from "../../../src/server/clientconn/controller.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { BerthError, type ErrorCode } from "../../../src/structs/errors.js";
import { nullLogger } from "../../../src/internal/log.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo } from "../../builders/plugin_info.js";

function failing(code: ErrorCode): NodeConn & { calls: number } {
  const c = {
    isOpen: true,
    calls: 0,
    call: () => {
      c.calls++;
      return Promise.reject(new BerthError(code, `plugin says ${code}`));
    },
    close: () => undefined,
  };
  return c;
}

async function twoControllers(code: ErrorCode) {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { CSIControllerPlugins: { p1: controllerInfo("p1") } }));
    tx.putNode(makeNode("n2", { CSIControllerPlugins: { p1: controllerInfo("p1") } }));
  });
  const conns = new NodeConnections();
  const a = failing(code);
  const b = failing(code);
  conns.add("n1", a);
  conns.add("n2", b);
  return { store, cc: new ControllerClient(store, conns, nullLogger), calls: () => a.calls + b.calls };
}

test("paged lists: an ABORTED token is one call and a validation error naming next_token", async () => {
  const { store, cc, calls } = await twoControllers("ERR_CSI_ABORTED");
  await assert.rejects(
    cc.call("p1", "ClientCSI.ControllerListVolumes", { PluginID: "p1", MaxEntries: 0, StartingToken: "zz" }),
    (e: BerthError) => e.code === "ERR_VALIDATION" && e.field === "next_token" && /"zz"/.test(e.message),
  );
  assert.equal(calls(), 1);
  const params = { PluginID: "p1", MaxEntries: 0, StartingToken: "zz", Secrets: {} };
  await assert.rejects(
    cc.call("p1", "ClientCSI.ControllerListSnapshots", params),
    (e: BerthError) => e.field === "next_token",
  );
  assert.equal(calls(), 2);
  // Without a token there is nothing of the caller's to blame: the plugin's code, still at once.
  await assert.rejects(
    cc.call("p1", "ClientCSI.ControllerListVolumes", { PluginID: "p1", MaxEntries: 0, StartingToken: "" }),
    (e: BerthError) => e.code === "ERR_CSI_ABORTED",
  );
  assert.equal(calls(), 3);
  store.close();
});

test("paged lists: INVALID_ARGUMENT is one call with the plugin's code", async () => {
  const { store, cc, calls } = await twoControllers("ERR_CSI_INVALID_ARGUMENT");
  await assert.rejects(
    cc.call("p1", "ClientCSI.ControllerListVolumes", { PluginID: "p1", MaxEntries: 5, StartingToken: "" }),
    (e: BerthError) => e.code === "ERR_CSI_INVALID_ARGUMENT",
  );
  assert.equal(calls(), 1);
  store.close();
});

test("other methods: ABORTED still fails over and is retried until the deadline", async () => {
  const { store, cc, calls } = await twoControllers("ERR_CSI_ABORTED");
  const params = { PluginID: "p1", ExternalVolumeID: "e", ExternalNodeID: "x", Secrets: {} };
  await assert.rejects(
    cc.call("p1", "ClientCSI.ControllerUnpublishVolume", params, { retryDeadlineMs: 300 }),
    (e: BerthError) => e.code === "ERR_CSI_ABORTED",
  );
  assert.ok(calls() >= 3, `both candidates, then at least one more round (${calls()} calls)`);
  store.close();
});
