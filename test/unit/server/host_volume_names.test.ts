/**
 * A `type = "host"` volume is placed only on a node that offers a host volume of exactly that name
 * (issue 10): a name that happens to be an Object.prototype member (`constructor`, `toString`,
 * `__proto__`) must not match a node without host volumes, or the group is placed, its CSI volume
 * claimed, and the task fails only when it starts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { nullLogger } from "../../../src/internal/log.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { hostVolumeFits, type Node } from "../../../src/structs/node.js";
import { makeNode } from "../../builders/node.js";

const PROTOTYPE_NAMES = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"];

test("hostVolumeFits: only an own entry of that name fits, whatever the node carries", () => {
  const nodes: Pick<Node, "HostVolumes">[] = [
    {},
    { HostVolumes: {} },
    { HostVolumes: null as unknown as undefined },
    { HostVolumes: { pg: { Name: "pg", Path: "/srv/pg", ReadOnly: false } } },
  ];
  for (const node of nodes) {
    for (const name of PROTOTYPE_NAMES) {
      for (const ro of [true, false]) {
        assert.equal(
          hostVolumeFits(node, name, ro),
          false,
          `${name} (read_only ${ro}) on ${JSON.stringify(node)}`,
        );
      }
    }
  }
  assert.equal(hostVolumeFits(nodes[3]!, "pg", false), true);
});

test("a group asking for a host volume no node offers is not placed and takes no CSI claim", async () => {
  for (const source of PROTOTYPE_NAMES) {
    const store = new SqliteStateStore(null);
    await store.txn((tx) => tx.putNode(makeNode("bare", { HostVolumes: {} })));
    const job = validateJob({
      ID: "j",
      TaskGroups: [
        {
          Name: "g",
          Volumes: {
            host: { Type: "host", Source: source },
            data: {
              Type: "csi",
              Source: "v1",
              AccessMode: "single-node-writer",
              AttachmentMode: "file-system",
            },
          },
          Tasks: [
            {
              Name: "t",
              Driver: "exec",
              Config: { command: "/bin/true" },
              VolumeMounts: [{ Volume: "host", Destination: "/host" }],
            },
          ],
        },
      ],
    });
    await store.txn((tx) => tx.putJob(job));
    const result = await new Scheduler(store, nullLogger).evaluate("default", job.ID);
    assert.equal(store.allocsByJob("default", job.ID).length, 0, source);
    assert.deepEqual(
      result.failures[0]!.metrics.ConstraintFiltered,
      { "missing compatible host volumes": 1 },
      source,
    );
  }
});
