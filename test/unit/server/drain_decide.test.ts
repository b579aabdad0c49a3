import { test } from "node:test";
import assert from "node:assert/strict";
import { decideDrain, drainTier } from "../../../src/server/drainer/decide.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import { ZERO_TIME, type DrainStrategy } from "../../../src/structs/node.js";
import type { VolumeClaim } from "../../../src/structs/volume.js";
import { csiJob, plainJob, pluginJob } from "../../builders/job.js";
import { allocOf } from "../../builders/alloc.js";
import { claimOf } from "../../builders/claim.js";

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

function strategy(over: Partial<DrainStrategy> = {}): DrainStrategy {
  return {
    Deadline: 0,
    IgnoreSystemJobs: false,
    ForceDeadline: ZERO_TIME,
    StartedAt: new Date(NOW - 1000).toISOString(),
    ...over,
  };
}

const ids = (allocs: Allocation[]) => allocs.map((a) => a.ID).sort();

function decide(allocs: Allocation[], claims: VolumeClaim[] = [], s = strategy(), nowMs = NOW) {
  return decideDrain({ strategy: s, allocs, claims, nowMs });
}

// One node "A" with a service alloc using a volume, a plain system alloc, a system node plugin
// and a service-job controller plugin.
const service = allocOf(csiJob("web"), "A");
const batch = allocOf(csiJob("report", { type: "batch", source: "vol2" }), "A");
const system = allocOf(plainJob("logs", "system"), "A");
const nodePlugin = allocOf(pluginJob("nodes"), "A");
const controller = allocOf(pluginJob("ctrl", { type: "service", pluginType: "controller" }), "A");
const all = [service, batch, system, nodePlugin, controller];

const stopped = (a: Allocation, ClientStatus: Allocation["ClientStatus"] = "complete"): Allocation => ({
  ...a,
  DesiredStatus: "stop",
  DesiredTransition: { Migrate: true },
  ClientStatus,
});

test("drain tiers: plugin allocs by their csi_plugin block whatever the job type, then system, then the rest", () => {
  assert.deepEqual([service, batch, system, nodePlugin, controller].map(drainTier), [
    "migrate",
    "migrate",
    "system",
    "plugin",
    "plugin",
  ]);
});

test("drain: service and batch allocs are marked first; system and plugin allocs wait", () => {
  const d = decide(all, [claimOf(service)]);
  assert.deepEqual(ids(d.migrate), ids([service, batch]));
  assert.equal(d.done, false);
  assert.equal(d.wakeAtMs, null, "no deadline: nothing to wake up for");
  assert.deepEqual(d.waiting, { allocs: 2, claims: 1 });
});

test("drain: already marked allocs are not marked again", () => {
  const marked = { ...service, DesiredTransition: { Migrate: true } };
  const d = decide([marked, system, nodePlugin], [claimOf(service)]);
  assert.deepEqual(d.migrate, []);
});

test("drain: system allocs wait for the service allocs to stop and for their claims to be released", () => {
  const terminal = [stopped(service), stopped(batch), system, nodePlugin, controller];
  const held = decide(terminal, [claimOf(service, "node-detached")]);
  assert.deepEqual(held.migrate, [], "a claim still being released holds the system allocs back");
  assert.deepEqual(held.waiting, { allocs: 0, claims: 1 });

  const d = decide(terminal, []);
  assert.deepEqual(ids(d.migrate), ids([system]), "plugins wait for the system allocs to stop");
  assert.equal(d.done, false);
});

test("drain: plugin allocs go last, once every other alloc stopped and no claim is left on the node", () => {
  const rest = [stopped(service), stopped(batch), stopped(system)];
  assert.deepEqual(
    decide([...rest, nodePlugin, controller], [claimOf(system)]).migrate,
    [],
    "a system alloc's claim holds the plugins back",
  );
  const d = decide([...rest, nodePlugin, controller], []);
  assert.deepEqual(ids(d.migrate), ids([nodePlugin, controller]));
  assert.equal(d.done, false);
});

test("drain: a claim of an alloc the node no longer lists holds back system and plugin allocs", () => {
  const gone = { ID: "gc-ed", NodeID: "A" };
  assert.deepEqual(decide([system, nodePlugin], [claimOf(gone)]).migrate, []);
});

test("drain: a plugin alloc's own claims do not hold it back", () => {
  assert.deepEqual(ids(decide([nodePlugin], [claimOf(nodePlugin)]).migrate), [nodePlugin.ID]);
});

test("drain: a pending alloc stopped before it ran counts as stopped", () => {
  const neverRan = { ...service, ClientStatus: "pending" as const, DesiredStatus: "stop" as const };
  assert.deepEqual(ids(decide([neverRan, system]).migrate), [system.ID]);
});

test("drain: IgnoreSystemJobs keeps system allocs (plugins too) but still migrates service plugins last", () => {
  const s = strategy({ IgnoreSystemJobs: true });
  assert.deepEqual(ids(decide(all, [claimOf(service)], s).migrate), ids([service, batch]));
  const d = decide([stopped(service), stopped(batch), system, nodePlugin, controller], [claimOf(system)], s);
  assert.deepEqual(
    ids(d.migrate),
    [controller.ID],
    "the kept system alloc's claim blocks nothing; only the service-job plugin moves",
  );
  const done = decide([stopped(service), stopped(batch), system, nodePlugin, stopped(controller)], [], s);
  assert.equal(done.done, true, "kept allocs do not hold the drain open");
  assert.deepEqual(done.migrate, []);
});

test("drain: complete when every drained alloc is terminal, claims or not", () => {
  const d = decide(
    all.map((a) => stopped(a)),
    [],
  );
  assert.equal(d.done, true);
  assert.deepEqual(d.migrate, []);
  const failed = decide([stopped(service, "failed"), stopped(nodePlugin, "lost")]);
  assert.equal(failed.done, true);
  assert.equal(decide([]).done, true, "an empty node is drained at once");
});

test("drain: the deadline marks everything left at once; -1 forces now", () => {
  const deadline = strategy({ Deadline: 60e9, ForceDeadline: new Date(NOW + 60_000).toISOString() });
  const before = decide(all, [claimOf(service)], deadline);
  assert.deepEqual(ids(before.migrate), ids([service, batch]));
  assert.equal(before.wakeAtMs, NOW + 60_000, "the drainer wakes at the deadline");
  assert.equal(before.forced, false);

  const after = decide(all, [claimOf(service)], deadline, NOW + 60_000);
  assert.equal(after.forced, true);
  assert.deepEqual(ids(after.migrate), ids(all), "claims no longer hold anything back");

  const force = decide(all, [claimOf(service)], strategy({ Deadline: -1 }));
  assert.deepEqual(ids(force.migrate), ids(all));
  const ignoring = decide(all, [], strategy({ Deadline: -1, IgnoreSystemJobs: true }));
  assert.deepEqual(ids(ignoring.migrate), ids([service, batch, controller]));
});

test("drain: past the deadline the drain completes once every alloc was told to stop", () => {
  const s = strategy({ Deadline: -1 });
  const marked = all.map((a) => ({ ...a, DesiredTransition: { Migrate: true } }));
  assert.equal(decide(marked, [], s).done, false, "marked but not stopped by the reconciler yet");
  const told = marked.map((a) => ({ ...a, DesiredStatus: "stop" as const }));
  const d = decide(told, [claimOf(service)], s);
  assert.equal(d.done, true, "running allocs told to stop do not hold a forced drain open");
  assert.deepEqual(d.migrate, []);
});
