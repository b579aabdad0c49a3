/**
 * The Jepsen-style partition test against one server (no etcd, its own store): node agents A and
 * B reach it only through blackholing proxies; the workload's node is cut from the server for
 * longer than the heartbeat TTL, then healed — once (the three-server gate partitions twice),
 * seeded; see jepsen_ha.test.ts for the checker's invariants, which all apply.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { cleanUp } from "../restart/restart_fixtures.js";
import { JepsenCluster } from "./cluster.js";
import { failedChecks, runJepsen } from "./run.js";
import { prng } from "../restart/fault_fixtures.js";
import { jepsenSeed, keepLogs, say, schedule, SKIPPED } from "./schedule.js";

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-jepsen-1-")));
const TTL_MS = 5000;
const cluster = new JepsenCluster({ dir, heartbeatTtlMs: TTL_MS, nodeNames: ["A", "B"] });

after(async () => {
  await cluster.stopHard().catch(() => undefined);
  keepLogs(cluster, "one-server");
  await cleanUp([dir], 0);
});

test(
  "jepsen, one server: a node partitioned from its server past the TTL never makes two writers",
  { skip: SKIPPED ? "BERTH_JEPSEN_SKIP=1 is set" : false, timeout: 300_000 },
  async () => {
    const seed = jepsenSeed();
    say(`one server: seed ${seed} (BERTH_JEPSEN_SEED=${seed} replays it)`);
    const rand = prng(seed);
    const report = await runJepsen({
      cluster,
      schedule: schedule(rand, { "partition-node": 1 }),
      rand,
      ttlMs: TTL_MS,
      leaseTtlMs: 0,
      pauseMs: 0,
      partitionMaxMs: TTL_MS * 4,
      recoverMs: 90_000,
      log: say,
    });
    const failed = failedChecks(report, say);
    if (failed.length > 0) process.stderr.write(cluster.logTails(40) + "\n");
    assert.deepEqual(failed, [], `seed ${seed}: checks failed (see the report above)`);
  },
);
