/**
 * Placement of allocs whose volume the job creates on first placement (scheduler/
 * new_volume_feasible.ts): a node fits when it runs a healthy node plugin of the create's plugin
 * (with a healthy controller somewhere), meets the create's required topology, and the volume as it
 * will be created can take the claim. A real in-memory store; the plan is computePlan's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { computePlan } from "../../../src/server/scheduler/plan.js";
import { newVolumeFeasible } from "../../../src/server/scheduler/new_volume_feasible.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { Job, VolumeCreateSpec, VolumeRequest } from "../../../src/structs/job.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";

function creatingJob(count: number, perAlloc: boolean, create: Record<string, unknown> = {}): Job {
  return validateJob({
    ID: "db",
    TaskGroups: [
      {
        Name: "g",
        Count: count,
        Volumes: {
          data: {
            Type: "csi",
            Source: "data",
            AccessMode: "single-node-writer",
            AttachmentMode: "file-system",
            PerAlloc: perAlloc,
            Create: { PluginID: "p1", ...create },
          },
        },
        Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
      },
    ],
  });
}

async function withStore(fn: (store: SqliteStateStore) => Promise<void>): Promise<void> {
  const store = new SqliteStateStore(null);
  try {
    await fn(store);
  } finally {
    store.close();
  }
}

const zoned = (zone: string) => nodePluginInfo("p1", {}, { AccessibleTopology: { Segments: { zone } } });

test("new volume feasibility: plugin, controller, topology", async () => {
  await withStore(async (store) => {
    await store.txn((tx) => {
      tx.putNode(makeNode("ctl", { CSIControllerPlugins: { p1: controllerInfo("p1", false) } }));
      tx.putNode(makeNode("a", { CSINodePlugins: { p1: zoned("a") } }));
      tx.putNode(makeNode("b", { CSINodePlugins: { p1: zoned("b") } }));
      tx.putNode(makeNode("sick", { CSINodePlugins: { p1: { ...zoned("a"), Healthy: false } } }));
    });
    const job = creatingJob(1, false, {
      RequestedTopologies: { Required: [{ Segments: { zone: "b" } }], Preferred: null },
    });
    const req = job.TaskGroups[0]!.Volumes.data! as VolumeRequest & { Create: VolumeCreateSpec };
    const ctx = { state: store, planned: [], stopping: new Set<string>() };
    const want = {
      AllocationID: "x",
      Mode: "write" as const,
      AccessMode: "single-node-writer" as const,
      AttachmentMode: "file-system" as const,
    };
    const check = (id: string) => newVolumeFeasible(ctx, store.getNode(id)!, job, req, "data", want);
    assert.equal(check("ctl"), "CSI plugin p1 is missing from client ctl");
    assert.equal(check("sick"), "CSI plugin p1 is unhealthy on client sick");
    assert.equal(check("a"), "did not meet topology requirement");
    assert.equal(check("b"), null);
  });
  await withStore(async (store) => {
    await store.txn((tx) => tx.putNode(makeNode("a", { CSINodePlugins: { p1: zoned("a") } })));
    const job = creatingJob(1, false);
    const req = job.TaskGroups[0]!.Volumes.data! as VolumeRequest & { Create: VolumeCreateSpec };
    const ctx = { state: store, planned: [], stopping: new Set<string>() };
    const refused = newVolumeFeasible(ctx, store.getNode("a")!, job, req, "data", {
      AllocationID: "x",
      Mode: "write",
      AccessMode: "single-node-writer",
      AttachmentMode: "file-system",
    });
    assert.match(refused ?? "", /no healthy controller/, "no controller: nothing can create it");
  });
});

test("a plan places per_alloc creating allocs, and one writer of a shared single-writer volume", async () => {
  await withStore(async (store) => {
    await store.txn((tx) => {
      tx.putNode(makeNode("ctl", { CSIControllerPlugins: { p1: controllerInfo("p1", false) } }));
      for (const id of ["a", "b"]) tx.putNode(makeNode(id, { CSINodePlugins: { p1: zoned(id) } }));
      tx.putJob(creatingJob(2, true));
    });
    const plan = computePlan(store, store.getJob("default", "db")!, Date.now() * 1e6);
    assert.equal(plan.place.length, 2, "each alloc gets its own volume to create");
  });
  await withStore(async (store) => {
    await store.txn((tx) => {
      tx.putNode(makeNode("ctl", { CSIControllerPlugins: { p1: controllerInfo("p1", false) } }));
      for (const id of ["a", "b"]) tx.putNode(makeNode(id, { CSINodePlugins: { p1: zoned(id) } }));
      tx.putJob(creatingJob(2, false));
    });
    const plan = computePlan(store, store.getJob("default", "db")!, Date.now() * 1e6);
    assert.equal(plan.place.length, 1, "a second writer of the one single-node-writer volume is not placed");
  });
});

test("new volume feasibility: a node whose segment is known too small for capacity_min is not chosen", async () => {
  await withStore(async (store) => {
    const entry = (zone: string, bytes: number, staleIn = 60_000) => ({
      Segments: { zone },
      AvailableBytes: bytes,
      MaximumVolumeSize: null,
      MinimumVolumeSize: null,
      MeasuredAt: Date.now(),
      StaleAt: Date.now() + staleIn,
    });
    await store.txn((tx) => {
      tx.putNode(makeNode("ctl", { CSIControllerPlugins: { p1: controllerInfo("p1", false) } }));
      tx.putNode(makeNode("a", { CSINodePlugins: { p1: zoned("a") } }));
      tx.putNode(makeNode("b", { CSINodePlugins: { p1: zoned("b") } }));
      tx.putNode(makeNode("c", { CSINodePlugins: { p1: zoned("c") } }));
      tx.putNode(makeNode("d", { CSINodePlugins: { p1: zoned("d") } }));
      tx.putPluginCapacity({
        PluginID: "p1",
        // a: too small; b: room; c: too small but stale (unknown allows); d: never measured.
        Entries: [entry("a", 1 << 20), entry("b", 1 << 30), entry("c", 1 << 20, -1)],
        LastError: "",
        CreateIndex: 0,
        ModifyIndex: 0,
      });
    });
    const job = creatingJob(1, false, { RequestedCapacityMin: 512 << 20 });
    const req = job.TaskGroups[0]!.Volumes.data! as VolumeRequest & { Create: VolumeCreateSpec };
    const ctx = { state: store, planned: [], stopping: new Set<string>() };
    const want = {
      AllocationID: "x",
      Mode: "write" as const,
      AccessMode: "single-node-writer" as const,
      AttachmentMode: "file-system" as const,
    };
    const check = (id: string) => newVolumeFeasible(ctx, store.getNode(id)!, job, req, "data", want);
    assert.equal(
      check("a"),
      `CSI plugin p1 has ${1 << 20} bytes free in zone=a, and the volume to create needs ${512 << 20}`,
    );
    assert.equal(check("b"), null);
    assert.equal(check("c"), null, "stale figures count as unknown");
    assert.equal(check("d"), null, "a segment never measured is allowed");
  });
});
