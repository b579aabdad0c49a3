/** The orphan reconciler's pass: each orphan is logged once per server run, again once it is back. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { OrphanReconciler, type OrphanLister } from "../../../src/server/orphans/reconciler.js";
import type { Logger } from "../../../src/internal/log.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { CSIVolumeOrphan } from "../../../src/structs/volume_intent.js";

const orphan = (id: string): CSIVolumeOrphan => ({
  ID: id,
  Namespace: "default",
  Name: id,
  PluginID: "p1",
  CreateTime: 1,
  UnrecordedStorage: null,
  ListError: "no controller",
  CreateIndex: 1,
  ModifyIndex: 1,
});

test("a pass logs each new orphan once, with how to resolve it; a resolved one is forgotten", async () => {
  const warned: [string, Record<string, unknown>][] = [];
  const log: Logger = {
    ...nullLogger,
    warn: (msg: string, fields?: Record<string, unknown>) => warned.push([msg, fields ?? {}]),
  };
  let current = [orphan("a"), orphan("b")];
  const lister: OrphanLister = { list: async () => current };
  const r = new OrphanReconciler(lister, log);
  assert.equal(await r.pass(), 2);
  assert.deepEqual(
    warned.map(([, f]) => f.volume),
    ["a", "b"],
  );
  assert.match(String(warned[0]![0]), /orphaned volume storage/);
  assert.equal(warned[0]![1].unrecorded_storage, "unknown (no controller)");
  assert.match(String(warned[0]![1].resolve), /berth volume orphans -adopt a/);
  await r.pass();
  assert.equal(warned.length, 2, "not logged again while it stays");
  current = [orphan("b")];
  await r.pass();
  current = [orphan("a"), orphan("b")];
  await r.pass();
  assert.deepEqual(
    warned.map(([, f]) => f.volume),
    ["a", "b", "a"],
    "a comes back (a new interrupted create): reported again",
  );
});
