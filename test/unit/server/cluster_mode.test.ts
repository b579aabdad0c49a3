/**
 * The two Clusters a server may be (leader/cluster_mode.ts), before and after joining: what the
 * parts built before the listener is bound see of each. A single server always vouches and calls
 * its own scheduler; an etcd member still joining knows no leader, vouches for no node, has no
 * introduction key and no cluster-wide locks, and takes no server-to-server call.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { nullLogger } from "../../../src/internal/log.js";
import { Telemetry } from "../../../src/internal/metrics/telemetry.js";
import { NodeConnections } from "../../../src/server/clientconn/connections.js";
import type { JobScheduler } from "../../../src/server/deps.js";
import { LeaderGate } from "../../../src/server/leader/gate.js";
import type { ServerMember } from "../../../src/server/leader/keys.js";
import { openCluster } from "../../../src/server/leader/open_cluster.js";
import { SchedulerFront } from "../../../src/server/leader/scheduler_front.js";

const self: ServerMember = {
  ID: "s1",
  Name: "s1.global",
  Region: "global",
  Datacenter: "dc1",
  HTTPAddr: "http://127.0.0.1:1",
  RPCAddr: "127.0.0.1:1",
  StartTime: 1_000,
};
const local: JobScheduler = {
  evaluate: () => Promise.reject(new Error("not called")),
  retryBlocked: () => Promise.resolve(),
};
const store = { index: () => 0, waitFor: () => Promise.resolve(0) };

test("a single server: its own scheduler and locks, always vouching; after join it leads and is the only member", async () => {
  const cluster = openCluster({}, new NodeConnections(), nullLogger);
  assert.equal(cluster.endpointScheduler(local, store, new Telemetry()), local);
  assert.equal(cluster.lockBackend(), null);
  assert.deepEqual([...cluster.heldElsewhere()], []);
  assert.equal(cluster.shared, false);
  assert.equal(cluster.introSecret, undefined);
  assert.equal(cluster.contactRefusal(), undefined);
  assert.equal(cluster.takePeerCall({} as never, {} as never), false);
  // Before join (the listener is not bound yet): no leader, no member record.
  assert.equal(cluster.view.leader(), null);
  assert.throws(() => cluster.view.self, { code: "ERR_RPC_UNAVAILABLE" });
  await assert.rejects(async () => cluster.view.members(), { code: "ERR_RPC_UNAVAILABLE" });
  const gate = new LeaderGate(() => [], nullLogger);
  await cluster.join(self, gate, local, store);
  assert.equal(gate.state, "leader");
  assert.deepEqual(cluster.view.leader(), { member: self, sinceMs: self.StartTime });
  assert.deepEqual(await cluster.view.members(), [self]);
  assert.equal(cluster.view.lastContactMs(), 0);
  await gate.close("test over");
  await cluster.releaseWaiters();
  await cluster.leave();
});

test("an etcd member before it joined: a front to the leader, and nothing that needs the cluster", async () => {
  const cluster = openCluster(
    { etcd: { endpoints: ["http://127.0.0.1:1"], prefix: "/t" } },
    new NodeConnections(),
    nullLogger,
  );
  const front = cluster.endpointScheduler(local, store, new Telemetry());
  assert.ok(front instanceof SchedulerFront, "passes go by the front");
  assert.equal(cluster.lockBackend(), null);
  assert.deepEqual([...cluster.heldElsewhere()], []);
  assert.equal(cluster.shared, true);
  assert.equal(cluster.introSecret?.(), undefined, "no introduction key before the cluster secret");
  assert.match(cluster.contactRefusal() ?? "", /still joining/);
  assert.equal(cluster.takePeerCall({} as never, {} as never), false);
  assert.equal(cluster.view.leader(), null);
  assert.throws(() => cluster.view.self, { code: "ERR_RPC_UNAVAILABLE" });
  // Stopping a member that never joined: the front's waiters end, leaving is a no-op.
  await cluster.releaseWaiters();
  await assert.rejects(() => front.evaluate("default", "j"), { code: "ERR_ABORTED" });
  await cluster.leave();
});
