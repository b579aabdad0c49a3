/**
 * The release walk's writes (ClaimEndpoint.unpublish on an in-memory store, a fake controller
 * client): the node's report is one checkpoint, the one ControllerUnpublishVolume resumes from; once
 * the controller has detached, "controller-detached" and the free are ONE write, as Nomad's
 * Unpublish goes straight to ready-to-free; without a controller step the report and the free are
 * one write. A detach that fails leaves the report's checkpoint and frees nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { KeyedMutex } from "../../../src/internal/keyed_mutex.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { ServerDeps } from "../../../src/server/deps.js";
import { ClaimEndpoint } from "../../../src/server/rpc/claim.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { StateStore } from "../../../src/server/state/store.js";
import { claimOf } from "../../builders/claim.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

async function setup(t: { after(fn: () => unknown): void }, withController: boolean) {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  await store.txn((tx) => {
    tx.putNode(
      makeNode("n1", {
        CSIControllerPlugins: withController ? { p1: controllerInfo("p1", true) } : {},
        CSINodePlugins: {
          p1: nodePluginInfo("p1", { RequiresControllerPlugin: withController }, { ID: "ext-n1" }),
        },
      }),
    );
    const claim = { ...claimOf({ ID: "a1", NodeID: "n1" }), ExternalNodeID: "ext-n1" };
    tx.putVolume(
      makeVolume("v1", {
        WriteClaims: { a1: withController ? { ...claim, ControllerPublishPluginID: "p1" } : claim },
      }),
    );
  });
  // Every txn that wrote something, with what the claim was after it.
  const writes: string[] = [];
  const counting: StateStore = Object.create(store) as StateStore;
  counting.txn = async (fn) => {
    const before = store.index();
    const result = await store.txn(fn);
    if (store.index() > before) {
      const v = store.getVolume("default", "v1")!;
      writes.push(v.WriteClaims.a1?.State ?? v.PastClaims.a1?.State ?? "freed");
    }
    return result;
  };
  const detaches: string[] = [];
  let failDetach = false;
  const deps = {
    store: counting,
    volumeLocks: new KeyedMutex(),
    log: nullLogger,
    scheduler: { retryBlocked: async () => {} },
    controllers: {
      call: async (_plugin: string, method: string) => {
        detaches.push(method);
        if (failDetach) throw new Error("injected detach failure");
        return {};
      },
    },
  } as unknown as ServerDeps;
  const endpoint = new ClaimEndpoint(deps);
  return {
    writes,
    detaches,
    failDetach: (fail: boolean) => (failDetach = fail),
    release: () =>
      endpoint.unpublish({
        VolumeID: "v1",
        Namespace: "default",
        AllocationID: "a1",
        NodeID: "n1",
        State: "node-detached",
      }),
  };
}

test("release with a controller step: the report is one checkpoint, detached-and-freed the next", async (t) => {
  const s = await setup(t, true);
  s.failDetach(true);
  await assert.rejects(s.release(), /injected detach failure/);
  assert.deepEqual(s.writes, ["node-detached"], "the checkpoint the detach resumes from, nothing freed");
  s.failDetach(false);
  await s.release();
  assert.deepEqual(s.writes, ["node-detached", "freed"], "detached and freed in one write");
  assert.deepEqual(s.detaches, [
    "ClientCSI.ControllerUnpublishVolume",
    "ClientCSI.ControllerUnpublishVolume",
  ]);
});

test("release without a controller step: the report and the free are one write", async (t) => {
  const s = await setup(t, false);
  // The plugin needs no controller and the claim was never controller-published.
  await s.release();
  assert.deepEqual(s.writes, ["freed"]);
  assert.deepEqual(s.detaches, []);
});
