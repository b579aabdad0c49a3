/**
 * The scheduler's usage index (node_usage.ts), kept by deltas from the store's ChangeReader, never
 * drifts: after random sequences of alloc puts (any node, resources, reserved cores, CSI volumes
 * per_alloc or shared, client and desired status, moves between nodes), deletes of terminal allocs
 * (the only allocs the store's writers delete, and only once the index has read them terminal:
 * see node_usage.ts), and node writes, in random groupings per
 * transaction, each node's totals equal a from-scratch recount of the store's live allocs — read
 * with refresh() after every transaction or with catchUp() (sliced, yielding) after several. A real
 * in-memory SQLite store; fast-check picks the sequences (BERTH_USAGE_SEED replays one).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { NodeUsageIndex, allocVolumeKeys } from "../../../src/server/scheduler/node_usage.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { StateReader, StateWriter } from "../../../src/server/state/store.js";
import { isAllocTerminal, type ClientStatus } from "../../../src/structs/alloc.js";
import type { Job } from "../../../src/structs/job.js";
import { usageOf } from "../../../src/structs/resources_fit.js";
import { alloc, node, volumeJob } from "../../conformance/builders.js";

const NODES = ["n1", "n2", "n3", "n4"];
const shared = volumeJob("shared", { source: "common", count: 8 });
const JOBS: Record<string, Job> = {
  perAlloc: volumeJob("perAlloc", { source: "vol", perAlloc: true, count: 8 }),
  shared,
  // No CSI volume: resources only.
  plain: { ...shared, ID: "plain", TaskGroups: shared.TaskGroups.map((g) => ({ ...g, Volumes: {} })) },
};

const op = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant("putAlloc" as const),
      alloc: fc.integer({ min: 0, max: 7 }),
      job: fc.constantFrom(...Object.keys(JOBS)),
      node: fc.constantFrom(...NODES),
      cpu: fc.integer({ min: 0, max: 500 }),
      memory: fc.integer({ min: 0, max: 500 }),
      cores: fc.subarray([0, 1, 2, 3]),
      status: fc.constantFrom<ClientStatus>("pending", "running", "running", "complete", "failed", "lost"),
      desired: fc.constantFrom("run", "run", "stop", "evict"),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant("deleteAlloc" as const), alloc: fc.integer({ min: 0, max: 7 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("putNode" as const),
      node: fc.constantFrom(...NODES),
      status: fc.constantFrom("ready", "down"),
    }),
  },
);

type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

/** Terminal allocs as of the index's last refresh, with their ModifyIndex then. */
const seenTerminal = new Map<string, number>();

function apply(tx: StateWriter, o: Op): void {
  switch (o.op) {
    case "putAlloc": {
      const job = JOBS[o.job]!;
      const a = alloc(`a${o.alloc}`, job, o.node, o.alloc, {
        ClientStatus: o.status,
        DesiredStatus: o.desired as "run",
        AllocatedResources: {
          Tasks: {
            t: {
              Cpu: { CpuShares: o.cpu, ReservedCores: o.cores.length > 0 ? o.cores : null },
              Memory: { MemoryMB: o.memory, MemoryMaxMB: 0 },
            },
          },
          Shared: { DiskMB: 300 },
        },
      });
      tx.putAlloc(a);
      return;
    }
    case "deleteAlloc": {
      // As the garbage collector: only an alloc that has been terminal, unchanged, for the GC
      // threshold is deleted — so the index (refreshed at least every USAGE_REFRESH_MS) has read
      // its terminal put: here, one terminal when the index was last refreshed and unchanged since.
      const a = tx.getAlloc(`a${o.alloc}`);
      if (a && isAllocTerminal(a) && seenTerminal.get(a.ID) === a.ModifyIndex) tx.deleteAlloc(a.ID);
      return;
    }
    case "putNode":
      tx.putNode(node(o.node, { Status: o.status as "ready" }));
      return;
  }
}

