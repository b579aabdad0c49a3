/**
 * The leader's job volume loop (server/jobvolumes/loop.ts) over a real in-memory store, with the
 * volume endpoint's create/delete recorded: a placed alloc's missing volume is created once with
 * its node's topology; a purged job's delete-on-purge volume is deleted only once unclaimed, a
 * retain one never.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { JobVolumeLoop } from "../../../src/server/jobvolumes/loop.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { CSIVolume } from "../../../src/structs/volume.js";
import { allocOf } from "../../builders/alloc.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

const job = validateJob({
  ID: "db",
  TaskGroups: [
    {
      Name: "g",
      Count: 1,
      Volumes: {
        data: {
          Type: "csi",
          Source: "data",
          AccessMode: "single-node-writer",
          AttachmentMode: "file-system",
          PerAlloc: true,
          Create: { PluginID: "p1", OnPurge: "delete" },
        },
      },
      Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
    },
  ],
});

function recorder(store: SqliteStateStore) {
  const created: CSIVolume[] = [];
  const deleted: string[] = [];
  return {
    created,
    deleted,
    actions: {
      create: async (vols: CSIVolume[]) => {
        created.push(...vols);
        await store.txn((tx) => vols.forEach((v) => tx.putVolume({ ...v, ExternalID: `ext-${v.ID}` })));
      },
      delete: async (ns: string, id: string) => {
        deleted.push(id);
        await store.txn((tx) => tx.deleteVolume(ns, id));
      },
    },
  };
}

test("job volume loop: create on placement, delete after purge once unclaimed, keep retain", async () => {
  const store = new SqliteStateStore(null);
  try {
    const topo = { Segments: { host: "n1" } };
    await store.txn((tx) => {
      tx.putNode(
        makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1", {}, { AccessibleTopology: topo }) } }),
      );
      tx.putJob(job);
    });
    const stored = store.getJob("default", "db")!;
    const alloc = allocOf(stored, "n1");
    await store.txn((tx) => tx.putAlloc(alloc));
    const r = recorder(store);
    const loop = new JobVolumeLoop(store, r.actions, nullLogger);
    const first = await loop.pass();
    assert.deepEqual(first.created, ["data[0]"]);
    assert.deepEqual(r.created[0]!.RequestedTopologies, { Required: [topo], Preferred: [topo] });
    assert.deepEqual(r.created[0]!.CreatedBy, {
      JobID: "db",
      TaskGroup: "g",
      Volume: "data",
      OnPurge: "delete",
    });
    assert.deepEqual((await loop.pass()).created, [], "created once");

    // Claimed, then the job is purged: not deleted while the claim stands.
    const claim = {
      AllocationID: alloc.ID,
      NodeID: "n1",
      ExternalNodeID: "",
      Mode: "write" as const,
      AccessMode: "single-node-writer" as const,
      AttachmentMode: "file-system" as const,
      State: "taken" as const,
    };
    await store.txn((tx) => {
      const v = tx.getVolume("default", "data[0]")!;
      tx.putVolume({ ...v, WriteClaims: { [alloc.ID]: claim } });
      tx.putVolume(
        makeVolume("kept", { CreatedBy: { JobID: "db", TaskGroup: "g", Volume: "x", OnPurge: "retain" } }),
      );
      tx.deleteJob("default", "db");
      tx.putAlloc({ ...tx.getAlloc(alloc.ID)!, DesiredStatus: "stop", ClientStatus: "complete" });
    });
    assert.deepEqual((await loop.pass()).deleted, [], "never while claimed");
    await store.txn((tx) => {
      const v = tx.getVolume("default", "data[0]")!;
      tx.putVolume({ ...v, WriteClaims: {} });
    });
    assert.deepEqual((await loop.pass()).deleted, ["data[0]"]);
    assert.deepEqual(r.deleted, ["data[0]"], "the retain volume stays");
    assert.ok(store.getVolume("default", "kept"));
  } finally {
    store.close();
  }
});
