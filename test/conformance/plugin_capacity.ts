/**
 * Plugin capacities in the StateStore (structs/capacity.ts; the leader's capacity poll writes them):
 * every store runs this beside the main suite. A put is stamped like a record and counts as a write
 * of `plugins` (a blocking query on plugins wakes), an unchanged put writes nothing, a delete of a
 * missing one writes nothing, the rows are not records of the commit feed, and a txn that throws
 * leaves none behind.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { PluginCapacity } from "../../src/structs/capacity.js";
import type { StateStore } from "../../src/server/state/store.js";
import type { MakeStore } from "./state_store.js";

const capacity = (pluginId: string, available: number): PluginCapacity => ({
  PluginID: pluginId,
  Entries: [
    {
      Segments: { zone: "a" },
      AvailableBytes: available,
      MaximumVolumeSize: null,
      MinimumVolumeSize: null,
      MeasuredAt: 1_000,
      StaleAt: 181_000,
    },
  ],
  LastError: "",
  CreateIndex: 0,
  ModifyIndex: 0,
});

export function runPluginCapacityConformance(name: string, makeStore: MakeStore): void {
  const withStore = async (fn: (s: StateStore) => Promise<void>) => {
    const { store, dispose } = await makeStore({ now: () => 1_000 });
    try {
      await fn(store);
    } finally {
      store.close();
      await dispose();
    }
  };

  describe(`StateStore conformance, plugin capacities: ${name}`, () => {
    test("a capacity put is stamped, read back, listed, and moves only the plugins index", () =>
      withStore(async (s) => {
        assert.equal(s.getPluginCapacity("p1"), undefined);
        assert.deepEqual(s.listPluginCapacities(), []);
        const changes: string[] = [];
        const off = s.onCommit((txn) => changes.push(...txn.changes.map((c) => c.table)));
        const rec = await s.txn((tx) => tx.putPluginCapacity(capacity("p1", 100)));
        assert.deepEqual([rec.CreateIndex, rec.ModifyIndex, s.index()], [1, 1, 1]);
        assert.equal(s.tableIndex("plugins"), 1);
        assert.equal(s.tableIndex("volumes"), 0);
        assert.deepEqual(s.getPluginCapacity("p1"), {
          ...capacity("p1", 100),
          CreateIndex: 1,
          ModifyIndex: 1,
        });
        await s.txn((tx) => tx.putPluginCapacity(capacity("p0", 5)));
        assert.deepEqual(
          s.listPluginCapacities().map((c) => c.PluginID),
          ["p0", "p1"],
          "ordered by plugin ID",
        );
        // The same content again writes nothing; a new answer writes, keeping CreateIndex.
        await s.txn((tx) => tx.putPluginCapacity(capacity("p1", 100)));
        assert.equal(s.index(), 2, "an unchanged capacity is a no-op");
        const next = await s.txn((tx) => tx.putPluginCapacity(capacity("p1", 40)));
        assert.deepEqual([next.CreateIndex, next.ModifyIndex], [1, 3]);
        assert.equal(s.getPluginCapacity("p1")!.Entries[0]!.AvailableBytes, 40);
        assert.deepEqual(changes, [], "capacities are not records of the commit feed");
        off();
      }));

    test("a capacity delete moves the plugins index once; a missing one writes nothing", () =>
      withStore(async (s) => {
        await s.txn((tx) => tx.putPluginCapacity(capacity("p1", 100)));
        await s.txn((tx) => tx.deletePluginCapacity("p1"));
        assert.deepEqual([s.index(), s.tableIndex("plugins")], [2, 2]);
        assert.equal(s.getPluginCapacity("p1"), undefined);
        await s.txn((tx) => tx.deletePluginCapacity("p1"));
        assert.equal(s.index(), 2, "deleting nothing writes nothing");
      }));

    test("a txn that throws leaves no capacity behind", () =>
      withStore(async (s) => {
        await assert.rejects(
          s.txn((tx) => {
            tx.putPluginCapacity(capacity("p1", 100));
            throw new Error("boom");
          }),
          /boom/,
        );
        assert.equal(s.getPluginCapacity("p1"), undefined);
        assert.equal(s.index(), 0);
      }));
  });
}
