/**
 * The volume, job and node lists paged at the store (http/list_store_pages.ts) answers exactly what paging the
 * whole list answers (list_options.ts pageOf, the behaviour before issue 13): same items, order and
 * next token for every combination of namespace, prefix, per_page, next_token, reverse, filter,
 * plugin and ACL namespace set, over a real SQLite store holding namespaces whose "Namespace.ID"
 * order differs from a plain (namespace, ID) order ("a-b" sorts before "a" as a token).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { volumeListView } from "../../../src/server/state/views.js";
import { listOptions, pageOf } from "../../../src/server/http/list_options.js";
import {
  jobPageFromStore,
  nodePageFromStore,
  volumePageFromStore,
} from "../../../src/server/http/list_store_pages.js";
import { jobStub, nodeStub, volumeStub } from "../../../src/server/views/stubs.js";
import { plainJob } from "../../builders/job.js";
import type { CSIVolume } from "../../../src/structs/volume.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

const NAMESPACES = ["default", "a", "a-b", "b", "Z1"];
const IDS = ["v1", "v10", "v2", "w.x", "A", "a_b", "v1[0]", "v1[1]", "v3"];

async function filled(): Promise<SqliteStateStore> {
  const s = new SqliteStateStore(null);
  await s.txn((tx) => {
    tx.putNode(makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1"), p2: nodePluginInfo("p2") } }));
    NAMESPACES.forEach((ns, i) =>
      IDS.forEach((id, j) =>
        tx.putVolume(makeVolume(id, { Namespace: ns, PluginID: (i + j) % 3 === 0 ? "p2" : "p1" })),
      ),
    );
    for (const ns of NAMESPACES) for (const id of IDS) tx.putJob({ ...plainJob(id), Namespace: ns });
    for (const id of IDS) tx.putNode(makeNode(`n-${id}`));
  });
  return s;
}

test("store-paged volume lists equal paging the whole list, for every option combination", async () => {
  const s = await filled();
  try {
    const tokens = [
      "",
      ...NAMESPACES.flatMap((ns) => [`${ns}.v1`, `${ns}.v15`, `${ns}.`]),
      "a",
      "a-",
      "a-b.w.x",
      "~",
      "0",
    ];
    let compared = 0;
    for (const ns of [undefined, "a-b", "nowhere"])
      for (const pluginId of [undefined, "p2"])
        for (const hide of [false, true])
          for (const perPage of ["", "1", "3"])
            for (const reverse of ["false", "true"])
              for (const prefix of ["", "v1"])
                for (const filter of ["", 'ID contains "1"'])
                  for (const token of tokens) {
                    const query = new URLSearchParams({ reverse, prefix, filter, per_page: perPage });
                    if (token !== "") query.set("next_token", token);
                    const o = listOptions(query);
                    // An ACL that hides namespace "a", and a node_id-like test that drops v2.
                    const keepNamespace = (n: string) => !hide || n !== "a";
                    const keep = (v: CSIVolume) => !hide || v.ID !== "v2";
                    const filterOf = {
                      ...(ns !== undefined ? { namespace: ns } : {}),
                      ...(pluginId !== undefined ? { pluginId } : {}),
                    };
                    const expected = pageOf(
                      volumeListView(s, filterOf).filter((v) => keepNamespace(v.Namespace) && keep(v)),
                      o,
                      "namespace-id",
                      volumeStub,
                    );
                    const got = volumePageFromStore(s, o, { ...filterOf, keepNamespace, keep }, volumeStub);
                    assert.deepEqual(
                      got,
                      expected,
                      `namespace=${ns} plugin=${pluginId} hide=${hide} ${query}`,
                    );
                    compared++;
                  }
    assert.ok(compared > 2000);
  } finally {
    s.close();
  }
});

test("a filter that cannot be evaluated is the same 400 either way", async () => {
  const s = await filled();
  try {
    const o = listOptions(new URLSearchParams({ filter: "Nope == 1", per_page: "2" }));
    const q = { keepNamespace: () => true, keep: () => true };
    const err = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return e as Error;
      }
      assert.fail("no error");
    };
    const a = err(() => volumePageFromStore(s, o, q, volumeStub));
    const b = err(() => pageOf(volumeListView(s, {}), o, "namespace-id", volumeStub));
    assert.equal(a.message, b.message);
    assert.match(a.message, /^failed to read filter expression:/);
  } finally {
    s.close();
  }
});

test("a stored namespace holding a '.' makes the store path step aside (the whole list is paged)", async () => {
  const s = await filled();
  try {
    await s.txn((tx) => tx.putVolume(makeVolume("v1", { Namespace: "a.b" })));
    const o = listOptions(new URLSearchParams({ per_page: "2" }));
    assert.equal(
      volumePageFromStore(s, o, { keepNamespace: () => true, keep: () => true }, volumeStub),
      undefined,
    );
    assert.ok(
      volumePageFromStore(s, o, { namespace: "a", keepNamespace: () => true, keep: () => true }, volumeStub),
    );
  } finally {
    s.close();
  }
});

test("store-paged job and node lists equal paging the whole list", async () => {
  const s = await filled();
  try {
    const tokens = ["", ...NAMESPACES.map((ns) => `${ns}.v1`), "a.", "a", "n-v1", "n-v15", "n-", "~", "0"];
    for (const ns of [undefined, "a-b", "nowhere"])
      for (const hide of [false, true])
        for (const perPage of ["", "1", "4"])
          for (const reverse of ["false", "true"])
            for (const prefix of ["", "v1", "n-v"])
              for (const filter of ["", 'ID contains "1"'])
                for (const token of tokens) {
                  const query = new URLSearchParams({ reverse, prefix, filter, per_page: perPage });
                  if (token !== "") query.set("next_token", token);
                  const o = listOptions(query);
                  const keepNamespace = (n: string) => !hide || n !== "a";
                  const jobs = pageOf(
                    s.listJobs(ns).filter((j) => keepNamespace(j.Namespace)),
                    o,
                    "namespace-id",
                    jobStub,
                  );
                  const q = { ...(ns !== undefined ? { namespace: ns } : {}), keepNamespace };
                  assert.deepEqual(jobPageFromStore(s, o, q, jobStub), jobs, `jobs ${ns} ${hide} ${query}`);
                  if (ns === undefined && !hide) {
                    const nodes = pageOf(s.listNodes(), o, "id", nodeStub);
                    assert.deepEqual(nodePageFromStore(s, o, nodeStub), nodes, `nodes ${query}`);
                  }
                }
  } finally {
    s.close();
  }
});

test("a page that needs several runs of the index (sparse filter, big pages) still equals the whole list's", async () => {
  const s = new SqliteStateStore(null);
  try {
    await s.txn((tx) => {
      tx.putNode(makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
      for (let i = 0; i < 150; i++)
        tx.putVolume(makeVolume(`m${String(i).padStart(3, "0")}`, { Namespace: "many" }));
    });
    const all = () => volumeListView(s, { namespace: "many" });
    const q = { namespace: "many", keepNamespace: () => true, keep: (v: CSIVolume) => v.ID !== "m071" };
    const cases: Record<string, string>[] = [
      { per_page: "2", filter: 'ID contains "7"' },
      { per_page: "40" },
      { per_page: "40", next_token: "many.m033" },
      { per_page: "2", filter: 'ID contains "9"', reverse: "true" },
      { per_page: "0" },
    ];
    for (const params of cases) {
      for (let token = params.next_token ?? "", pages = 0; pages < 20; pages++) {
        const o = listOptions(new URLSearchParams({ ...params, next_token: token }));
        const expected = pageOf(all().filter(q.keep), o, "namespace-id", volumeStub);
        assert.deepEqual(
          volumePageFromStore(s, o, q, volumeStub),
          expected,
          JSON.stringify({ ...params, token }),
        );
        token = expected.nextToken;
        if (token === "") break;
      }
    }
  } finally {
    s.close();
  }
});
