/**
 * `job plan` as a dry run of the reconciler (scheduler/job_plan.ts): what each group's pass would
 * do, the diff, the single-writer warning, and that nothing in the store changes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { TABLES } from "../../../src/server/state/store.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { planJob } from "../../../src/server/scheduler/job_plan.js";
import { singleWriterUpdateWarnings } from "../../../src/server/scheduler/reconcile_update.js";
import { nullLogger } from "../../../src/internal/log.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { Job } from "../../../src/structs/job.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";
import { allocOf } from "../../builders/alloc.js";
import { claimOf } from "../../builders/claim.js";
import { plainJob } from "../../builders/job.js";

const S = 1_000_000_000;

function job(opts: {
  count: number;
  accessMode: string;
  env: string;
  canary?: number;
  tasks?: string[];
}): Job {
  return validateJob({
    ID: "web",
    Update: { MaxParallel: 1, HealthCheck: "task_states", MinHealthyTime: S, Canary: opts.canary ?? 0 },
    TaskGroups: [
      {
        Name: "g",
        Count: opts.count,
        Volumes: {
          data: { Type: "csi", Source: "vol1", AccessMode: opts.accessMode, AttachmentMode: "file-system" },
        },
        Tasks: (opts.tasks ?? ["t"]).map((name) => ({
          Name: name,
          Driver: "exec",
          Env: { V: opts.env },
          VolumeMounts: [{ Volume: "data", Destination: "/data" }],
        })),
      },
    ],
  });
}

/** Everything a reader can see, indexes included. */
function dump(store: SqliteStateStore): string {
  return JSON.stringify({
    index: store.index(),
    tables: TABLES.map((t) => store.tableIndex(t)),
    nodes: store.listNodes(),
    jobs: store.listJobs(),
    allocs: store.listAllocs(),
    volumes: store.listVolumes(),
    plugins: store.listPlugins(),
    evals: store.listEvals(),
    deployments: store.listDeployments(),
    versions: store.jobVersions("default", "web"),
  });
}

