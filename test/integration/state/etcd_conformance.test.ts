/**
 * The StateStore and commit feed conformance suites against the etcd store: one real etcd member on loopback
 * (test/helpers/etcd_server.ts), each store under its own key prefix, so every case starts empty.
 */
import { after } from "node:test";
import { EtcdStateStore } from "../../../src/server/state/etcd/etcd_store.js";
import { runStateStoreConformance } from "../../conformance/state_store.js";
import { runScaleConformance } from "../../conformance/state_store_scale.js";
import { runPluginCapacityConformance } from "../../conformance/plugin_capacity.js";
import { runCommitFeedConformance } from "../../conformance/commit_feed.js";
import type { MakeStore } from "../../conformance/state_store.js";
import { startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";

let etcd: Promise<EtcdServer> | undefined;
let n = 0;
after(async () => {
  if (etcd) await (await etcd).stop();
});

const makeStore: MakeStore = async ({ now }) => {
  etcd ??= startEtcd();
  const server = await etcd;
  const store = await EtcdStateStore.open({
    endpoints: [server.endpoint],
    prefix: `/conformance/${++n}`,
    now,
  });
  return { store, dispose: async () => {} };
};

runStateStoreConformance("etcd", makeStore);
runScaleConformance("etcd", makeStore);
runCommitFeedConformance("etcd", makeStore);
runPluginCapacityConformance("etcd", makeStore);
