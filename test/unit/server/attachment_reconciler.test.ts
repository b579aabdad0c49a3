/**
 * The leader's attachment reconciler (server/leader/attachment_reconciler.ts), unit: a real SQLite
 * store, the real controller client and volume locks, a fake node connection answering the
 * ClientCSI controller calls. A pass follows ListVolumes' pages to the end, unpublishes a stale
 * attachment, republishes a lost one and records each on the volume; a listing that fails on a
 * later page changes nothing; dry run calls nothing and records once; a volume written after the
 * listing began is left for the next pass; a poke (a refused claim) runs a pass at once; the
 * claim's ControllerPublish tells the reconciler of FAILED_PRECONDITION without retrying it under
 * the lock.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { NodeConnections, type NodeConn } from "../../../src/server/clientconn/connections.js";
import { ControllerClient } from "../../../src/server/clientconn/controller.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { AttachmentReconciler } from "../../../src/server/leader/attachment_reconciler.js";
import { PublishRefusals } from "../../../src/server/leader/attachment_hints.js";
import { publishForClaim } from "../../../src/server/rpc/claim_publish.js";
import { KeyedMutex } from "../../../src/internal/keyed_mutex.js";
import { nullLogger } from "../../../src/internal/log.js";
import { Telemetry } from "../../../src/internal/metrics/telemetry.js";
import { BerthError } from "../../../src/structs/errors.js";
import type { ControllerListVolumesResponse } from "../../../src/structs/rpc.js";
import type { VolumeClaim } from "../../../src/structs/volume.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { makeVolume } from "../../builders/volume.js";
import { controllerInfo } from "../../builders/plugin_info.js";

type Pages = Map<string, ControllerListVolumesResponse | BerthError>;

/** A node connection whose controller calls answer from `pages` (by starting token) and record. */
function controllerNode(pages: Pages): NodeConn & { calls: string[]; onList?: () => Promise<void> } {
  const c = {
    isOpen: true,
    calls: [] as string[],
    onList: undefined as undefined | (() => Promise<void>),
    call: async (method: string, p: Record<string, string>) => {
      if (method === "ClientCSI.ControllerListVolumes") {
        c.calls.push(`list:${p.StartingToken}`);
        await c.onList?.();
        const page = pages.get(p.StartingToken!);
        if (!page) throw new BerthError("ERR_CSI_ABORTED", "bad token");
        if (page instanceof BerthError) throw page;
        return page;
      }
      const name = method === "ClientCSI.ControllerUnpublishVolume" ? "unpublish" : "publish";
      c.calls.push(`${name}:${p.ExternalVolumeID}:${p.ExternalNodeID}`);
      return name === "publish" ? { PublishContext: { attached_to: p.ExternalNodeID } } : {};
    },
    close: () => undefined,
  };
  return c as unknown as NodeConn & { calls: string[]; onList?: () => Promise<void> };
}

const entry = (ext: string, nodes: string[]) => ({
  ExternalID: ext,
  CapacityBytes: 0,
  VolumeContext: {},
  CloneID: "",
  SnapshotID: "",
  PublishedExternalNodeIDs: nodes,
  IsAbnormal: false,
  Status: "",
});

function claimOn(alloc: string, node: string): VolumeClaim {
  return {
    AllocationID: alloc,
    NodeID: node,
    ExternalNodeID: `ext-${node}`,
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
    State: "taken",
    ControllerPublishPluginID: "p1",
  };
}

/**
 * v1: published to a ghost node berth never claimed; v2: claimed by a running alloc on n2, which
 * the provider lost; v3: claimed on n2 and listed there (agreement). Two pages.
 */
async function setup(opts: { dryRun?: boolean } = {}) {
  const store = new SqliteStateStore(null);
  const job = plainJob("app");
  const a2 = allocOf(job, "n2", { ID: "a2" });
  const a3 = allocOf(job, "n2", { ID: "a3" });
  const withCaps = controllerInfo("p1", true, {
    ControllerInfo: {
      ...controllerInfo("p1").ControllerInfo!,
      SupportsListVolumes: true,
      SupportsListVolumesAttachedNodes: true,
    },
  });
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { CSIControllerPlugins: { p1: withCaps } }));
    tx.putNode(makeNode("n2"));
    tx.putAlloc(a2);
    tx.putAlloc(a3);
    tx.putVolume(makeVolume("v1"));
    tx.putVolume(makeVolume("v2", { WriteClaims: { a2: claimOn("a2", "n2") } }));
    tx.putVolume(makeVolume("v3", { WriteClaims: { a3: claimOn("a3", "n2") } }));
  });
  const pages: Pages = new Map<string, ControllerListVolumesResponse | BerthError>([
    ["", { Entries: [entry("ext-v1", ["ext-ghost"]), entry("ext-v2", [])], NextToken: "t1" }],
    ["t1", { Entries: [entry("ext-v3", ["ext-n2"])], NextToken: "" }],
  ]);
  const conn = controllerNode(pages);
  const conns = new NodeConnections();
  conns.add("n1", conn);
  const refusals = new PublishRefusals();
  const telemetry = new Telemetry();
  const reconciler = new AttachmentReconciler(
    store,
    new ControllerClient(store, conns, nullLogger),
    new KeyedMutex(),
    nullLogger,
    { dryRun: opts.dryRun ?? false, intervalMs: 3_600_000, callRetryMs: 0 },
    refusals,
    telemetry,
  );
  const record = (id: string) => store.getVolume("default", id)?.AttachmentReconcile;
  return { store, pages, conn, refusals, reconciler, record, telemetry };
}