async function running(accessMode: string, count: number, canary = 0) {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => {
    for (const id of ["n1", "n2"]) tx.putNode(makeNode(id, { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
    tx.putVolume(
      makeVolume("vol1", {
        RequestedCapabilities: [
          { AccessMode: accessMode as "single-node-writer", AttachmentMode: "file-system" },
        ],
      }),
    );
    tx.putJob(job({ count, accessMode, env: "1", canary }));
  });
  const scheduler = new Scheduler(store, nullLogger);
  await scheduler.evaluate("default", "web");
  await store.txn((tx) => {
    for (const a of tx.allocsByJob("default", "web")) tx.putAlloc({ ...a, ClientStatus: "running" });
  });
  return store;
}

test("plan of a rolling update over count 3: one destructive update (max_parallel), two ignored; nothing changes", async () => {
  const store = await running("multi-node-multi-writer", 3);
  const before = dump(store);
  const next = job({ count: 3, accessMode: "multi-node-multi-writer", env: "2" });
  const r = planJob(store, next, false, true, Date.now() * 1e6);
  assert.deepEqual(r.annotations.g, {
    Ignore: 2,
    Place: 0,
    Migrate: 0,
    Stop: 0,
    InPlaceUpdate: 0,
    DestructiveUpdate: 1,
    Canary: 0,
    Preemptions: 0,
  });
  assert.equal(r.failed, null);
  assert.equal(r.diff?.Type, "Edited");
  const g = r.diff?.TaskGroups?.[0];
  assert.deepEqual([g?.Type, g?.Updates], ["Edited", { "create/destroy update": 1, ignore: 2 }]);
  assert.equal(g?.Tasks?.[0]?.Type, "Edited");
  assert.deepEqual(g?.Tasks?.[0]?.Annotations, ["forces create/destroy update"], "Nomad's task annotation");
  assert.equal(dump(store), before, "the plan changed nothing in the store");
  store.close();
});

test("plan: an unchanged job ignores everything; a new group is Added and placed; a canary on a single-writer volume warns", async () => {
  const store = await running("single-node-writer", 1, 1);
  const same = planJob(
    store,
    job({ count: 1, accessMode: "single-node-writer", env: "1", canary: 1 }),
    true,
    true,
    0,
  );
  assert.equal(same.diff?.Type, "None");
  assert.equal(same.annotations.g?.Ignore, 1);
  const next = job({ count: 1, accessMode: "single-node-writer", env: "2", canary: 1 });
  const before = dump(store);
  const r = planJob(store, next, false, true, Date.now() * 1e6);
  assert.deepEqual([r.annotations.g?.Canary, r.annotations.g?.Ignore, r.annotations.g?.Place], [1, 0, 0]);
  assert.equal(dump(store), before);
  const [warning] = singleWriterUpdateWarnings(store, next);
  assert.match(
    warning ?? "",
    /^Group "g" writes to a single-writer volume: an update stops each old allocation/,
  );
  assert.deepEqual(
    singleWriterUpdateWarnings(store, job({ count: 1, accessMode: "multi-node-multi-writer", env: "1" })),
    [],
  );
  const fresh = planJob(store, { ...next, ID: "other" }, false, true, 0);
  assert.equal(fresh.diff?.Type, "Added");
  assert.equal(fresh.jobModifyIndex, 0);
  store.close();
});

/** `next` with a group constraint no node meets: nothing of it can be placed. */
function unplaceable(next: Job): Job {
  return validateJob({
    ...next,
    TaskGroups: next.TaskGroups.map((g) => ({
      ...g,
      Constraints: [{ LTarget: "${node.unique.name}", RTarget: "no-such-node", Operand: "=" }],
    })),
  });
}

test("plan: allocs that would find no node still count as the placements wanted, with FailedTGAllocs", async () => {
  const empty = new SqliteStateStore(null);
  const fresh = planJob(
    empty,
    job({ count: 2, accessMode: "multi-node-multi-writer", env: "1" }),
    false,
    true,
    0,
  );
  assert.equal(fresh.annotations.g?.Place, 2, "Nomad's reconciler counts both placements");
  assert.equal(fresh.failed?.g?.CoalescedFailures, 1, "and the dry run reports both failed");
  assert.deepEqual(fresh.diff?.TaskGroups?.[0]?.Updates, { create: 2 });
  assert.deepEqual(fresh.diff?.TaskGroups?.[0]?.Tasks?.[0]?.Annotations, ["forces create"]);
  empty.close();

  // A destructive update whose replacement finds no node is one update, not also a placement.
  const store = await running("multi-node-multi-writer", 1);
  const update = planJob(
    store,
    unplaceable(job({ count: 1, accessMode: "multi-node-multi-writer", env: "2" })),
    false,
    true,
    Date.now() * 1e6,
  );
  assert.deepEqual([update.annotations.g?.DestructiveUpdate, update.annotations.g?.Place], [1, 0]);
  assert.ok(update.failed?.g, "the replacement finds no node");
  const grown = planJob(
    store,
    job({ count: 2, accessMode: "multi-node-multi-writer", env: "1" }),
    false,
    true,
    Date.now() * 1e6,
  );
  const count = grown.diff?.TaskGroups?.[0]?.Fields?.find((f) => f.Name === "Count");
  assert.deepEqual([count?.Old, count?.New, count?.Annotations], ["1", "2", ["forces create"]]);
  store.close();

  // A canary that finds no node is still the canary the deployment wants.
  const canaried = await running("multi-node-multi-writer", 1, 1);
  const next = unplaceable(job({ count: 1, accessMode: "multi-node-multi-writer", env: "2", canary: 1 }));
  const r = planJob(canaried, next, false, true, Date.now() * 1e6);
  assert.deepEqual([r.annotations.g?.Canary, r.annotations.g?.Place, r.annotations.g?.Ignore], [1, 0, 1]);
  assert.equal(r.failed?.g?.CoalescedFailures, 0);
  canaried.close();
});

test("plan: a single-writer volume held by another job's alloc is a visible placement failure, not a silent hold", async () => {
  const store = new SqliteStateStore(null);
  const holder = allocOf(plainJob("holder"), "n1");
  await store.txn((tx) => {
    for (const id of ["n1", "n2"]) tx.putNode(makeNode(id, { CSINodePlugins: { p1: nodePluginInfo("p1") } }));
    tx.putAlloc(holder);
    const vol = makeVolume("vol1", {
      RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
    });
    tx.putVolume({ ...vol, WriteClaims: { [holder.ID]: claimOf(holder) } });
  });
  const r = planJob(store, job({ count: 1, accessMode: "single-node-writer", env: "1" }), false, true, 0);
  assert.equal(r.annotations.g?.Place, 1);
  const why = Object.keys(r.failed?.g?.ConstraintFiltered ?? {});
  assert.deepEqual(why, ["CSI volume vol1 has exhausted its available writer claims"]);
  store.close();
});
