/**
 * A plan that reads node usage from the scheduler's index (node_usage.ts through proposed_usage.ts
 * and the CSI max-volumes check) picks exactly what a plan that reads every node's allocs picks:
 * the same node and resources for every alloc, the same stops and the same placement failures
 * with the same metrics. Random clusters (resources, reserved cores, node states, a node plugin
 * with max volumes), other jobs' and the job's own allocs (some of an older version, so the plan
 * also stops), jobs with and without per_alloc CSI volumes, cores and distinct_hosts. A real
 * in-memory SQLite store; fast-check picks the cases (BERTH_PLAN_USAGE_SEED replays one).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { NodeUsageIndex } from "../../../src/server/scheduler/node_usage.js";
import { computePlan } from "../../../src/server/scheduler/plan.js";
import type { Plan } from "../../../src/server/scheduler/plan_types.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import type { ClientStatus } from "../../../src/structs/alloc.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { CSIInfo } from "../../../src/structs/plugin.js";
import { alloc } from "../../conformance/builders.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";

const nodeArb = fc.record({
  cpu: fc.integer({ min: 200, max: 3000 }),
  memory: fc.integer({ min: 300, max: 3000 }),
  cores: fc.integer({ min: 0, max: 4 }),
  status: fc.constantFrom("ready", "ready", "ready", "down"),
  maxVolumes: fc.integer({ min: 0, max: 3 }),
  plugin: fc.constantFrom("healthy", "healthy", "unhealthy", "none"),
});

const existingArb = fc.record({
  job: fc.constantFrom("j", "other"),
  oldVersion: fc.boolean(),
  node: fc.integer({ min: 0, max: 5 }),
  index: fc.integer({ min: 0, max: 5 }),
  cpu: fc.integer({ min: 0, max: 800 }),
  memory: fc.integer({ min: 0, max: 800 }),
  core: fc.option(fc.integer({ min: 0, max: 3 })),
  status: fc.constantFrom<ClientStatus>("pending", "running", "running", "complete", "failed"),
});

const jobArb = fc.record({
  count: fc.integer({ min: 1, max: 6 }),
  cpu: fc.integer({ min: 50, max: 900 }),
  memory: fc.integer({ min: 50, max: 900 }),
  cores: fc.integer({ min: 0, max: 2 }),
  volumes: fc.boolean(),
  distinct: fc.boolean(),
});

function group(
  name: string,
  j: { count: number; cpu: number; memory: number; cores: number; volumes: boolean; distinct: boolean },
) {
  return {
    Name: name,
    Count: j.count,
    ...(j.distinct ? { Constraints: [{ LTarget: "", RTarget: "", Operand: "distinct_hosts" }] } : {}),
    ...(j.volumes
      ? {
          Volumes: {
            data: {
              Type: "csi",
              Source: "vol",
              PerAlloc: true,
              AccessMode: "single-node-writer",
              AttachmentMode: "file-system",
            },
          },
        }
      : {}),
    Tasks: [
      {
        Name: "t",
        Driver: "exec",
        ...(j.volumes ? { VolumeMounts: [{ Volume: "data", Destination: "/data" }] } : {}),
        // A task asks for cpu or for cores, never both (Nomad's rule).
        Resources: { MemoryMB: j.memory, ...(j.cores > 0 ? { Cores: j.cores } : { CPU: j.cpu }) },
      },
    ],
  };
}

/** What must be the same: placements by name (node, resources), stops, failures and their metrics. */
function outcome(plan: Plan) {
  return {
    place: plan.place.map((a) => [a.Name, a.NodeID, a.AllocatedResources]),
    stop: plan.stop.map((s) => [s.alloc.ID, s.description]),
    failures: plan.failures.map((f) => [f.group, f.missing, f.names, f.metrics]),
  };
}

test("a plan reading node usage from the index places exactly as one reading every node's allocs", async () => {
  const seed = process.env.BERTH_PLAN_USAGE_SEED ? Number(process.env.BERTH_PLAN_USAGE_SEED) : undefined;
  await fc.assert(
    fc.asyncProperty(
      fc.array(nodeArb, { minLength: 1, maxLength: 6 }),
      fc.array(existingArb, { maxLength: 10 }),
      jobArb,
      fc.integer({ min: 0, max: 3 }),
      async (nodes, existing, spec, ineligible) => {
        const s = new SqliteStateStore(null);
        try {
          const v1 = validateJob({ ID: "j", Type: "service", TaskGroups: [group("g", spec)] });
          const other = validateJob({
            ID: "other",
            Type: "service",
            TaskGroups: [group("g", { ...spec, count: 6 })],
          });
          await s.txn((tx) => {
            nodes.forEach((n, i) => {
              const plugins: Record<string, CSIInfo> =
                n.plugin === "none"
                  ? {}
                  : {
                      p: nodePluginInfo(
                        "p",
                        { Healthy: n.plugin === "healthy" },
                        { MaxVolumes: n.maxVolumes },
                      ),
                    };
              tx.putNode(
                makeNode(`n${i}`, {
                  Status: n.status as "ready",
                  SchedulingEligibility: i === ineligible ? "ineligible" : "eligible",
                  CSINodePlugins: plugins,
                  NodeResources: {
                    Cpu: {
                      CpuShares: n.cpu,
                      TotalCpuCores: Math.max(1, n.cores),
                      ReservableCpuCores: [...Array(n.cores).keys()],
                    },
                    Memory: { MemoryMB: n.memory },
                    Disk: { DiskMB: 10_000 },
                  },
                }),
              );
            });
            for (let i = 0; i < 6; i++) tx.putVolume(makeVolume(`vol[${i}]`, { PluginID: "p" }));
            tx.putJob(v1);
            tx.putJob(other);
          });
          // Some of the job's allocs are of an older version: the plan stops (and replaces) them.
          const stored = s.getJob("default", "j")!;
          const older = { ...stored, Version: stored.Version + 1 };
          const storedOther = s.getJob("default", "other")!;
          await s.txn((tx) => {
            existing.forEach((e, i) => {
              const job = e.job === "j" ? (e.oldVersion ? stored : older) : storedOther;
              tx.putAlloc(
                alloc(`e${i}`, job, `n${e.node % nodes.length}`, e.index, {
                  ClientStatus: e.status,
                  AllocatedResources: {
                    Tasks: {
                      t: {
                        Cpu: { CpuShares: e.cpu, ReservedCores: e.core === null ? null : [e.core] },
                        Memory: { MemoryMB: e.memory, MemoryMaxMB: 0 },
                      },
                    },
                    Shared: { DiskMB: 300 },
                  },
                }),
              );
            });
          });
          // The job as the pass sees it: the newer version, so allocs of `stored` are replaced.
          await s.txn((tx) => tx.putJob({ ...older }));
          const job = s.getJob("default", "j")!;
          const usage = new NodeUsageIndex();
          usage.refresh(s);
          const plain = computePlan(s, job, 1e18);
          const indexed = computePlan(s, job, 1e18, "", { usage });
          assert.deepEqual(outcome(indexed), outcome(plain));
        } finally {
          s.close();
        }
      },
    ),
    { numRuns: 200, ...(seed !== undefined ? { seed } : {}) },
  );
});