/** Each node's totals from scratch: every live alloc in the store, summed. */
function recount(s: StateReader) {
  const out = new Map<
    string,
    { cpu: number; memoryMB: number; cores: number[]; volumes: Map<string, number>; allocs: number }
  >();
  for (const a of s.listAllocs()) {
    if (isAllocTerminal(a)) continue;
    let t = out.get(a.NodeID);
    if (!t) {
      t = { cpu: 0, memoryMB: 0, cores: [], volumes: new Map(), allocs: 0 };
      out.set(a.NodeID, t);
    }
    const u = usageOf(a.AllocatedResources);
    t.cpu += u.cpu;
    t.memoryMB += u.memoryMB;
    t.cores.push(...u.cores);
    for (const v of allocVolumeKeys(a)) t.volumes.set(v, (t.volumes.get(v) ?? 0) + 1);
    t.allocs++;
  }
  return out;
}

function check(s: SqliteStateStore, index: NodeUsageIndex, trace: string): void {
  assert.equal(index.index, s.index(), `${trace}\nthe index is at the store's`);
  const want = recount(s);
  const have = index.nodes();
  assert.deepEqual([...have.keys()].sort(), [...want.keys()].sort(), `${trace}\nnodes with live allocs`);
  for (const [id, w] of want) {
    const h = have.get(id)!;
    assert.deepEqual(
      {
        cpu: h.cpu,
        memoryMB: h.memoryMB,
        cores: [...h.cores].sort(),
        volumes: new Map([...h.volumes].sort()),
        allocs: h.allocs,
      },
      { ...w, cores: [...w.cores].sort(), volumes: new Map([...w.volumes].sort()) },
      `${trace}\nnode ${id}'s totals drifted`,
    );
  }
}

test("the scheduler's usage index kept by deltas equals a from-scratch recount after any sequence of writes", async () => {
  const seed = process.env.BERTH_USAGE_SEED ? Number(process.env.BERTH_USAGE_SEED) : undefined;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ ops: fc.array(op, { minLength: 1, maxLength: 4 }), sliced: fc.boolean() }), {
        minLength: 1,
        maxLength: 25,
      }),
      async (txns) => {
        const s = new SqliteStateStore(null);
        const index = new NodeUsageIndex();
        seenTerminal.clear();
        try {
          const trace: string[] = [];
          for (const t of txns) {
            await s.txn((tx) => {
              for (const o of t.ops) apply(tx, o);
            });
            trace.push(JSON.stringify(t));
            if (t.sliced) await index.catchUp(s);
            index.refresh(s);
            check(s, index, trace.join("\n"));
            seenTerminal.clear();
            for (const a of s.listAllocs()) if (isAllocTerminal(a)) seenTerminal.set(a.ID, a.ModifyIndex);
          }
        } finally {
          s.close();
        }
      },
    ),
    { numRuns: 150, ...(seed !== undefined ? { seed } : {}) },
  );
});

test("catchUp reads a large backlog in slices and ends exact", async () => {
  const s = new SqliteStateStore(null);
  try {
    const job = JOBS.perAlloc!;
    await s.txn((tx) => {
      for (let i = 0; i < 2000; i++) {
        tx.putAlloc(
          alloc(`b${i}`, job, NODES[i % NODES.length]!, i % 8, {
            ClientStatus: i % 5 === 0 ? "complete" : "running",
            AllocatedResources: {
              Tasks: {
                t: { Cpu: { CpuShares: 10, ReservedCores: null }, Memory: { MemoryMB: 5, MemoryMaxMB: 0 } },
              },
              Shared: { DiskMB: 300 },
            },
          }),
        );
      }
    });
    const index = new NodeUsageIndex();
    await index.catchUp(s);
    index.refresh(s);
    check(s, index, "2,000 allocs read in slices");
    assert.equal(index.node("n1")!.allocs, 400);
  } finally {
    s.close();
  }
});
