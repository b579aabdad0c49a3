/**
 * The commit feed's conformance suite (src/server/state/commit_feed.ts): every StateStore runs it
 * (SQLite from test/integration/server/sqlite_commit_feed.test.ts; the etcd store should too),
 * through the interface alone. Each txn
 * delivered once, at its index, in order, after its COMMIT and before its caller hears back; a
 * record written twice appears once as it was left with `before` as it was; a txn that throws or
 * writes nothing is not delivered; derived plugins and deletions carry what they were; records
 * are fresh copies with secrets open; a throwing listener does not stop the others.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { CommittedTxn } from "../../src/server/state/commit_feed.js";
import type { CSIVolume } from "../../src/structs/volume.js";
import type { CSIPluginSummary } from "../../src/structs/plugin.js";
import { makeVolume } from "../builders/volume.js";
import { makeNode } from "../builders/node.js";
import { nodePluginInfo } from "../builders/plugin_info.js";
import { csiJob } from "../builders/job.js";
import type { MakeStore } from "./state_store.js";

const summary = (txn: CommittedTxn) =>
  txn.changes.map(
    (c) => `${c.op} ${c.table}/${c.namespace}/${c.id}${c.before === undefined ? " (new)" : ""}`,
  );

export function runCommitFeedConformance(name: string, makeStore: MakeStore): void {
  const withStore = async (fn: (s: Awaited<ReturnType<MakeStore>>["store"]) => Promise<void>) => {
    const { store, dispose } = await makeStore({ now: Date.now });
    try {
      await fn(store);
    } finally {
      store.close();
      await dispose();
    }
  };

  describe(`commit feed conformance: ${name}`, () => {
    test("commit feed: every txn once, at its index, in order, after COMMIT and before its caller hears back", () =>
      withStore(async (store) => {
        const got: CommittedTxn[] = [];
        const settled = new Set<number>();
        let deliveredBeforeSettled = true;
        store.onCommit((txn) => {
          got.push(txn);
          if (settled.has(txn.index)) deliveredBeforeSettled = false;
          assert.equal(
            store.index() >= txn.index,
            true,
            "the store has the txn's writes when it is delivered",
          );
        });
        // One batch of four (asked for in one turn): one throws, one writes nothing.
        const mark = (p: Promise<number>) =>
          p.then((v) => {
            settled.add(v);
            return v;
          });
        const results = await Promise.allSettled([
          mark(store.txn((tx) => tx.putVolume(makeVolume("a")).ModifyIndex)),
          store.txn((tx) => {
            tx.putVolume(makeVolume("b"));
            throw new Error("refused");
          }),
          store.txn(() => 0),
          mark(
            store.txn((tx) => {
              tx.putVolume(makeVolume("c", { Name: "first" }));
              tx.putVolume(makeVolume("c", { Name: "second" }));
              tx.putVolume(makeVolume("a", { Name: "a2" }));
              return tx.writeIndex;
            }),
          ),
        ]);
        assert.equal(results[1].status, "rejected");
        assert.equal(deliveredBeforeSettled, true, "each txn was delivered before its promise settled");
        const [ia, , , ic] = results.map((r) => (r.status === "fulfilled" ? r.value : 0));
        assert.deepEqual(
          got.map((t) => t.index),
          [ia, ic],
        );
        assert.deepEqual(summary(got[0]!), ["put volumes/default/a (new)"]);
        assert.deepEqual(summary(got[1]!), ["put volumes/default/c (new)", "put volumes/default/a"]);
        const [c, a] = got[1]!.changes;
        assert.equal(
          (c!.record as CSIVolume).Name,
          "second",
          "a record put twice appears once, as it was left",
        );
        assert.equal((a!.before as CSIVolume).Name, "a", "`before` is the record as the txn found it");
        assert.equal((a!.record as CSIVolume).ModifyIndex, ic);

        // Created and deleted in one txn: nothing to deliver. Deleted: `before` says what it was.
        await store.txn((tx) => {
          tx.putVolume(makeVolume("tmp"));
          tx.deleteVolume("default", "tmp");
          tx.deleteVolume("default", "a");
        });
        const last = got.at(-1)!;
        assert.deepEqual(summary(last), ["delete volumes/default/a"]);
        assert.equal(last.changes[0]!.record, undefined);
        assert.equal((last.changes[0]!.before as CSIVolume).Name, "a2");
        for (let i = 1; i < got.length; i++) assert.ok(got[i]!.index > got[i - 1]!.index);
      }));

    test("commit feed: derived plugins, deletes of jobs with what they were, fresh copies with secrets open", () =>
      withStore(async (store) => {
        const got: CommittedTxn[] = [];
        store.onCommit((txn) => got.push(txn));
        await store.txn((tx) => tx.putNode(makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } })));
        assert.deepEqual(summary(got[0]!), ["put nodes//n1 (new)", "put plugins//p1 (new)"]);
        assert.equal((got[0]!.changes[1]!.record as CSIPluginSummary).NodesHealthy, 1);

        const secret = makeVolume("s", {
          Secrets: { password: "hunter2" },
          MountOptions: { FSType: "ext4", MountFlags: ["pw=hunter2"] },
        });
        await store.txn((tx) => tx.putVolume(secret));
        const rec = got.at(-1)!.changes[0]!.record as CSIVolume;
        assert.deepEqual(
          rec.Secrets,
          { password: "hunter2" },
          "records as reads return them: secrets as stored, not sealed or redacted",
        );
        rec.Secrets = null;
        rec.MountOptions!.MountFlags = ["[REDACTED]"];
        const stored = store.getVolume("default", "s")!;
        assert.deepEqual(
          stored.Secrets,
          { password: "hunter2" },
          "changing a delivered record changes nothing stored",
        );
        assert.deepEqual(stored.MountOptions?.MountFlags, ["pw=hunter2"]);

        await store.txn((tx) => tx.putJob(csiJob("web", { source: "s" })));
        await store.txn((tx) => tx.deleteJob("default", "web"));
        const del = got.at(-1)!;
        assert.deepEqual(summary(del), ["delete jobs/default/web"]);
        assert.equal((del.changes[0]!.before as { ID: string }).ID, "web");
      }));

    test("commit feed: a throwing listener is skipped, the others still get the txn; unsubscribing stops delivery", () =>
      withStore(async (store) => {
        const got: number[] = [];
        const offThrowing = store.onCommit(() => {
          throw new Error("listener bug");
        });
        const off = store.onCommit((txn) => got.push(txn.index));
        const i1 = await store.txn((tx) => tx.putVolume(makeVolume("a")).ModifyIndex);
        assert.deepEqual(got, [i1]);
        off();
        offThrowing();
        await store.txn((tx) => tx.putVolume(makeVolume("b")));
        assert.deepEqual(got, [i1]);
      }));
  });
}
