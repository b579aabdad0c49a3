/**
 * Two etcd stores on one real etcd, as two servers: each reads what the other writes, its blocking
 * queries and commit listeners wake on the other's commits, concurrent writes from both interleave
 * at distinct indexes, and two claims of one single-node-writer volume made at the same instant
 * through the real claim endpoint (src/server/rpc/claim.ts), one on each server, never both win.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { KeyedMutex } from "../../../src/internal/keyed_mutex.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { ServerDeps } from "../../../src/server/deps.js";
import { ClaimEndpoint } from "../../../src/server/rpc/claim.js";
import { NodeListCache } from "../../../src/server/scheduler/node_list_cache.js";
import type { CommittedTxn } from "../../../src/server/state/commit_feed.js";
import { EtcdStateStore } from "../../../src/server/state/etcd/etcd_store.js";
import type { StateStore } from "../../../src/server/state/store.js";
import { watchKeys } from "../../../src/server/state/watch_keys.js";
import { alloc, node, pluginInfo, volume, volumeJob } from "../../conformance/builders.js";
import { startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";

let etcd: EtcdServer;
let prefixes = 0;
const opened: EtcdStateStore[] = [];
before(async () => {
  etcd = await startEtcd();
});
after(async () => {
  for (const s of opened) s.close();
  await etcd.stop();
});

/** Two stores (servers) on one fresh prefix. */
async function twoServers(): Promise<[EtcdStateStore, EtcdStateStore]> {
  const prefix = `/two/${++prefixes}`;
  const a = await EtcdStateStore.open({ endpoints: [etcd.endpoint], prefix });
  opened.push(a);
  const b = await EtcdStateStore.open({ endpoints: [etcd.endpoint], prefix });
  opened.push(b);
  return [a, b];
}

/** Resolves once `s` has applied index `i` (its watch delivers other servers' commits). */
async function caughtUp(s: StateStore, i: number): Promise<void> {
  while (s.index() < i) await s.waitFor(["nodes", "volumes", "allocs", "jobs"], s.index(), undefined, 5_000);
}

