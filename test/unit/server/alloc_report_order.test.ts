/**
 * A node's alloc reports carry its report order (structs/node_report.ts): a report that waited in a
 * hung server and is served after a newer one changes nothing, so a finished alloc is never made
 * live again by its own stale "running". Reports without an order are applied as before.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { nodeEndpointOf } from "../../builders/node_endpoint.js";

test("alloc reports: an older report than the one applied is skipped; unordered ones apply", async () => {
  const store = new SqliteStateStore(null);
  const scheduler = new Scheduler(store, nullLogger);
  const job = plainJob("j", "batch");
  const alloc = allocOf(job, "n1", { ClientStatus: "running" });
  await store.txn((tx) => {
    tx.putNode(makeNode("n1"));
    tx.putJob(job);
    tx.putAlloc(alloc);
  });
  const { ep, hb } = nodeEndpointOf(store, scheduler);
  const report = (ClientStatus: "running" | "complete", ReportOrder?: [number, number]) =>
    ep.updateAllocs({
      NodeID: "n1",
      Allocs: [{ ID: alloc.ID, ClientStatus, ClientDescription: "", TaskStates: {} }],
      ...(ReportOrder ? { ReportOrder } : {}),
    });
  await report("complete", [7, 5]);
  assert.equal(store.getAlloc(alloc.ID)!.ClientStatus, "complete");
  await report("running", [7, 4]); // sent before, served after
  assert.equal(store.getAlloc(alloc.ID)!.ClientStatus, "complete", "the stale report changed nothing");
  await report("running", [6, 99]); // an earlier agent process's
  assert.equal(store.getAlloc(alloc.ID)!.ClientStatus, "complete");
  assert.deepEqual(store.getAlloc(alloc.ID)!.ReportOrder, [7, 5]);
  await assert.rejects(report("running", [-1, 0] as [number, number]), /ReportOrder/);
  await hb.stop();
  store.close();
});
