import assert from "node:assert/strict";
import { test } from "node:test";
import { nullLogger } from "../../../src/internal/log.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { Node } from "../../../src/structs/node.js";
import { makeNode } from "../../builders/node.js";

function hostJob(source: string, readOnly: boolean) {
  return validateJob({
    ID: "j",
    TaskGroups: [
      {
        Name: "g",
        Volumes: { data: { Type: "host", Source: source, ReadOnly: readOnly } },
        Tasks: [
          {
            Name: "t",
            Driver: "exec",
            Config: { command: "/bin/true" },
            VolumeMounts: [{ Volume: "data", Destination: "/data" }],
          },
        ],
      },
    ],
  });
}

const withVolume = (id: string, readOnly: boolean): Node =>
  makeNode(id, { HostVolumes: { pg: { Name: "pg", Path: "/srv/pg", ReadOnly: readOnly } } });

async function place(nodes: Node[], source: string, readOnly: boolean) {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => nodes.forEach((n) => tx.putNode(n)));
  const job = hostJob(source, readOnly);
  await store.txn((tx) => tx.putJob(job));
  const result = await new Scheduler(store, nullLogger).evaluate("default", job.ID);
  return { result, allocs: store.allocsByJob("default", job.ID) };
}

test("host volumes: placed only on a node that has the volume", async () => {
  const { allocs } = await place([makeNode("bare"), withVolume("has", false)], "pg", false);
  assert.deepEqual(
    allocs.map((a) => a.NodeID),
    ["has"],
  );
});

test("host volumes: a missing volume or read-write on a read-only one fails with Nomad's reason", async () => {
  for (const [nodes, readOnly] of [
    [[makeNode("bare")], false],
    [[withVolume("ro", true)], false],
  ] as const) {
    const { result, allocs } = await place([...nodes], "pg", readOnly);
    assert.equal(allocs.length, 0);
    assert.deepEqual(result.failures[0]!.metrics.ConstraintFiltered, {
      "missing compatible host volumes": 1,
    });
  }
});

test("host volumes: a read-only request fits a read-only volume; other names do not match", async () => {
  assert.equal((await place([withVolume("ro", true)], "pg", true)).allocs.length, 1);
  assert.equal((await place([withVolume("rw", false)], "other", true)).allocs.length, 0);
});
