/**
 * The StateStore conformance suite (src/server/state/store.ts): every store implementation runs it
 * (today SQLite, from test/integration/server/sqlite_conformance.test.ts; etcd later). It checks
 * every method, the write index and per-table indexes, blocking-query (waitFor) semantics,
 * transaction atomicity and the derived plugin records, through the interface alone.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { StateStore, Table } from "../../src/server/state/store.js";
import { TABLES } from "../../src/server/state/store.js";
import { intentOf } from "../../src/structs/volume_intent.js";
import { newDeployment } from "../../src/structs/deployment.js";
import type { UpdateStrategy } from "../../src/structs/job_stanzas.js";
import { alloc, evaluation, node, pluginInfo, pluginJob, volume, volumeJob } from "./builders.js";

/** A fresh, empty store; `now` is the clock that stamps CSIPlugin.EmptySince. */
export type MakeStore = (opts: {
  now: () => number;
}) => Promise<{ store: StateStore; dispose: () => Promise<void> }>;

const ids = (recs: { ID: string }[]) => recs.map((r) => r.ID);
const sortedIds = (recs: { ID: string }[]) => ids(recs).sort();
const tick = () => new Promise((r) => setImmediate(r));

export function runStateStoreConformance(name: string, makeStore: MakeStore): void {
  /** Runs `fn` on a fresh store (clock at `clock.now`), closing and disposing it after. */
  const withStore = async (fn: (s: StateStore, clock: { now: number }) => Promise<void>) => {
    const clock = { now: 1_000 };
    const { store, dispose } = await makeStore({ now: () => clock.now });
    try {
      await fn(store, clock);
    } finally {
      store.close();
      await dispose();
    }
  };
  const indexes = (s: StateStore) => Object.fromEntries(TABLES.map((t) => [t, s.tableIndex(t)]));

  describe(`StateStore conformance: ${name}`, () => {
    test("an empty store is at index 0 everywhere and finds nothing", () =>
      withStore(async (s) => {
        assert.equal(s.index(), 0);
        for (const t of TABLES) assert.equal(s.tableIndex(t), 0, t);
        assert.equal(s.getNode("n1"), undefined);
        assert.equal(s.getJob("default", "j"), undefined);
        assert.equal(s.getAlloc("a1"), undefined);
        assert.equal(s.getVolume("default", "v1"), undefined);
        assert.equal(s.getPlugin("p1"), undefined);
        assert.equal(s.getEval("e1"), undefined);
        assert.deepEqual(
          [s.listNodes(), s.listJobs(), s.listAllocs(), s.listVolumes(), s.listPlugins(), s.listEvals()],
          [[], [], [], [], [], []],
        );
        // Nothing is quarantined in a new store; dropping an unknown entry answers false.
        assert.deepEqual(s.quarantined(), []);
        assert.equal(await s.dropQuarantined("jobs", "default", "j"), false);
      }));

    test("each write commits at one new index, stamps its records and moves only the tables it touched", () =>
      withStore(async (s) => {
        const job = volumeJob("j");
        const writes: [Table, (tx: Parameters<Parameters<StateStore["txn"]>[0]>[0]) => unknown][] = [
          ["nodes", (tx) => tx.putNode(node("n1"))],
          ["jobs", (tx) => tx.putJob(job)],
          ["allocs", (tx) => tx.putAlloc(alloc("a1", job, "n1"))],
          ["volumes", (tx) => tx.putVolume(volume("v1"))],
          ["evals", (tx) => tx.putEval(evaluation("e1", job))],
        ];
        for (const [i, [table, write]] of writes.entries()) {
          const before = indexes(s);
          const rec = (await s.txn((tx) => {
            assert.equal(tx.writeIndex, i + 1, "writeIndex is the index this txn commits at");
            return write(tx);
          })) as { CreateIndex: number; ModifyIndex: number };
          assert.equal(s.index(), i + 1);
          assert.deepEqual([rec.CreateIndex, rec.ModifyIndex], [i + 1, i + 1], table);
          // A job's put stores its version too (table `versions`).
          const alsoVersions = table === "jobs" ? { versions: i + 1 } : {};
          assert.deepEqual(indexes(s), { ...before, [table]: i + 1, ...alsoVersions }, `only ${table} moves`);
        }
        const n = await s.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, Name: "renamed" }));
        assert.deepEqual([n.CreateIndex, n.ModifyIndex, s.index()], [1, 6, 6], "CreateIndex is kept");
        const a = s.getAlloc("a1")!;
        assert.equal(a.AllocModifyIndex, 3);
      }));

    test("each delete commits at a new index and moves only the table it touched", () =>
      withStore(async (s) => {
        const job = volumeJob("j");
        await s.txn((tx) => {
          tx.putNode(node("n1"));
          tx.putJob(job);
          tx.putAlloc(alloc("a1", job, "n1"));
          tx.putVolume(volume("v1"));
          tx.putEval(evaluation("e1", job));
        });
        const deletes: [Table, (tx: Parameters<Parameters<StateStore["txn"]>[0]>[0]) => void][] = [
          ["nodes", (tx) => tx.deleteNode("n1")],
          ["jobs", (tx) => tx.deleteJob("default", "j")],
          ["allocs", (tx) => tx.deleteAlloc("a1")],
          ["volumes", (tx) => tx.deleteVolume("default", "v1")],
          ["evals", (tx) => tx.deleteEval("e1")],
        ];
        for (const [i, [table, del]] of deletes.entries()) {
          const before = indexes(s);
          await s.txn(del);
          assert.equal(s.index(), i + 2, table);
          // A job's delete deletes its versions too (table `versions`).
          const alsoVersions = table === "jobs" ? { versions: i + 2 } : {};
          assert.deepEqual(indexes(s), { ...before, [table]: i + 2, ...alsoVersions }, `only ${table} moves`);
        }
      }));

    test("a volume put is a no-op exactly when nothing but its indexes would change, at any index", () =>
      withStore(async (s) => {
        await s.txn((tx) => tx.putVolume(volume("v1", { Name: "a" })));
        // Nine other writes: the next index has two digits where the volume's has one.
        for (let i = 0; i < 9; i++) await s.txn((tx) => tx.putNode(node(`n${i}`)));
        const at = s.index();
        assert.equal(at, 10);
        await s.txn((tx) => tx.putVolume(tx.getVolume("default", "v1")!));
        assert.equal(s.index(), at, "the unchanged volume was not written");
        assert.equal(s.getVolume("default", "v1")!.ModifyIndex, 1);
        // One letter for another: the length a no-op would have (shorter by the digit the index
        // gained) is not this change's, and the change is written all the same.
        await s.txn((tx) => tx.putVolume({ ...tx.getVolume("default", "v1")!, Name: "b" }));
        assert.equal(s.getVolume("default", "v1")!.Name, "b");
        assert.equal(s.getVolume("default", "v1")!.ModifyIndex, 11);
        // A change of the no-op's length exactly: one letter for another, an index of as many digits.
        await s.txn((tx) => tx.putVolume({ ...tx.getVolume("default", "v1")!, Name: "c" }));
        assert.equal(s.getVolume("default", "v1")!.Name, "c", "a change of the no-op's length is written");
        assert.equal(s.getVolume("default", "v1")!.ModifyIndex, 12);
      }));

    test("a no-op put and a txn that writes nothing change no index", () =>
      withStore(async (s) => {
        const job = volumeJob("j");
        await s.txn((tx) => {
          tx.putNode(node("n1"));
          tx.putJob(job);
          tx.putAlloc(alloc("a1", job, "n1"));
          tx.putVolume(volume("v1"));
          tx.putEval(evaluation("e1", job));
        });
        const before = indexes(s);
        const again = await s.txn((tx) => {
          const n = tx.putNode(node("n1"));
          tx.putJob(job);
          tx.putAlloc(alloc("a1", job, "n1"));
          tx.putVolume(volume("v1"));
          tx.putEval(evaluation("e1", job));
          tx.deleteNode("missing");
          tx.deleteJob("default", "missing");
          tx.deleteAlloc("missing");
          tx.deleteVolume("default", "missing");
          tx.deleteEval("missing");
          assert.equal(tx.deletePlugin("missing"), false);
          return n;
        });
        assert.equal(again.ModifyIndex, 1, "a no-op put returns the stored record");
        assert.equal(s.index(), 1);
        assert.deepEqual(indexes(s), before);
        assert.equal(await s.txn(() => 42), 42, "txn returns fn's result");
        assert.equal(s.index(), 1);
      }));

    test("nodes: put, get, list, delete", () =>
      withStore(async (s) => {
        await s.txn((tx) => {
          tx.putNode(node("n2"));
          tx.putNode(node("n1", { Datacenter: "dc2" }));
        });
        assert.equal(s.getNode("n1")!.Datacenter, "dc2");
        assert.deepEqual(sortedIds(s.listNodes()), ["n1", "n2"]);
        await s.txn((tx) => tx.deleteNode("n1"));
        assert.equal(s.getNode("n1"), undefined);
        assert.deepEqual(ids(s.listNodes()), ["n2"]);
        assert.equal(s.tableIndex("nodes"), 2);
      }));

    test("jobs: put, get, list by namespace and all, delete", () =>
      withStore(async (s) => {
        await s.txn((tx) => {
          tx.putJob(volumeJob("a"));
          tx.putJob(volumeJob("b", { namespace: "prod" }));
          tx.putJob(volumeJob("a", { namespace: "prod" }));
        });
        assert.equal(s.getJob("prod", "b")!.Namespace, "prod");
        assert.equal(s.getJob("default", "b"), undefined);
        assert.deepEqual(
          s
            .listJobs()
            .map((j) => `${j.Namespace}/${j.ID}`)
            .sort(),
          ["default/a", "prod/a", "prod/b"],
        );
        assert.deepEqual(sortedIds(s.listJobs("prod")), ["a", "b"]);
        assert.deepEqual(s.listJobs("none"), []);
        await s.txn((tx) => tx.deleteJob("prod", "a"));
        assert.equal(s.getJob("prod", "a"), undefined);
        assert.ok(s.getJob("default", "a"), "the same ID in another namespace stays");
      }));

    test("allocs: put, get, list, by node, by job, by volume (per_alloc resolved), delete", () =>
      withStore(async (s) => {
        const per = volumeJob("per", { source: "vol", perAlloc: true, count: 2 });
        const shared = volumeJob("shared", { namespace: "prod", source: "vol1" });
        await s.txn((tx) => {
          tx.putAlloc(alloc("a0", per, "n1", 0));
          tx.putAlloc(alloc("a1", per, "n2", 1));
          tx.putAlloc(alloc("b0", shared, "n1", 0));
        });
        assert.equal(s.getAlloc("a1")!.NodeID, "n2");
        assert.deepEqual(sortedIds(s.listAllocs()), ["a0", "a1", "b0"]);
        assert.deepEqual(sortedIds(s.listAllocs("prod")), ["b0"]);
        assert.deepEqual(sortedIds(s.allocsByNode("n1")), ["a0", "b0"]);
        assert.deepEqual(sortedIds(s.allocsByJob("default", "per")), ["a0", "a1"]);
        assert.deepEqual(s.allocsByJob("prod", "per"), []);
        assert.deepEqual(ids(s.allocsByVolume("default", "vol[0]")), ["a0"]);
        assert.deepEqual(ids(s.allocsByVolume("default", "vol[1]")), ["a1"]);
        assert.deepEqual(ids(s.allocsByVolume("prod", "vol1")), ["b0"]);
        assert.deepEqual(s.allocsByVolume("default", "vol1"), [], "volumes are per namespace");

        await s.txn((tx) => tx.putAlloc({ ...tx.getAlloc("a0")!, NodeID: "n3" }));
        assert.deepEqual(ids(s.allocsByNode("n1")), ["b0"], "a moved alloc leaves its old node's index");
        assert.deepEqual(ids(s.allocsByNode("n3")), ["a0"]);
        await s.txn((tx) => tx.deleteAlloc("a1"));
        assert.equal(s.getAlloc("a1"), undefined);
        assert.deepEqual(s.allocsByVolume("default", "vol[1]"), []);
        assert.deepEqual(ids(s.allocsByJob("default", "per")), ["a0"]);
        assert.deepEqual(s.allocsByNode("n2"), []);
      }));

    test("allocs: whether a job has a live alloc of one incarnation", () =>
      withStore(async (s) => {
        const job = { ...volumeJob("web", { source: "vol" }), CreateIndex: 7 };
        const older = { ...job, CreateIndex: 3 };
        await s.txn((tx) => {
          tx.putAlloc(alloc("old", older, "n1", 0));
          tx.putAlloc(alloc("new", job, "n2", 0));
        });
        assert.equal(s.hasLiveAllocOfJob("default", "web", 7), true);
        assert.equal(s.hasLiveAllocOfJob("default", "web", 3), true, "the older incarnation's own");
        assert.equal(s.hasLiveAllocOfJob("default", "web", 9), false, "no alloc of that incarnation");
        assert.equal(s.hasLiveAllocOfJob("prod", "web", 7), false, "jobs are per namespace");
        await s.txn((tx) => tx.putAlloc({ ...tx.getAlloc("new")!, ClientStatus: "complete" }));
        assert.equal(s.hasLiveAllocOfJob("default", "web", 7), false, "a terminal alloc is not live");
        assert.equal(s.hasLiveAllocOfJob("default", "web", 3), true);
        // Inside a transaction the answer includes the transaction's own writes.
        const seen = await s.txn((tx) => {
          tx.putAlloc({ ...tx.getAlloc("old")!, DesiredStatus: "stop", ClientStatus: "failed" });
          tx.putAlloc(alloc("again", job, "n2", 1));
          return [tx.hasLiveAllocOfJob("default", "web", 3), tx.hasLiveAllocOfJob("default", "web", 7)];
        });
        assert.deepEqual(seen, [false, true]);
        await s.txn((tx) => tx.deleteAlloc("again"));
        assert.equal(s.hasLiveAllocOfJob("default", "web", 7), false, "a deleted alloc is gone");
      }));

    test("volumes: put, get, list by namespace, plugin or both, delete", () =>
      withStore(async (s) => {
        await s.txn((tx) => {
          tx.putVolume(volume("v1"));
          tx.putVolume(volume("v2", { PluginID: "p2" }));
          tx.putVolume(volume("v1", { Namespace: "prod" }));
        });
        assert.equal(s.getVolume("prod", "v1")!.Namespace, "prod");
        assert.equal(s.listVolumes().length, 3);
        assert.equal(s.listVolumes({}).length, 3);
        assert.deepEqual(sortedIds(s.listVolumes({ namespace: "default" })), ["v1", "v2"]);
        assert.deepEqual(
          s
            .listVolumes({ pluginId: "p1" })
            .map((v) => `${v.Namespace}/${v.ID}`)
            .sort(),
          ["default/v1", "prod/v1"],
        );
        assert.deepEqual(ids(s.listVolumes({ pluginId: "p1", namespace: "prod" })), ["v1"]);
        assert.deepEqual(s.listVolumes({ pluginId: "p2", namespace: "prod" }), []);
        await s.txn((tx) => tx.deleteVolume("default", "v1"));
        assert.equal(s.getVolume("default", "v1"), undefined);
        assert.ok(s.getVolume("prod", "v1"));
        assert.equal(s.tableIndex("volumes"), 2);
      }));

    test("evals: put, get, oldest first overall, by namespace and by job; they outlive their job", () =>
      withStore(async (s) => {
        const j = volumeJob("j");
        const k = volumeJob("k", { namespace: "prod" });
        await s.txn((tx) => {
          tx.putJob(j);
          tx.putEval(evaluation("e-z", j));
          tx.putEval(evaluation("e-a", k));
        });
        await s.txn((tx) => tx.putEval(evaluation("e-m", j)));
        await s.txn((tx) => tx.putEval({ ...tx.getEval("e-z")!, Status: "blocked" }));
        assert.equal(s.getEval("e-z")!.Status, "blocked");
        assert.deepEqual(ids(s.listEvals()), ["e-z", "e-a", "e-m"], "by CreateIndex, then put order");
        assert.deepEqual(ids(s.listEvals("default")), ["e-z", "e-m"]);
        assert.deepEqual(ids(s.evalsByJob("default", "j")), ["e-z", "e-m"]);
        assert.deepEqual(ids(s.evalsByJob("prod", "k")), ["e-a"]);
        await s.txn((tx) => tx.deleteJob("default", "j"));
        assert.deepEqual(ids(s.evalsByJob("default", "j")), ["e-z", "e-m"]);
        await s.txn((tx) => tx.deleteEval("e-z"));
        assert.equal(s.getEval("e-z"), undefined);
        assert.deepEqual(ids(s.listEvals()), ["e-a", "e-m"]);
      }));

    test("records are fresh copies: mutating one never changes the store", () =>
      withStore(async (s) => {
        const put = await s.txn((tx) => tx.putNode(node("n1")));
        put.Name = "mutated";
        const got = s.getNode("n1")!;
        got.Datacenter = "mutated";
        s.listNodes()[0]!.Status = "down";
        assert.deepEqual(
          [s.getNode("n1")!.Name, s.getNode("n1")!.Datacenter, s.getNode("n1")!.Status],
          ["n1", "dc1", "ready"],
        );
      }));

    test("a txn sees its own writes; one that throws writes nothing, moves no index and wakes no one", () =>
      withStore(async (s) => {
        await s.txn((tx) => tx.putNode(node("n0")));
        const before = indexes(s);
        let woke = false;
        const ac = new AbortController();
        const waiting = s.waitFor([...TABLES], 1, ac.signal, 10_000).then(() => (woke = true));
        const job = volumeJob("j");
        await assert.rejects(
          s.txn((tx) => {
            tx.putNode(node("n1", { CSINodePlugins: { p1: pluginInfo("p1", "node") } }));
            tx.putJob(job);
            tx.putJob(pluginJob("plug", "p1"));
            tx.putAlloc(alloc("a1", job, "n1"));
            tx.putVolume(volume("vol1"));
            tx.putEval(evaluation("e1", job));
            tx.deleteNode("n0");
            assert.equal(tx.getNode("n1")!.ID, "n1", "reads see the txn's writes");
            assert.equal(tx.getPlugin("p1")!.NodesHealthy, 1, "and the plugins they derive");
            assert.deepEqual(ids(tx.allocsByVolume("default", "vol1")), ["a1"]);
            throw new Error("boom");
          }),
          /boom/,
        );
        await tick();
        assert.equal(woke, false);
        assert.equal(s.index(), 1);
        assert.deepEqual(indexes(s), before);
        assert.ok(s.getNode("n0"), "the delete is undone too");
        assert.equal(s.getNode("n1"), undefined);
        assert.deepEqual(
          [s.listJobs(), s.listAllocs(), s.listVolumes(), s.listPlugins(), s.listEvals()],
          [[], [], [], [], []],
        );
        assert.deepEqual(s.allocsByVolume("default", "vol1"), []);
        assert.equal(
          (await s.txn((tx) => tx.putVolume(volume("v2")))).ModifyIndex,
          2,
          "the next write takes the next index",
        );
        await waiting;
        ac.abort();
      }));

    test("waitFor: answers at once when past minIndex, wakes on its tables only, times out, aborts", () =>
      withStore(async (s) => {
        await s.txn((tx) => tx.putNode(node("n1")));
        assert.equal(await s.waitFor(["nodes"], 0, undefined, 10_000), 1, "already past: at once");

        let volumesWoke = 0;
        const volumes = s.waitFor(["volumes"], 1, undefined, 10_000).then((i) => (volumesWoke = i));
        let eitherWoke = 0;
        const either = s.waitFor(["jobs", "evals"], 1, undefined, 10_000).then((i) => (eitherWoke = i));
        await s.txn((tx) => tx.putNode(node("n2")));
        await tick();
        assert.deepEqual([volumesWoke, eitherWoke], [0, 0], "a write to another table wakes no one");
        await s.txn((tx) => tx.putEval(evaluation("e1", volumeJob("j"))));
        assert.equal(await either, 3, "any of its tables moving wakes it, with the new index");
        await tick();
        assert.equal(volumesWoke, 0);
        await s.txn((tx) => tx.putVolume(volume("v1")));
        assert.equal(await volumes, 4);

        const t0 = Date.now();
        assert.equal(await s.waitFor(["volumes"], 4, undefined, 50), 4, "times out with the current index");
        assert.ok(Date.now() - t0 >= 40);

        const ac = new AbortController();
        const aborted = s.waitFor(["jobs"], 10, ac.signal, 10_000);
        ac.abort();
        await assert.rejects(aborted, (e: Error) => e.name === "AbortError");
        await assert.rejects(
          s.waitFor(["jobs"], 10, ac.signal, 10_000),
          (e: Error) => e.name === "AbortError",
        );

        const derived = s.waitFor(["plugins"], s.tableIndex("plugins"), undefined, 10_000);
        await s.txn((tx) => tx.putNode(node("n3", { CSINodePlugins: { p1: pluginInfo("p1", "node") } })));
        assert.equal(await derived, 5, "a derived plugin change wakes plugin watchers");
      }));

    test("close wakes every waiter", () =>
      withStore(async (s) => {
        const p = s.waitFor(["nodes"], 0, undefined, 60_000);
        s.close();
        assert.equal(await p, 0);
      }));

    test("plugins: derived from node fingerprints, moved by node status, dropped with the node", () =>
      withStore(async (s) => {
        await s.txn((tx) => {
          tx.putNode(
            node("n1", {
              CSINodePlugins: { p1: pluginInfo("p1", "node") },
              CSIControllerPlugins: { p1: pluginInfo("p1", "controller") },
            }),
          );
          tx.putNode(node("n2", { CSINodePlugins: { p1: pluginInfo("p1", "node", { Healthy: false }) } }));
        });
        let p = s.getPlugin("p1")!;
        assert.deepEqual(
          [p.NodesHealthy, Object.keys(p.Nodes).sort(), p.ControllersHealthy, p.ControllerRequired],
          [1, ["n1", "n2"], 1, true],
        );
        assert.deepEqual(
          [p.Provider, p.Version, p.CreateIndex, p.ModifyIndex],
          ["example.csi", "1.0.0", 1, 1],
        );
        assert.deepEqual(ids(s.listPlugins()), ["p1"]);

        const pluginIdx = s.tableIndex("plugins");
        await s.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, StatusUpdatedAt: 5 }));
        assert.equal(s.tableIndex("plugins"), pluginIdx, "a heartbeat does not move the plugin");

        await s.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, Status: "down" }));
        p = s.getPlugin("p1")!;
        assert.deepEqual([p.NodesHealthy, p.ControllersHealthy, p.ModifyIndex], [0, 0, 3]);
        assert.equal(s.getNode("n1")!.CSINodePlugins.p1!.Healthy, true, "the node keeps its fingerprint");
        await s.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, Status: "ready" }));
        assert.equal(s.getPlugin("p1")!.NodesHealthy, 1);

        await s.txn((tx) => tx.deleteNode("n1"));
        p = s.getPlugin("p1")!;
        assert.deepEqual(
          [Object.keys(p.Nodes), Object.keys(p.Controllers), p.ControllerRequired],
          [["n2"], [], false],
        );
      }));

    test("plugins: the summary counts the full record; the healthy-instance index follows health and status", () =>
      withStore(async (s) => {
        const healthy = (side: "controller" | "node") => [...s.healthyPluginInstances("p1", side).keys()];
        await s.txn((tx) => {
          tx.putNode(
            node("n1", {
              CSINodePlugins: { p1: pluginInfo("p1", "node") },
              CSIControllerPlugins: { p1: pluginInfo("p1", "controller") },
            }),
          );
          tx.putNode(node("n2", { CSINodePlugins: { p1: pluginInfo("p1", "node", { Healthy: false }) } }));
          tx.putNode(node("n3", { CSINodePlugins: { p1: pluginInfo("p1", "node") } }));
          tx.putJob(pluginJob("plug", "p1", { count: 3 }));
        });
        const summary = () => {
          const full = s.getPlugin("p1")!;
          const { Controllers: _c, Nodes: _n, ...rest } = full;
          return { rest, counts: [Object.keys(full.Controllers).length, Object.keys(full.Nodes).length] };
        };
        const expectSummary = () => {
          const { Instances, ...rest } = s.pluginSummary("p1")!;
          const want = summary();
          assert.deepEqual(rest, want.rest, "the summary is the full record without its instances");
          assert.deepEqual([Instances.Controllers, Instances.Nodes], want.counts);
          assert.deepEqual(s.listPlugins(), [s.pluginSummary("p1")], "the list holds the summaries");
        };
        expectSummary();
        assert.deepEqual([healthy("node"), healthy("controller")], [["n1", "n3"], ["n1"]]);
        assert.equal(s.pluginSummary("missing"), undefined);
        assert.equal(s.healthyPluginInstances("missing", "node").size, 0);

        await s.txn((tx) => tx.putNode({ ...tx.getNode("n1")!, Status: "down" }));
        assert.deepEqual([healthy("node"), healthy("controller")], [["n3"], []], "none on a down node");
        expectSummary();
        await s.txn((tx) => {
          tx.putNode({ ...tx.getNode("n1")!, Status: "ready" });
          tx.putNode({ ...tx.getNode("n2")!, CSINodePlugins: { p1: pluginInfo("p1", "node") } });
          tx.deleteNode("n3");
        });
        assert.deepEqual([healthy("node"), healthy("controller")], [["n1", "n2"], ["n1"]]);
        // The same index paged after a node ID, as a controller call picks its candidates.
        const after = (side: "controller" | "node", from: string, limit: number) =>
          s.healthyPluginInstancesAfter("p1", side, from, limit).map(([id, info]) => [id, info.Healthy]);
        assert.deepEqual(after("node", "", 1), [["n1", true]]);
        assert.deepEqual(after("node", "n1", 5), [["n2", true]]);
        assert.deepEqual(after("node", "n2", 5), []);
        assert.deepEqual(after("controller", "", 5), [["n1", true]]);
        assert.deepEqual(s.healthyPluginInstancesAfter("missing", "node", "", 5), []);
        expectSummary();
        assert.deepEqual([s.pluginSummary("p1")!.NodesHealthy, s.pluginSummary("p1")!.NodesExpected], [2, 3]);
      }));

    test("plugins: jobs set expected counts; an empty plugin is stamped and only then deletable", () =>
      withStore(async (s, clock) => {
        await s.txn((tx) => tx.putJob(pluginJob("plug", "p1", { count: 3 })));
        let p = s.getPlugin("p1")!;
        assert.deepEqual([p.NodesExpected, p.ControllersExpected, p.EmptySince], [3, 0, 0]);
        assert.deepEqual(Object.keys(p.NodeJobs.default!), ["plug"]);
        assert.equal(await s.txn((tx) => tx.deletePlugin("p1")), false, "a plugin with a job is kept");

        clock.now = 5_000;
        await s.txn((tx) => tx.putJob({ ...tx.getJob("default", "plug")!, Stop: true }));
        p = s.getPlugin("p1")!;
        assert.deepEqual([p.NodesExpected, Object.keys(p.NodeJobs), p.EmptySince], [0, [], 5_000]);
        clock.now = 9_000;
        await s.txn((tx) => tx.putNode(node("n1", { Name: "unrelated" })));
        assert.equal(s.getPlugin("p1")!.EmptySince, 5_000, "EmptySince is kept while it stays empty");

        const before = s.tableIndex("plugins");
        assert.equal(await s.txn((tx) => tx.deletePlugin("p1")), true);
        assert.equal(s.getPlugin("p1"), undefined);
        assert.ok(before < s.index());
        assert.equal(s.tableIndex("plugins"), s.index(), "the delete moves the plugins index");
      }));

    test("plugins: a system job expects its live allocs, seen within the txn that places them", () =>
      withStore(async (s) => {
        const sys = pluginJob("sys", "p1", { type: "system", side: "monolith" });
        await s.txn((tx) => tx.putJob(sys));
        assert.deepEqual([s.getPlugin("p1")!.NodesExpected, s.getPlugin("p1")!.ControllersExpected], [0, 0]);
        await s.txn((tx) => {
          tx.putAlloc(alloc("a1", sys, "n1"));
          tx.putAlloc(alloc("a2", sys, "n2"));
          assert.equal(tx.getPlugin("p1")!.NodesExpected, 2, "a read in the same txn sees the new count");
          tx.putAlloc(alloc("a3", sys, "n3"));
        });
        assert.deepEqual([s.getPlugin("p1")!.NodesExpected, s.getPlugin("p1")!.ControllersExpected], [3, 3]);
        await s.txn((tx) => tx.putAlloc({ ...tx.getAlloc("a1")!, ClientStatus: "running" }));
        assert.equal(s.getPlugin("p1")!.NodesExpected, 3, "still live");
        await s.txn((tx) => {
          tx.putAlloc({ ...tx.getAlloc("a1")!, ClientStatus: "complete" });
          tx.deleteAlloc("a2");
        });
        assert.equal(s.getPlugin("p1")!.NodesExpected, 1, "terminal and deleted allocs no longer count");
        await s.txn((tx) => tx.deleteJob("default", "sys"));
        assert.deepEqual(
          [s.getPlugin("p1")!.NodesExpected, Object.keys(s.getPlugin("p1")!.NodeJobs)],
          [0, []],
        );
      }));

    test("volume create intents: stamped, listed by namespace and ID, seen in their txn, own table index", () =>
      withStore(async (s) => {
        const intent = (ns: string, id: string) => intentOf({ ...volume(id), Namespace: ns }, 1);
        const put = await s.txn((tx) => {
          tx.putVolumeIntent(intent("default", "b"));
          const rec = tx.putVolumeIntent(intent("default", "a"));
          assert.equal(tx.getVolumeIntent("default", "a")?.ID, "a", "a txn sees its own writes");
          return rec;
        });
        assert.deepEqual([put.CreateIndex, put.ModifyIndex], [1, 1]);
        await s.txn((tx) => tx.putVolumeIntent(intent("other", "a")));
        assert.deepEqual(
          s.listVolumeIntents().map((i) => `${i.Namespace}/${i.ID}`),
          ["default/a", "default/b", "other/a"],
        );
        assert.deepEqual(indexes(s), { ...Object.fromEntries(TABLES.map((t) => [t, 0])), intents: 2 });
        await s.txn((tx) => tx.deleteVolumeIntent("default", "a"));
        assert.equal(s.getVolumeIntent("default", "a"), undefined);
        assert.equal(s.getVolumeIntent("other", "a")?.ID, "a");
        assert.equal(s.tableIndex("intents"), 3);
      }));

    test("deployments: put, get, oldest first, by namespace and by job; own table index; a purge takes them", () =>
      withStore(async (s) => {
        const u: UpdateStrategy = {
          Stagger: 0,
          MaxParallel: 1,
          HealthCheck: "task_states",
          MinHealthyTime: 0,
          HealthyDeadline: 0,
          ProgressDeadline: 0,
          Canary: 1,
          AutoRevert: false,
          AutoPromote: false,
        };
        const j = volumeJob("j");
        const k = volumeJob("k", { namespace: "prod" });
        const dep = (id: string, job: typeof j) =>
          newDeployment(id, job, { g: { total: 1, canaries: 1, update: u } }, 5);
        await s.txn((tx) => {
          tx.putDeployment(dep("d-z", j));
          tx.putDeployment(dep("d-a", k));
          assert.equal(tx.getDeployment("d-z")?.ID, "d-z", "a txn sees its own writes");
        });
        await s.txn((tx) => tx.putDeployment(dep("d-m", j)));
        assert.equal(s.tableIndex("deployments"), 2);
        await s.txn((tx) => tx.putDeployment({ ...tx.getDeployment("d-z")!, Status: "successful" }));
        const z = s.getDeployment("d-z")!;
        assert.deepEqual([z.Status, z.CreateIndex, z.ModifyIndex], ["successful", 1, 3]);
        assert.deepEqual(z.TaskGroups.g?.DesiredCanaries, 1);
        assert.deepEqual(ids(s.listDeployments()), ["d-z", "d-a", "d-m"]);
        assert.deepEqual(ids(s.listDeployments("default")), ["d-z", "d-m"]);
        assert.deepEqual(ids(s.deploymentsByJob("default", "j")), ["d-z", "d-m"]);
        assert.deepEqual(ids(s.deploymentsByJob("prod", "k")), ["d-a"]);
        const before = s.index();
        await s.txn((tx) => tx.putDeployment(tx.getDeployment("d-m")!));
        assert.equal(s.index(), before, "an unchanged put writes nothing");
        await s.txn((tx) => tx.deleteDeployment("d-z"));
        assert.equal(s.getDeployment("d-z"), undefined);
        assert.equal(s.tableIndex("deployments"), before + 1);
        // Deleting the job (a purge) deletes its deployments, and only its own.
        await s.txn((tx) => tx.putJob(j));
        await s.txn((tx) => tx.deleteJob("default", "j"));
        assert.deepEqual(ids(s.deploymentsByJob("default", "j")), []);
        assert.deepEqual(ids(s.listDeployments()), ["d-a"]);
        assert.equal(s.tableIndex("deployments"), s.index(), "the purge moved the deployments index");
      }));

    test("job versions: every put stores its version, newest first, 6 kept (the newest stable too), gone with the job", () =>
      withStore(async (s) => {
        const j = volumeJob("j");
        await s.txn((tx) => tx.putJob({ ...j, Version: 0 }));
        assert.deepEqual(
          s.jobVersions("default", "j").map((v) => v.Version),
          [0],
        );
        assert.equal(s.tableIndex("versions"), 1);
        await s.txn((tx) => tx.putJob({ ...tx.getJob("default", "j")!, Stable: true }));
        assert.equal(s.jobVersions("default", "j")[0]?.Stable, true, "a version follows its job record");
        for (let v = 1; v <= 6; v++) {
          await s.txn((tx) => tx.putJob({ ...tx.getJob("default", "j")!, Version: v, Stable: false }));
        }
        assert.deepEqual(
          s.jobVersions("default", "j").map((v) => v.Version),
          [6, 5, 4, 3, 2, 0],
          "the stable version 0 is kept, version 1 dropped in its place",
        );
        await s.txn((tx) => tx.putJob({ ...tx.getJob("default", "j")!, Version: 7 }));
        assert.deepEqual(
          s.jobVersions("default", "j").map((v) => v.Version),
          [7, 6, 5, 4, 3, 0],
        );
        assert.deepEqual(s.jobVersions("prod", "j"), []);
        await s.txn((tx) => tx.deleteJob("default", "j"));
        assert.deepEqual(s.jobVersions("default", "j"), []);
      }));
  });
}