describe("two etcd stores on one etcd (two servers)", () => {
  test("a write on one is read on the other, wakes its keyed waiter and feeds its commit listeners", async () => {
    const [a, b] = await twoServers();
    const waiting = b.waitFor(["nodes"], b.index(), undefined, 10_000, [watchKeys.node("n1")]);
    const fed: CommittedTxn[] = [];
    b.onCommit((t) => fed.push(t));
    await a.txn((tx) => tx.putNode(node("n1", { CSINodePlugins: { p1: pluginInfo("p1", "node") } })));
    assert.equal(await waiting, 1, "b's waiter on node n1 woke at a's index");
    assert.deepEqual(b.getNode("n1"), a.getNode("n1"));
    assert.equal(b.pluginSummary("p1")?.NodesHealthy, 1, "the plugin a derived is b's too");
    assert.deepEqual([...b.healthyPluginInstances("p1", "node").keys()], ["n1"]);
    assert.equal(b.tableIndex("plugins"), 1);
    assert.deepEqual(
      fed.map((t) => [t.index, t.changes.map((c) => `${c.table}/${c.id}/${c.op}`).sort()]),
      [[1, ["nodes/n1/put", "plugins/p1/put"]]],
    );

    const unrelated = a.waitFor(["nodes"], 1, undefined, 10_000, [watchKeys.node("n1")]);
    let woke = false;
    void unrelated.then(() => (woke = true));
    await b.txn((tx) => tx.putNode(node("n2")));
    await caughtUp(a, 2);
    assert.equal(woke, false, "a write of n2 (on b) does not wake a's waiter on n1");
    await b.txn((tx) => tx.deleteNode("n1"));
    assert.equal(await unrelated, 3, "deleting n1 on b wakes it");
    assert.equal(a.getNode("n1"), undefined);
    assert.equal(a.pluginSummary("p1")?.NodesHealthy, 0);
  });

  test("concurrent writes on both take distinct indexes, and both replicas end identical", async () => {
    const [a, b] = await twoServers();
    const writes: Promise<number>[] = [];
    for (let i = 0; i < 40; i++) {
      const s = i % 2 === 0 ? a : b;
      writes.push(
        s.txn((tx) => {
          const n = tx.getNode("counter");
          tx.putNode(node("counter", { Name: String(Number(n?.Name ?? "0") + 1) }));
          tx.putNode(node(`n${i}`));
          return tx.writeIndex;
        }),
      );
    }
    const indexes = await Promise.all(writes);
    assert.deepEqual(
      [...indexes].sort((x, y) => x - y),
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
    await caughtUp(a, 40);
    await caughtUp(b, 40);
    assert.equal(a.getNode("counter")!.Name, "40", "no increment lost: every txn ran on the latest state");
    // Txns asked for together share etcd commits (group commit), each still at its own index.
    for (const s of [a, b]) {
      const stats = s.groupCommitStats();
      assert.equal(stats.ops, 20);
      assert.ok(stats.batches < 20 && stats.largestBatch > 1, JSON.stringify(stats));
    }
    assert.deepEqual(a.listNodes(), b.listNodes());
    assert.deepEqual(
      ["nodes", "plugins"].map((t) => a.tableIndex(t as "nodes")),
      ["nodes", "plugins"].map((t) => b.tableIndex(t as "nodes")),
    );
  });

  test("a node deleted on one is missing from the other's scheduler node list, updates follow by delta", async () => {
    const [a, b] = await twoServers();
    await a.txn((tx) => ["n1", "n2", "n3", "n4", "n5"].forEach((id) => tx.putNode(node(id))));
    await caughtUp(b, a.index());
    const cache = new NodeListCache();
    assert.deepEqual(
      cache.list(b).map((n) => n.ID),
      ["n1", "n2", "n3", "n4", "n5"],
    );
    await a.txn((tx) => tx.putNode({ ...tx.getNode("n2")!, Status: "down" }));
    await caughtUp(b, a.index());
    assert.deepEqual(cache.list(b), b.listNodes());
    assert.deepEqual(cache.reads, { whole: 1, delta: 1 }, "one node changed: read alone");
    await a.txn((tx) => tx.deleteNode("n3"));
    const deletedAt = a.index();
    await a.txn((tx) => tx.putNode({ ...tx.getNode("n4")!, Status: "down" }));
    await caughtUp(b, a.index());
    assert.equal(b.nodesDeletedAt(), deletedAt, "the deletion's index reached the other server");
    assert.deepEqual(
      cache.list(b).map((n) => n.ID),
      ["n1", "n2", "n4", "n5"],
    );
    assert.deepEqual(cache.reads, { whole: 2, delta: 1 }, "a deletion seen: read whole");
  });

  test("100 rounds of two claims of one single-node-writer volume at one instant, one per server: exactly one wins", async () => {
    const [a, b] = await twoServers();
    const job = volumeJob("j", { source: "vol1" });
    await a.txn((tx) => {
      tx.putNode(node("n1", { CSINodePlugins: { p1: pluginInfo("p1", "node") } }));
      tx.putJob(job);
      tx.putVolume(volume("vol1"));
    });
    await caughtUp(b, a.index());
    const endpoint = (store: StateStore) =>
      new ClaimEndpoint({
        store,
        volumeLocks: new KeyedMutex(),
        log: nullLogger,
        scheduler: { retryBlocked: async () => {} },
        controllers: { call: async () => ({}) },
      } as unknown as ServerDeps);
    const servers = [endpoint(a), endpoint(b)];
    const claim = (i: number, allocId: string) =>
      servers[i]!.claim({
        Namespace: "default",
        VolumeID: "vol1",
        AllocationID: allocId,
        NodeID: "n1",
        Mode: "write",
        AccessMode: "single-node-writer",
        AttachmentMode: "file-system",
      });
    for (let round = 0; round < 100; round++) {
      const ids = [`a${round}`, `b${round}`];
      await a.txn((tx) => ids.forEach((id, i) => tx.putAlloc(alloc(id, job, "n1", i))));
      await caughtUp(b, a.index());
      const results = await Promise.allSettled([claim(0, ids[0]!), claim(1, ids[1]!)]);
      const won = results.filter((r) => r.status === "fulfilled").length;
      assert.equal(
        won,
        1,
        `round ${round}: exactly one claim wins (${JSON.stringify(results.map((r) => r.status))})`,
      );
      for (const r of results) {
        if (r.status === "rejected") assert.match(String((r.reason as Error).message), /claim|in use|max/i);
      }
      const winner = results.findIndex((r) => r.status === "fulfilled");
      await caughtUp(a, b.index());
      await caughtUp(b, a.index());
      for (const s of [a, b]) {
        assert.deepEqual(
          Object.keys(s.getVolume("default", "vol1")!.WriteClaims),
          [ids[winner]],
          `round ${round}`,
        );
      }
      await servers[winner]!.unpublish({
        Namespace: "default",
        VolumeID: "vol1",
        AllocationID: ids[winner]!,
        NodeID: "n1",
        State: "node-detached",
      });
      await a.txn((tx) => ids.forEach((id) => tx.deleteAlloc(id)));
    }
    await caughtUp(b, a.index());
    assert.deepEqual(b.getVolume("default", "vol1")!.WriteClaims, {}, "every claim released");
  });
});
