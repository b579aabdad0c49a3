/**
 * The StateStore conformance cases of issue 13 (src/server/state/store.ts), through the interface
 * alone: waits on watch keys wake only when a commit writes one of those objects (node, job, alloc,
 * a node's or a job's allocs, volume, plugin), whatever the write path; and the ordered runs the
 * paged lists read (volumeRange, jobRange, nodeRange, rangeNamespaces).
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { StateStore, Table } from "../../src/server/state/store.js";
import { watchKeys, type WatchKey } from "../../src/server/state/watch_keys.js";
import { alloc, node, pluginInfo, volume, volumeJob } from "./builders.js";
import type { MakeStore } from "./state_store.js";

const tick = () => new Promise((r) => setImmediate(r));
const ids = (recs: { ID: string }[]) => recs.map((r) => r.ID);

export function runScaleConformance(name: string, makeStore: MakeStore): void {
  const withStore = async (fn: (s: StateStore) => Promise<void>) => {
    const { store, dispose } = await makeStore({ now: () => 1_000 });
    try {
      await fn(store);
    } finally {
      store.close();
      await dispose();
    }
  };

  describe(`StateStore conformance (issue 13): ${name}`, () => {
    test("a wait on watch keys wakes on a write of one of its objects only", () =>
      withStore(async (s) => {
        const job = volumeJob("j");
        const other = volumeJob("k");
        await s.txn((tx) => {
          tx.putNode(node("n1", { CSINodePlugins: { p1: pluginInfo("p1", "node") } }));
          tx.putNode(node("n2"));
          tx.putJob(job);
          tx.putJob(other);
          tx.putVolume(volume("v1"));
          tx.putVolume(volume("v2"));
          tx.putAlloc(alloc("a1", job, "n1"));
        });
        const ac = new AbortController();
        const woken = new Set<string>();
        const cases: [string, Table, WatchKey][] = [
          ["node n1", "nodes", watchKeys.node("n1")],
          ["job j", "jobs", watchKeys.job("default", "j")],
          ["alloc a1", "allocs", watchKeys.alloc("a1")],
          ["allocs of n1", "allocs", watchKeys.allocsOfNode("n1")],
          ["server allocs of n1", "allocs", watchKeys.serverAllocsOfNode("n1")],
          ["allocs of j", "allocs", watchKeys.allocsOfJob("default", "j")],
          ["volume v1", "volumes", watchKeys.volume("default", "v1")],
          ["plugin p1", "plugins", watchKeys.plugin("p1")],
        ];
        const arm = () => {
          woken.clear();
          for (const [label, table, key] of cases) {
            void s.waitFor([table], s.tableIndex(table), ac.signal, 60_000, [key]).then(
              () => woken.add(label),
              () => undefined,
            );
          }
        };
        arm();
        // Writes to other objects of the same tables.
        await s.txn((tx) => {
          tx.putNode(node("n2", { Name: "renamed" }));
          tx.putJob({ ...other, Meta: { x: "1" } });
          tx.putAlloc(alloc("a2", other, "n2"));
          tx.putVolume({ ...volume("v2"), Context: { x: "1" } });
        });
        await tick();
        assert.deepEqual([...woken], [], "writes to other objects wake none of them");
        ac.abort();
        await tick();

        const ac2 = new AbortController();
        const arm2 = () => {
          woken.clear();
          for (const [label, table, key] of cases) {
            void s.waitFor([table], s.tableIndex(table), ac2.signal, 60_000, [key]).then(
              () => woken.add(label),
              () => undefined,
            );
          }
        };
        arm2();
        await s.txn((tx) => tx.putAlloc({ ...alloc("a1", job, "n1"), ClientStatus: "running" }));
        await tick();
        assert.deepEqual(
          [...woken].sort(),
          ["alloc a1", "allocs of j", "allocs of n1", "server allocs of n1"],
          "an alloc update wakes the alloc, its node's and its job's allocs",
        );
        arm2();
        // The node's own report: everything but the node's wait for server writes, and
        // AllocModifyIndex stays where the server's last write put it (Nomad's rule).
        const before = s.getAlloc("a1")!;
        const reported = await s.txn((tx) =>
          tx.putAlloc({ ...before, ClientStatus: "complete" }, { fromClient: true }),
        );
        await tick();
        assert.deepEqual(
          [...woken].sort(),
          ["alloc a1", "allocs of j", "allocs of n1"],
          "a client's report does not wake the node's wait for server writes",
        );
        assert.equal(
          reported.AllocModifyIndex,
          before.AllocModifyIndex,
          "a client report keeps AllocModifyIndex",
        );
        assert.ok(reported.ModifyIndex > before.ModifyIndex, "a client report moves ModifyIndex");
        const serverWrite = await s.txn((tx) => tx.putAlloc({ ...reported, DesiredStatus: "stop" }));
        assert.equal(serverWrite.AllocModifyIndex, serverWrite.ModifyIndex, "a server write moves both");
        await tick();
        arm2();
        // The node plugin turns unhealthy: the node and its plugin move.
        await s.txn((tx) =>
          tx.putNode(node("n1", { CSINodePlugins: { p1: { ...pluginInfo("p1", "node"), Healthy: false } } })),
        );
        await tick();
        assert.deepEqual([...woken].sort(), ["node n1", "plugin p1"]);
        arm2();
        await s.txn((tx) => {
          tx.deleteVolume("default", "v1");
          tx.deleteAlloc("a1");
        });
        await tick();
        assert.deepEqual(
          [...woken].sort(),
          ["alloc a1", "allocs of j", "allocs of n1", "server allocs of n1", "volume v1"],
          "deletes wake as puts do",
        );
        ac2.abort();
        await tick();
      }));

    test("ordered runs: by ID within a namespace, bounded, prefixed, reversed, by plugin", () =>
      withStore(async (s) => {
        await s.txn((tx) => {
          for (const id of ["b", "a", "c", "ab", "d"])
            tx.putVolume(volume(id, { PluginID: id === "c" ? "p2" : "p1" }));
          tx.putVolume(volume("z", { Namespace: "other" }));
          tx.putJob(volumeJob("j2"));
          tx.putJob(volumeJob("j1"));
          tx.putJob(volumeJob("j1", { namespace: "other" }));
          for (const id of ["n3", "n1", "n2"]) tx.putNode(node(id));
        });
        const run = (q: Partial<Parameters<StateStore["volumeRange"]>[0]>) =>
          ids(
            s.volumeRange({ namespace: "default", from: "", reverse: false, prefix: "", limit: 100, ...q }),
          );
        assert.deepEqual(run({}), ["a", "ab", "b", "c", "d"]);
        assert.deepEqual(run({ limit: 2 }), ["a", "ab"]);
        assert.deepEqual(run({ from: "ab" }), ["ab", "b", "c", "d"], "from is inclusive");
        assert.deepEqual(run({ from: "b", reverse: true }), ["b", "ab", "a"]);
        assert.deepEqual(run({ prefix: "a" }), ["a", "ab"]);
        assert.deepEqual(run({ prefix: "a", reverse: true }), ["ab", "a"]);
        assert.deepEqual(run({ prefix: "a", from: "aa" }), ["ab"]);
        assert.deepEqual(run({ pluginId: "p1", from: "b" }), ["b", "d"]);
        assert.deepEqual(run({ namespace: "other" }), ["z"]);
        assert.deepEqual(run({ namespace: "none" }), []);
        assert.deepEqual(s.rangeNamespaces("volumes"), ["default", "other"]);
        assert.deepEqual(s.rangeNamespaces("jobs"), ["default", "other"]);
        const jobs = s.jobRange({ namespace: "default", from: "", reverse: true, prefix: "j", limit: 10 });
        assert.deepEqual(ids(jobs), ["j2", "j1"]);
        assert.deepEqual(ids(s.nodeRange({ from: "n2", reverse: false, prefix: "", limit: 10 })), [
          "n2",
          "n3",
        ]);
        assert.equal(
          s.volumeRange({ namespace: "default", from: "", reverse: false, prefix: "", limit: 1 })[0]!
            .PluginID,
          "p1",
        );
      }));
  });
}