test("attachment reconcile: every page is read; stale unpublished, lost republished, both recorded", async () => {
  const { store, conn, reconciler, record, telemetry } = await setup();
  const r = await reconciler.pass();
  assert.deepEqual(conn.calls, ["list:", "list:t1", "unpublish:ext-v1:ext-ghost", "publish:ext-v2:ext-n2"]);
  assert.deepEqual(
    r.corrections.map((c) => `${c.action}:${c.outcome}`),
    ["unpublish-stale:done", "republish-lost:done"],
  );
  assert.deepEqual(
    [record("v1")?.Action, record("v1")?.Outcome, record("v1")?.ExternalNodeID, record("v1")?.AllocationID],
    ["unpublish-stale", "done", "ext-ghost", ""],
  );
  assert.deepEqual(
    [record("v2")?.Action, record("v2")?.NodeID, record("v2")?.AllocationID],
    ["republish-lost", "n2", "a2"],
  );
  assert.equal(record("v3"), undefined, "agreement: nothing recorded");
  const metrics = await telemetry.prometheus();
  assert.match(
    metrics,
    /berth_server_volume_attachment_reconcile_corrections_total\{plugin_id="p1",action="unpublish-stale",outcome="done"\} 1/,
  );
  store.close();
});

test("attachment reconcile: a listing that fails on a later page changes nothing", async () => {
  const { store, pages, conn, reconciler, record } = await setup();
  pages.set("t1", new BerthError("ERR_CSI_INTERNAL", "page two broke"));
  const r = await reconciler.pass();
  assert.deepEqual(conn.calls, ["list:", "list:t1"]);
  assert.deepEqual(
    r.skipped.map((s) => [s.pluginId, s.code]),
    [["p1", "ERR_CSI_INTERNAL"]],
  );
  assert.match(r.skipped[0]!.reason, /page two broke/);
  assert.equal(record("v1"), undefined);
  // A token the plugin answers twice is a list that never ends: skipped too.
  pages.set("t1", { Entries: [], NextToken: "t1" });
  const again = await reconciler.pass();
  assert.equal(again.skipped[0]?.code, "ERR_CSI_BAD_ANSWER");
  assert.equal(again.corrections.length, 0);
  store.close();
});

test("attachment reconcile: dry run calls nothing and records each finding once", async () => {
  const { store, conn, reconciler, record } = await setup({ dryRun: true });
  const r = await reconciler.pass();
  assert.deepEqual(conn.calls, ["list:", "list:t1"]);
  assert.deepEqual(
    r.corrections.map((c) => c.outcome),
    ["dry-run", "dry-run"],
  );
  assert.equal(record("v1")?.Outcome, "dry-run");
  const index = store.tableIndex("volumes");
  await reconciler.pass();
  assert.equal(store.tableIndex("volumes"), index, "the same finding is not written again");
  store.close();
});

test("attachment reconcile: a volume written after the listing began is left for the next pass", async () => {
  const { store, conn, reconciler, record } = await setup();
  conn.onList = async () => {
    conn.onList = undefined;
    // A claim of v1 on n1 committed while the list was out: the ghost may be that claim's node.
    const v1 = store.getVolume("default", "v1")!;
    await store.txn((tx) => tx.putVolume({ ...v1, Name: "touched" }));
  };
  const r = await reconciler.pass();
  assert.equal(r.changed, 1);
  assert.ok(!conn.calls.some((c) => c.startsWith("unpublish")), conn.calls.join(", "));
  assert.equal(record("v1"), undefined);
  await reconciler.pass();
  assert.equal(record("v1")?.Outcome, "done", "the next pass corrects it");
  store.close();
});

test("attachment reconcile: a refused claim's hint runs a pass at once", async () => {
  const { store, conn, reconciler, refusals } = await setup();
  reconciler.start();
  try {
    refusals.refused("p1");
    const deadline = Date.now() + 20_000;
    while (!conn.calls.includes("unpublish:ext-v1:ext-ghost") && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(conn.calls.includes("unpublish:ext-v1:ext-ghost"), conn.calls.join(", "));
  } finally {
    await reconciler.stop();
    store.close();
  }
});

test("claim publish: FAILED_PRECONDITION is told and answered at once; RESOURCE_EXHAUSTED is told and retried", async () => {
  const told: string[] = [];
  let calls = 0;
  const failing = (code: "ERR_CSI_FAILED_PRECONDITION" | "ERR_CSI_RESOURCE_EXHAUSTED", failures: number) => ({
    controllers: {
      call: () => {
        calls++;
        return calls <= failures
          ? Promise.reject(new BerthError(code, "published to another node"))
          : Promise.resolve({ PublishContext: { k: "v" } });
      },
    } as unknown as ControllerClient,
    publishRefused: (p: string) => told.push(p),
  });
  const req = {
    PluginID: "p1",
    ExternalVolumeID: "ext-v1",
    ExternalNodeID: "ext-n1",
    Capability: { AccessMode: "single-node-writer" as const, AttachmentMode: "file-system" as const },
    MountOptions: null,
    ReadOnly: false,
    Secrets: {},
    VolumeContext: {},
  };
  await assert.rejects(
    publishForClaim(failing("ERR_CSI_FAILED_PRECONDITION", 1), req, undefined),
    /another node/,
  );
  assert.deepEqual([calls, told], [1, ["p1"]], "one round, told once");
  calls = 0;
  assert.deepEqual(await publishForClaim(failing("ERR_CSI_RESOURCE_EXHAUSTED", 1), req, undefined), {
    k: "v",
  });
  assert.deepEqual([calls, told], [2, ["p1", "p1"]]);
});
