/**
 * The leader's capacity poll (server/capacity/poller.ts), unit: a real SQLite store and the real
 * controller client, fake node connections answering ClientCSI.ControllerGetCapacity, a fake clock.
 * The loop measures every segment of the plugin's healthy node instances when it starts, again each
 * interval and after a committed create/delete of the plugin's volumes; entries carry when they
 * were measured and when they go stale; a failed segment keeps its last answer; only controllers
 * advertising GET_CAPACITY are asked; a stopped loop asks nothing more.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { NodeConnections, type NodeConn } from "../../../src/server/clientconn/connections.js";
import { ControllerClient } from "../../../src/server/clientconn/controller.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { CapacityPoller, type PollClock } from "../../../src/server/capacity/poller.js";
import { nullLogger } from "../../../src/internal/log.js";
import { abortError } from "../../../src/internal/abort.js";
import { BerthError } from "../../../src/structs/errors.js";
import type { ControllerGetCapacityRequest } from "../../../src/structs/capacity.js";
import { makeNode } from "../../builders/node.js";
import { makeVolume } from "../../builders/volume.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";

const INTERVAL = 60_000;

/** Time that moves only when the test says. */
class FakeClock implements PollClock {
  t = 1_000_000;
  private sleepers = new Set<{ at: number; wake: () => void }>();
  now(): number {
    return this.t;
  }
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(abortError(signal));
      const s = { at: this.t + ms, wake: () => resolve() };
      this.sleepers.add(s);
      signal.addEventListener(
        "abort",
        () => {
          this.sleepers.delete(s);
          reject(abortError(signal));
        },
        { once: true },
      );
    });
  }
  /** Moves time on and lets the loop run until it sleeps again. */
  async advance(ms: number): Promise<void> {
    this.t += ms;
    for (const s of [...this.sleepers]) {
      if (s.at <= this.t) {
        this.sleepers.delete(s);
        s.wake();
      }
    }
    await settle();
  }
}

/** Lets promise chains (fake calls, SQLite commits) run out. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

/** A node connection answering GetCapacity from `free` by zone ("" = no topology). */
function conn(free: Map<string, number | BerthError>): NodeConn & { asked: string[] } {
  const c = {
    isOpen: true,
    asked: [] as string[],
    call: (method: string, params: ControllerGetCapacityRequest) => {
      if (method !== "ClientCSI.ControllerGetCapacity")
        return Promise.reject(new Error(`unexpected ${method}`));
      const zone = params.Topology?.Segments.zone ?? "";
      c.asked.push(zone);
      const a = free.get(zone);
      if (a instanceof BerthError) return Promise.reject(a);
      return Promise.resolve({ AvailableCapacity: a ?? 0, MaximumVolumeSize: null, MinimumVolumeSize: null });
    },
    close: () => undefined,
  };
  return c;
}

const zoneNode = (zone: string) => nodePluginInfo("p1", {}, { AccessibleTopology: { Segments: { zone } } });

async function setup(getCapacity = true) {
  const store = new SqliteStateStore(null);
  const ctl = controllerInfo("p1", false);
  ctl.ControllerInfo = { ...ctl.ControllerInfo!, SupportsGetCapacity: getCapacity };
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { CSIControllerPlugins: { p1: ctl }, CSINodePlugins: { p1: zoneNode("a") } }));
    tx.putNode(makeNode("n2", { CSINodePlugins: { p1: zoneNode("b") } }));
  });
  const free = new Map<string, number | BerthError>([
    ["a", 100],
    ["b", 200],
  ]);
  const c = conn(free);
  const conns = new NodeConnections();
  conns.add("n1", c);
  const clock = new FakeClock();
  const poller = new CapacityPoller(
    store,
    new ControllerClient(store, conns, nullLogger),
    nullLogger,
    { intervalMs: INTERVAL, refreshDelayMs: 500 },
    clock,
  );
  const avail = () =>
    Object.fromEntries(
      (store.getPluginCapacity("p1")?.Entries ?? []).map((e) => [e.Segments.zone ?? "", e.AvailableBytes]),
    );
  return { store, free, conn: c, clock, poller, avail };
}

