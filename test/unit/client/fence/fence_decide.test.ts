/**
 * The self-fence's decision (fence_decide.ts), on plain data: which allocs a node cut off from the
 * servers stops, after how long, and for which rule.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fencePolicy, holdsSingleWriterClaim } from "../../../../src/client/fence/fence_decide.js";
import type { Job } from "../../../../src/structs/job.js";
import { allocOf } from "../../../builders/alloc.js";
import { csiJob, plainJob } from "../../../builders/job.js";

const TTL = 30_000;
const S = 1_000_000_000;

function withGroup(job: Job, over: Record<string, unknown>): Job {
  return { ...job, TaskGroups: job.TaskGroups.map((g) => ({ ...g, ...over })) };
}

test("fence: a writer of a single-writer volume is stopped after one TTL", () => {
  for (const mode of ["single-node-writer", "multi-node-single-writer"]) {
    const alloc = allocOf(csiJob("w", { accessMode: mode }), "n1");
    assert.deepEqual(fencePolicy(alloc, TTL), { afterMs: TTL, rule: "single-writer" }, mode);
  }
});

test("fence: readers, multi-writer volumes and jobs without volumes are not fenced by default", () => {
  const cases = [
    csiJob("r", { accessMode: "single-node-reader-only", readOnly: true }),
    csiJob("ro", { accessMode: "single-node-writer", readOnly: true }),
    csiJob("mw", { accessMode: "multi-node-multi-writer" }),
    plainJob("plain"),
  ];
  for (const job of cases) assert.equal(fencePolicy(allocOf(job, "n1"), TTL), null, job.ID);
});

test("fence: a csi volume with no access mode in the job is treated as a writer", () => {
  const job = csiJob("unknown");
  const g = job.TaskGroups[0]!;
  const vol = { ...g.Volumes.data!, AccessMode: "" as const };
  assert.equal(holdsSingleWriterClaim({ Volumes: { data: vol } }), true);
});

test("fence: disconnect.stop_on_client_after and stop_after_client_disconnect stop any alloc", () => {
  const block = withGroup(plainJob("p"), { Disconnect: { StopOnClientAfter: 90 * S } });
  assert.deepEqual(fencePolicy(allocOf(block, "n1"), TTL), { afterMs: 90_000, rule: "stop_on_client_after" });
  const old = withGroup(plainJob("q"), { StopAfterClientDisconnect: 10 * S });
  assert.deepEqual(fencePolicy(allocOf(old, "n1"), TTL), { afterMs: 10_000, rule: "stop_on_client_after" });
  // The block wins over the old field when both are set (Nomad's precedence).
  const both = withGroup(plainJob("b"), {
    Disconnect: { StopOnClientAfter: 5 * S },
    StopAfterClientDisconnect: 50 * S,
  });
  assert.equal(fencePolicy(allocOf(both, "n1"), TTL)?.afterMs, 5_000);
});

test("fence: the shorter bound wins; a longer disconnect bound never delays the single-writer fence", () => {
  const short = withGroup(csiJob("s"), { Disconnect: { StopOnClientAfter: 5 * S } });
  assert.deepEqual(fencePolicy(allocOf(short, "n1"), TTL), { afterMs: 5_000, rule: "stop_on_client_after" });
  const long = withGroup(csiJob("l"), { Disconnect: { StopOnClientAfter: 600 * S } });
  assert.deepEqual(fencePolicy(allocOf(long, "n1"), TTL), { afterMs: TTL, rule: "single-writer" });
});

test("fence: a terminal alloc is never fenced", () => {
  const alloc = allocOf(csiJob("done"), "n1", { ClientStatus: "complete" });
  assert.equal(fencePolicy(alloc, TTL), null);
});

test("fence: a single-writer alloc of a group with lost_after runs that much longer than one TTL", () => {
  const block = withGroup(csiJob("la"), { Disconnect: { LostAfter: 20 * S } });
  assert.deepEqual(fencePolicy(allocOf(block, "n1"), TTL), { afterMs: TTL + 20_000, rule: "single-writer" });
  const old = withGroup(csiJob("mcd"), { MaxClientDisconnect: 5 * S });
  assert.deepEqual(fencePolicy(allocOf(old, "n1"), TTL), { afterMs: TTL + 5_000, rule: "single-writer" });
  // lost_after alone does not fence an alloc without a single-writer claim.
  assert.equal(
    fencePolicy(allocOf(withGroup(plainJob("p"), { Disconnect: { LostAfter: S } }), "n1"), TTL),
    null,
  );
});
