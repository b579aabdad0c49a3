/**
 * The self-fence loop (self_fence.ts) over a fake alloc list, and the node lease it reads
 * (node_lease.ts): nothing is stopped while the lease is fresh, each fenced alloc is stopped once,
 * a renewal keeps the rest running, and a lease written by one agent is read back by the next as
 * old as it really is.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { SelfFence } from "../../../../src/client/fence/self_fence.js";
import { leaseFile, NodeLease } from "../../../../src/client/fence/node_lease.js";
import { nullLogger } from "../../../../src/internal/log.js";
import type { Allocation } from "../../../../src/structs/alloc.js";
import { allocOf } from "../../../builders/alloc.js";
import { csiJob, plainJob } from "../../../builders/job.js";

function fakeAllocs(allocs: Allocation[]) {
  const stops: { id: string; reason: string }[] = [];
  return {
    stops,
    allocs: () => allocs,
    stopLocally: (id: string, reason: string) => stops.push({ id, reason }),
  };
}

test("self-fence: single-writer allocs are stopped once the lease is older than the TTL, once each", () => {
  const lease = new NodeLease(null, nullLogger);
  const t0 = performance.now();
  lease.renewed(t0, 3_000);
  const writer = allocOf(csiJob("w"), "n1");
  const other = allocOf(plainJob("p"), "n1");
  const allocs = fakeAllocs([writer, other]);
  const fence = new SelfFence(lease, allocs, nullLogger);
  assert.equal(fence.check(t0 + 2_999), 0, "a fresh lease stops nothing");
  assert.equal(fence.check(t0 + 3_001), 1);
  assert.deepEqual(
    allocs.stops.map((s) => s.id),
    [writer.ID],
  );
  assert.match(allocs.stops[0]!.reason, /single-writer/);
  assert.equal(fence.check(t0 + 10_000), 0, "stopped once");
});

test("self-fence: a renewal before the bound keeps the writer running", () => {
  const lease = new NodeLease(null, nullLogger);
  const t0 = performance.now();
  lease.renewed(t0, 3_000);
  const allocs = fakeAllocs([allocOf(csiJob("w"), "n1")]);
  const fence = new SelfFence(lease, allocs, nullLogger);
  lease.renewed(t0 + 2_000, 3_000);
  assert.equal(fence.check(t0 + 4_000), 0);
  // An older renewal answered late never moves the lease back.
  lease.renewed(t0 + 1_000, 3_000);
  assert.equal(fence.check(t0 + 4_900), 0);
  assert.equal(fence.check(t0 + 5_100), 1);
});

test("node lease: the next agent reads the last renewal and TTL back, as old as they are", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-lease-"));
  try {
    const file = leaseFile(dir);
    const first = new NodeLease(file, nullLogger);
    first.renewed(performance.now(), 7_000);
    await first.flushed();
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((fs.statSync(file).mode & 0o777).toString(8), "600");
    const next = new NodeLease(file, nullLogger);
    assert.equal(next.ttlMs, 7_000);
    const age = next.ageMs();
    assert.ok(age >= 290 && age < 2_000, `age carried over (${age} ms)`);
    // A file that cannot be read is an agent that never renewed: the lease starts now.
    fs.writeFileSync(file, "{not json");
    const fresh = new NodeLease(file, nullLogger);
    assert.ok(fresh.ageMs() < 100);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