test("capacity poll: every segment at start, stamped; again each interval, not before", async () => {
  const { store, free, conn, clock, poller, avail } = await setup();
  poller.start();
  await settle();
  assert.deepEqual(avail(), { a: 100, b: 200 });
  const rec = store.getPluginCapacity("p1")!;
  assert.deepEqual(rec.Entries[0], {
    Segments: { zone: "a" },
    AvailableBytes: 100,
    MaximumVolumeSize: null,
    MinimumVolumeSize: null,
    MeasuredAt: 1_000_000,
    StaleAt: 1_000_000 + 3 * INTERVAL,
  });
  assert.equal(rec.LastError, "");
  assert.deepEqual(conn.asked.sort(), ["a", "b"]);

  free.set("a", 50);
  await clock.advance(INTERVAL - 1);
  assert.equal(conn.asked.length, 2, "nothing before the interval");
  await clock.advance(1);
  assert.deepEqual(avail(), { a: 50, b: 200 });
  assert.equal(conn.asked.length, 4);
  await poller.stop();
  await clock.advance(10 * INTERVAL);
  assert.equal(conn.asked.length, 4, "a stopped loop asks nothing");
  store.close();
});

test("capacity poll: a created or deleted volume refreshes its plugin before the interval", async () => {
  const { store, free, conn, clock, poller, avail } = await setup();
  poller.start();
  await settle();
  free.set("b", 150);
  await store.txn((tx) => tx.putVolume(makeVolume("v1", { PluginID: "p1", ExternalID: "ext-v1" })));
  await settle();
  assert.equal(conn.asked.length, 2, "the refresh waits refreshDelayMs");
  await clock.advance(500);
  assert.deepEqual(avail(), { a: 100, b: 150 });
  assert.equal(conn.asked.length, 4);

  free.set("b", 200);
  await store.txn((tx) => tx.deleteVolume("default", "v1"));
  await settle();
  await clock.advance(500);
  assert.deepEqual(avail(), { a: 100, b: 200 });
  // A change that moves no storage (a volume of another plugin) asks nothing.
  await store.txn((tx) => tx.putVolume(makeVolume("v2", { PluginID: "other", ExternalID: "ext-v2" })));
  await clock.advance(500);
  assert.equal(conn.asked.length, 6);
  await poller.stop();
  store.close();
});

test("capacity poll: a failed segment keeps its last answer and the error is recorded", async () => {
  const { store, free, clock, poller, avail } = await setup();
  poller.start();
  await settle();
  free.set("a", new BerthError("ERR_CSI_UNAVAILABLE", "storage backend down"));
  free.set("b", 10);
  await clock.advance(INTERVAL);
  assert.deepEqual(avail(), { a: 100, b: 10 });
  const rec = store.getPluginCapacity("p1")!;
  assert.match(rec.LastError, /zone=a: ERR_CSI_UNAVAILABLE: .*storage backend down/);
  assert.equal(rec.Entries[0]!.MeasuredAt, 1_000_000, "the kept entry keeps its time, so it goes stale");
  await poller.stop();
  store.close();
});

test("capacity poll: a controller without GET_CAPACITY is never asked", async () => {
  const { store, conn, poller } = await setup(false);
  const r = await poller.pass(new AbortController().signal);
  assert.deepEqual([r.plugins, conn.asked.length], [0, 0]);
  assert.equal(store.getPluginCapacity("p1"), undefined);
  store.close();
});

test("capacity poll: a plugin whose node instances report no topology is measured as a whole", async () => {
  const { store, conn, poller, free } = await setup();
  await store.txn((tx) => {
    tx.putNode({ ...tx.getNode("n1")!, CSINodePlugins: { p1: nodePluginInfo("p1") } });
    tx.deleteNode("n2");
  });
  free.set("", 999);
  await poller.pass(new AbortController().signal);
  assert.deepEqual(conn.asked, [""]);
  assert.deepEqual(
    store.getPluginCapacity("p1")!.Entries.map((e) => [e.Segments, e.AvailableBytes]),
    [[{}, 999]],
  );
  store.close();
});

test("capacity poll: the record of a plugin that no longer exists is dropped", async () => {
  const { store, poller } = await setup();
  await poller.pass(new AbortController().signal);
  assert.ok(store.getPluginCapacity("p1"));
  await store.txn((tx) => {
    tx.deleteNode("n1");
    tx.deleteNode("n2");
    tx.deletePlugin("p1");
  });
  await poller.pass(new AbortController().signal);
  assert.equal(store.getPluginCapacity("p1"), undefined);
  store.close();
});
