/**
 * The volumewatcher's claim census as the server's gauges show it (server/metrics/server_metrics.ts
 * over a real in-memory store and the watcher, with a fake release walk): a claim on a down node
 * is pending release, its failing step is named once a run fails, its age grows; once released it
 * is gone from every gauge, and the plugin gauges follow the plugin summaries.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as tick } from "node:timers/promises";
import { nullLogger } from "../../../src/internal/log.js";
import { Telemetry } from "../../../src/internal/metrics/telemetry.js";
import { registerServerMetrics } from "../../../src/server/metrics/server_metrics.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { VolumeWatcher, type ClaimReleaser } from "../../../src/server/volumewatcher/watcher.js";
import { freeClaim } from "../../../src/structs/claim.js";
import { BerthError } from "../../../src/structs/errors.js";
import { claimOf } from "../../builders/claim.js";
import { makeNode } from "../../builders/node.js";
import { makeVolume } from "../../builders/volume.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick(10);
  }
}

test("a stuck release shows as pending with its failing step, and leaves the gauges once released", async (t) => {
  const store = new SqliteStateStore(null);
  t.after(() => store.close());
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { Status: "down" }));
    tx.putNode(makeNode("n2"));
    tx.putAlloc(allocOf(plainJob("web"), "n2", { ID: "a2" }));
    tx.putVolume(makeVolume("v1", { WriteClaims: { a1: claimOf({ ID: "a1", NodeID: "n1" }) } }));
    tx.putVolume(
      makeVolume("v2", { ReadClaims: { a2: { ...claimOf({ ID: "a2", NodeID: "n2" }), Mode: "read" } } }),
    );
  });
  const state = { failing: true };
  const releaser: ClaimReleaser = {
    async releaseClaim(namespace, req) {
      if (state.failing) throw new BerthError("ERR_CSI_PLUGIN_UNAVAILABLE", "controller unavailable");
      await store.txn((tx) => {
        const v = tx.getVolume(namespace, req.VolumeID);
        if (v) tx.putVolume(freeClaim(v, req.AllocationID));
      });
      return true;
    },
  };
  const w = new VolumeWatcher(store, releaser, nullLogger, {
    scanIntervalMs: 5,
    fenceHoldMs: 0,
    minIntervalMs: 5,
    backoffBaseMs: 40,
    backoffMaxMs: 80,
  });
  w.start();
  t.after(() => w.stop());
  const telemetry = new Telemetry({ disableHostname: true, collectionIntervalMs: 0 });
  registerServerMetrics(telemetry, {
    store,
    census: () => w.census.snapshot(Date.now()),
    followupsArmed: () => 0,
  });
  const lines = async () => (await telemetry.prometheus()).split("\n");

  await until("the failing step to be recorded", async () =>
    (await lines()).some((l) =>
      l.startsWith('berth_server_volume_releases_failing{step="server-release"} 1'),
    ),
  );
  const text = await lines();
  assert.ok(text.includes('berth_server_volume_claims{mode="write"} 1'), text.join("\n"));
  assert.ok(text.includes('berth_server_volume_claims{mode="read"} 1'));
  assert.ok(text.includes('berth_server_volume_releases_pending{state="taken"} 1'));
  assert.ok(!text.some((l) => l.includes('node_id="n2"')), "the live claim is not pending");
  assert.ok(Number(text.find((l) => l.startsWith("berth_server_state_index "))?.split(" ")[1]) > 0);

  state.failing = false;
  await until("the release", async () =>
    (await lines()).includes('berth_server_volume_claims{mode="write"} 0'),
  );
  const after = await lines();
  assert.ok(!after.some((l) => l.startsWith("berth_server_volume_releases_pending{")), after.join("\n"));
  assert.ok(!after.some((l) => l.startsWith("berth_server_volume_releases_failing{")));
  assert.ok(after.includes("berth_server_volume_oldest_pending_release_seconds 0"));
});
