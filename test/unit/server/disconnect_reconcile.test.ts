/**
 * The scheduler's part of the disconnect strategy (scheduler/disconnect_plan.ts) through real
 * evaluations over an in-memory store: an unknown alloc is replaced (or not, `replace = false`) and
 * never stopped; when its node reports again, `reconcile` picks the alloc that stays.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { markNodeDown } from "../../../src/server/node_loss.js";
import {
  pickReconnected,
  RECONNECTED_DESCRIPTION,
  REPLACED_DESCRIPTION,
} from "../../../src/server/scheduler/disconnect_plan.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { allocOf } from "../../builders/alloc.js";
import { plainJob } from "../../builders/job.js";
import { makeNode } from "../../builders/node.js";
import { nodeEndpointOf } from "../../builders/node_endpoint.js";

const S = 1_000_000_000;

function disconnectJob(disconnect: Record<string, unknown>) {
  return validateJob({
    ID: "web",
    TaskGroups: [{ Name: "g", Disconnect: disconnect, Tasks: [{ Name: "t", Driver: "exec" }] }],
  });
}

/** The job placed on n1 and running; n2 ready; then n1 disconnected and the job evaluated. */
async function disconnected(disconnect: Record<string, unknown>) {
  const store = new SqliteStateStore(null);
  const scheduler = new Scheduler(store, nullLogger);
  await store.txn((tx) => {
    tx.putNode(makeNode("n1"));
    tx.putJob(disconnectJob(disconnect));
  });
  await scheduler.evaluate("default", "web");
  const original = store.allocsByJob("default", "web")[0]!;
  await store.txn((tx) => {
    tx.putAlloc({ ...tx.getAlloc(original.ID)!, ClientStatus: "running" });
    tx.putNode(makeNode("n2"));
  });
  await store.txn((tx) => markNodeDown(tx, "n1", Date.now(), "node missed its heartbeat"));
  await scheduler.evaluate("default", "web", "node-update");
  return { store, original, ...nodeEndpointOf(store, scheduler) };
}

const live = (store: SqliteStateStore) =>
  store.allocsByJob("default", "web").filter((a) => a.DesiredStatus === "run");

async function reconnect(c: Awaited<ReturnType<typeof disconnected>>, replacement: Allocation) {
  await c.store.txn((tx) => tx.putAlloc({ ...tx.getAlloc(replacement.ID)!, ClientStatus: "running" }));
  await c.ep.heartbeat({ NodeID: "n1" });
  await c.ep.updateAllocs({
    NodeID: "n1",
    Allocs: [{ ID: c.original.ID, ClientStatus: "running", ClientDescription: "", TaskStates: {} }],
  });
  await c.hb.stop();
}

test("disconnect: replace (the default) places a replacement elsewhere; the unknown alloc keeps running", async () => {
  const c = await disconnected({ LostAfter: 60 * S });
  const runs = live(c.store);
  assert.equal(runs.length, 2);
  const orig = c.store.getAlloc(c.original.ID)!;
  const repl = runs.find((a) => a.ID !== orig.ID)!;
  assert.deepEqual([orig.ClientStatus, orig.DesiredStatus], ["unknown", "run"]);
  assert.deepEqual([repl.NodeID, repl.PreviousAllocation, repl.Name], ["n2", orig.ID, orig.Name]);
  assert.equal(orig.NextAllocation, repl.ID);
  // Another pass places nothing more.
  await c.hb.stop();
  c.store.close();
});

test("disconnect: replace = false keeps the slot with the unknown alloc", async () => {
  const c = await disconnected({ LostAfter: 60 * S, Replace: false });
  assert.deepEqual(
    live(c.store).map((a) => [a.ID, a.ClientStatus]),
    [[c.original.ID, "unknown"]],
  );
  await c.hb.stop();
  c.store.close();
});

for (const [reconcile, keeps] of [
  ["best_score", "original"],
  ["keep_original", "original"],
  ["keep_replacement", "replacement"],
] as const) {
  test(`disconnect: on reconnect, reconcile = ${reconcile} keeps the ${keeps}`, async () => {
    const c = await disconnected({ LostAfter: 60 * S, Reconcile: reconcile });
    const replacement = live(c.store).find((a) => a.ID !== c.original.ID)!;
    await reconnect(c, replacement);
    const orig = c.store.getAlloc(c.original.ID)!;
    const repl = c.store.getAlloc(replacement.ID)!;
    assert.equal(orig.ClientStatus, "running", "the node's report replaces unknown");
    assert.deepEqual(
      orig.AllocStates?.map((s) => s.Value),
      ["unknown", "running"],
    );
    const [kept, stopped] = keeps === "original" ? [orig, repl] : [repl, orig];
    assert.equal(kept.DesiredStatus, "run");
    assert.equal(stopped.DesiredStatus, "stop");
    assert.equal(
      stopped.DesiredDescription,
      keeps === "original" ? RECONNECTED_DESCRIPTION : REPLACED_DESCRIPTION,
    );
    c.store.close();
  });
}

test("disconnect: pickReconnected — a running alloc beats one that is not; longest_running by start", () => {
  const job = plainJob("p");
  const at = (iso: string) => ({
    t: {
      State: "running" as const,
      Failed: false,
      Restarts: 0,
      StartedAt: iso,
      FinishedAt: null,
      Events: [],
    },
  });
  const orig = allocOf(job, "n1", { TaskStates: at("2026-01-01T00:00:10Z") });
  const repl = allocOf(job, "n2", { TaskStates: at("2026-01-01T00:00:05Z") });
  assert.equal(pickReconnected("longest_running", orig, repl), repl);
  assert.equal(pickReconnected("keep_original", orig, { ...repl, ClientStatus: "pending" }), orig);
  assert.equal(pickReconnected("keep_original", { ...orig, ClientStatus: "pending" }, repl), repl);
  assert.equal(pickReconnected("keep_replacement", orig, repl), repl);
  assert.equal(pickReconnected("best_score", orig, repl), orig);
});

test("disconnect: bad settings answer a validation error naming the field", () => {
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ Disconnect: { LostAfter: -1 } }, /Disconnect\.LostAfter.*at least 0/],
    [{ Disconnect: { Reconcile: "newest" } }, /Disconnect\.Reconcile.*unknown reconcile option "newest"/],
    [{ Disconnect: { LostAfter: S, StopOnClientAfter: S } }, /both lost_after and stop_on_client_after/],
    [{ Disconnect: { LostAfter: S }, MaxClientDisconnect: S }, /lost_after and max_client_disconnect/],
    [{ MaxClientDisconnect: S, StopAfterClientDisconnect: S }, /mutually exclusive/],
    [{ Disconnect: { Replace: "yes" } }, /Disconnect\.Replace.*boolean/],
    [{ Disconnect: { LostAfterr: S } }, /Disconnect/],
  ];
  for (const [group, want] of bad) {
    assert.throws(
      () =>
        validateJob({
          ID: "x",
          TaskGroups: [{ Name: "g", ...group, Tasks: [{ Name: "t", Driver: "exec" }] }],
        }),
      want,
      JSON.stringify(group),
    );
  }
  assert.throws(
    () =>
      validateJob({
        ID: "x",
        Type: "system",
        TaskGroups: [
          { Name: "g", Disconnect: { StopOnClientAfter: S }, Tasks: [{ Name: "t", Driver: "exec" }] },
        ],
      }),
    /StopOnClientAfter.*service or batch/,
  );
});
