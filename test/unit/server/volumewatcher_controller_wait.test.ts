/**
 * The volumewatcher and a release that waits for a controller (issue 10): a claim that was
 * controller-published is recorded as waiting in the controller step even when the plugin no
 * longer looks controller-required (its controller's node is down), and the watcher retries it as
 * soon as a NEW attach-capable controller appears — not at the end of a long backoff, and not in a
 * loop while a listed controller stays unreachable. In-memory store, fake release walk.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as tick } from "node:timers/promises";
import { nullLogger } from "../../../src/internal/log.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { VolumeWatcher, type ClaimReleaser } from "../../../src/server/volumewatcher/watcher.js";
import { findClaim, freeClaim, nextReleaseStep } from "../../../src/structs/claim.js";
import { volumeView } from "../../../src/server/state/views.js";
import { tempDir } from "../../helpers/temp_dir.js";
import { BerthError } from "../../../src/structs/errors.js";
import type { VolumeClaim } from "../../../src/structs/volume.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

const published: VolumeClaim = {
  AllocationID: "a1",
  NodeID: "B",
  ExternalNodeID: "ext-B",
  Mode: "write",
  AccessMode: "single-node-writer",
  AttachmentMode: "file-system",
  State: "node-detached",
  ControllerPublishPluginID: "p1",
};

async function until(what: string, fn: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick(5);
  }
}

test("a release waiting for a controller is recorded as such and retried when a new one appears", async (t) => {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  await store.txn((tx) => {
    // A's controller published the volume; A is down, so the plugin no longer requires it.
    tx.putNode(makeNode("A", { Status: "down", CSIControllerPlugins: { p1: controllerInfo("p1", true) } }));
    tx.putNode(makeNode("B", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
    tx.putVolume(makeVolume("v1", { PastClaims: { a1: published } }));
  });
  assert.equal(store.getPlugin("p1")!.ControllerRequired, false);

  // The walk fails the way ClaimEndpoint's does until a controller on C can take the detach.
  let attempts = 0;
  const releaser: ClaimReleaser = {
    async releaseClaim(namespace, req) {
      attempts++;
      if (!store.getNode("C")) {
        throw new BerthError(
          "ERR_CSI_PLUGIN_UNAVAILABLE",
          'waiting for a controller of plugin "p1" to run ControllerUnpublishVolume',
        );
      }
      await store.txn((tx) => {
        const v = tx.getVolume(namespace, req.VolumeID);
        if (v) tx.putVolume(freeClaim(v, req.AllocationID));
      });
      return true;
    },
  };
  // A long backoff: only the wake can make the retry come within the test.
  const w = new VolumeWatcher(store, releaser, nullLogger, {
    scanIntervalMs: 5,
    fenceHoldMs: 0,
    minIntervalMs: 5,
    backoffBaseMs: 60_000,
    backoffMaxMs: 60_000,
  });
  w.start();
  t.after(() => w.stop());

  await until("the waiting status", () => !!store.getVolume("default", "v1")!.PastClaims.a1?.ReleaseStatus);
  const st = store.getVolume("default", "v1")!.PastClaims.a1!.ReleaseStatus!;
  assert.equal(st.Step, "controller-unpublish", "the claim's record decides, not the plugin as it looks now");
  assert.match(st.LastError, /waiting for a controller of plugin "p1"/);

  // A comes back on the record (a controller the watcher had not seen live: one retry at once),
  // but the walk still cannot reach it; unrelated writes keep waking the watcher, and with no
  // controller it has not seen already there is no retry loop.
  await store.txn((tx) => tx.putNode({ ...tx.getNode("A")!, Status: "ready" }));
  await until("the retry for A", () => attempts === 2);
  for (let i = 0; i < 10; i++) {
    await store.txn((tx) => tx.putNode(makeNode(`noise-${i}`)));
    await tick(10);
  }
  assert.equal(attempts, 2);

  // A replacement controller registers on C: the release runs now, not in a minute.
  await store.txn((tx) =>
    tx.putNode(makeNode("C", { CSIControllerPlugins: { p1: controllerInfo("p1", true) } })),
  );
  await until("the release through C", () => !store.getVolume("default", "v1")!.PastClaims.a1);
  assert.equal(attempts, 3);
});

test("a claim's ControllerPublish record survives a server restart and still decides its release", async () => {
  const dir = tempDir("berth-publish-record-");
  const first = new SqliteStateStore(dir);
  await first.txn((tx) => {
    tx.putNode(makeNode("A", { Status: "down", CSIControllerPlugins: { p1: controllerInfo("p1", true) } }));
    tx.putNode(makeNode("B", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
    tx.putVolume(makeVolume("v1", { PastClaims: { a1: published } }));
  });
  first.close();
  const again = new SqliteStateStore(dir);
  try {
    const vol = volumeView(again, "default", "v1")!;
    const c = findClaim(vol, "a1")!;
    assert.equal(c.ControllerPublishPluginID, "p1");
    assert.equal(vol.ControllerRequired, false, "A is down: the plugin does not look attach-capable");
    assert.equal(nextReleaseStep(vol, c, false), "controller-detach");
  } finally {
    again.close();
  }
});
