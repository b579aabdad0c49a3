/**
 * The etcd store across restarts and outages, on a real etcd: a new store on the same prefix sees
 * everything (loaded from a snapshot and the log after it, the log before it deleted); a txn of
 * 1,000 allocs fits etcd's request limits (its entry goes to chunks); and while etcd is paused a
 * txn fails with ERR_STATE_UNAVAILABLE naming etcd, reads keep serving, and once it resumes writes
 * succeed again, the other server catches up, and the failed write is there wholly or not at all.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Etcd3 } from "etcd3";
import { BerthError } from "../../../src/structs/errors.js";
import { EtcdStateStore, type EtcdStoreOptions } from "../../../src/server/state/etcd/etcd_store.js";
import { TABLES, type StateStore } from "../../../src/server/state/store.js";
import {
  alloc,
  evaluation,
  node,
  pluginInfo,
  pluginJob,
  volume,
  volumeJob,
} from "../../conformance/builders.js";
import { startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";

let etcd: EtcdServer;
let client: Etcd3;
let prefixes = 0;
const opened: EtcdStateStore[] = [];
before(async () => {
  etcd = await startEtcd();
  client = new Etcd3({ hosts: etcd.endpoint });
});
after(async () => {
  for (const s of opened) s.close();
  client.close();
  await etcd.stop();
});

async function open(prefix: string, opts: Partial<EtcdStoreOptions> = {}): Promise<EtcdStateStore> {
  const s = await EtcdStateStore.open({ endpoints: [etcd.endpoint], prefix, ...opts });
  opened.push(s);
  return s;
}

/** Everything a reader can see, for comparing two replicas. */
function everything(s: StateStore) {
  return {
    index: s.index(),
    tables: TABLES.map((t) => s.tableIndex(t)),
    nodes: s.listNodes(),
    jobs: s.listJobs(),
    allocs: s.listAllocs(),
    volumes: s.listVolumes(),
    plugins: s.listPlugins(),
    plugin: s.getPlugin("p1"),
    evals: s.listEvals(),
    versions: s.jobVersions("default", "j"),
    namespaces: s.listNamespaces(),
  };
}

describe("etcd store durability", () => {
  test("a restarted store sees everything, loaded from the snapshot and the log after it", async () => {
    const prefix = `/dur/${++prefixes}`;
    const first = await open(prefix, { snapshotEvery: 10 });
    const job = volumeJob("j");
    await first.txn((tx) => {
      tx.putJob(job);
      tx.putJob(pluginJob("plug", "p1"));
    });
    for (let i = 0; i < 24; i++) {
      await first.txn((tx) => {
        tx.putNode(node(`n${i}`, { CSINodePlugins: { p1: pluginInfo("p1", "node") } }));
        tx.putAlloc(alloc(`a${i}`, job, `n${i}`));
        tx.putEval(evaluation(`e${i}`, job));
        if (i % 5 === 0) tx.putVolume(volume(`v${i}`));
        if (i === 7) tx.deleteNode("n3");
      });
    }
    // A snapshot is written in the background after a commit once the log is 10 long; write on
    // until one has deleted the log before it.
    const logKeys = () => client.getAll().prefix(`${prefix}/log/`).keys();
    for (let i = 0; i < 100 && (await logKeys()).length > 10; i++) {
      await first.txn((tx) => tx.putNode(node("tick", { Name: String(i) })));
      await new Promise((r) => setTimeout(r, 20));
    }
    const seen = everything(first);
    const left = await logKeys();
    assert.ok(left.length <= 10, `the log before the snapshot is deleted (${left.length} entries left)`);
    assert.ok((await client.get(`${prefix}/snap`).string()) !== null, "a snapshot pointer exists");
    first.close();

    const second = await open(prefix, { snapshotEvery: 10 });
    assert.deepEqual(everything(second), seen, "the new store's view equals the old one's");
    const next = await second.txn((tx) => tx.putNode(node("after")));
    assert.equal(next.ModifyIndex, seen.index + 1, "writes continue at the next index");
  });

  test("one txn of 1,000 allocs commits within etcd's default limits (its entry in chunks) and replicates", async () => {
    const prefix = `/dur/${++prefixes}`;
    // 1,000 allocs (2 MB of JSON) deflate to about 20 KB; 4 KiB values force the chunked path.
    const a = await open(prefix, { maxValueBytes: 4 * 1024 });
    const b = await open(prefix);
    const job = volumeJob("big", { count: 1000 });
    await a.txn((tx) => {
      tx.putNode(node("n1"));
      tx.putJob(job);
      for (let i = 0; i < 1000; i++) tx.putAlloc(alloc(`alloc-${String(i).padStart(4, "0")}`, job, "n1", i));
    });
    const blobs = await client.getAll().prefix(`${prefix}/blob/`).keys();
    assert.ok(blobs.length > 1, `the entry was written in ${blobs.length} chunks`);
    while (b.index() < a.index()) await b.waitFor(["allocs"], b.index(), undefined, 5_000);
    assert.equal(b.allocsByJob("default", "big").length, 1000);
    assert.deepEqual(b.getAlloc("alloc-0999"), a.getAlloc("alloc-0999"));
  });

  test("etcd paused: a txn fails naming etcd, reads keep serving; resumed: writes work and the other server catches up", async () => {
    const prefix = `/dur/${++prefixes}`;
    const a = await open(prefix, { requestTimeoutMs: 1_000 });
    const b = await open(prefix, { requestTimeoutMs: 1_000 });
    await a.txn((tx) => tx.putNode(node("n1")));
    while (b.index() < 1) await b.waitFor(["nodes"], 0, undefined, 5_000);
    etcd.pause();
    let paused = true;
    try {
      await assert.rejects(
        a.txn((tx) => {
          tx.putNode(node("n2"));
          tx.putVolume(volume("v2"));
          tx.putJob(volumeJob("j2"));
        }),
        (err: unknown) => {
          assert.ok(err instanceof BerthError);
          assert.equal(err.code, "ERR_STATE_UNAVAILABLE");
          assert.match(err.message, new RegExp(`etcd at ${etcd.endpoint} is unavailable`));
          assert.doesNotMatch(err.message, /\n\s+at /, "no stack in the message");
          return true;
        },
      );
      assert.equal(a.getNode("n1")?.ID, "n1", "reads serve the last view");
      assert.equal(a.index(), 1);
      etcd.resume();
      paused = false;
    } finally {
      if (paused) etcd.resume();
    }
    // The client may hold off a few seconds after failures (its circuit breaker); retry until then.
    let written: number | undefined;
    for (let i = 0; i < 100 && written === undefined; i++) {
      try {
        written = (await b.txn((tx) => tx.putNode(node("n3")))).ModifyIndex;
      } catch (err) {
        assert.equal((err as BerthError).code, "ERR_STATE_UNAVAILABLE");
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    assert.ok(written !== undefined, "a write succeeds once etcd is back");
    while (a.index() < written) await a.waitFor(["nodes"], a.index(), undefined, 5_000);
    assert.deepEqual(a.getNode("n3"), b.getNode("n3"), "the other server caught up through its watch");
    // The failed txn was never acknowledged: it is wholly there or wholly absent, the same on both.
    for (const s of [a, b]) {
      const parts = [s.getNode("n2"), s.getVolume("default", "v2"), s.getJob("default", "j2")].map(Boolean);
      assert.ok(
        parts.every((p) => p === parts[0]),
        `all or nothing: ${JSON.stringify(parts)}`,
      );
    }
    assert.deepEqual(everything(a), everything(b));
  });
});
