/**
 * Nomad's `disconnect { lost_after }` through real processes: one server (3 s heartbeat TTL), node
 * agents A and B behind blackholing proxies, csi-hostpath on both, and the Jepsen workload (a
 * count=1 writer of a single-node-writer volume) with `lost_after = "8s"`.
 *
 * 1. Its node is cut off for longer than the TTL but shorter than the window: the node is
 *    `disconnected`, the alloc `unknown` and its claim kept — the writer never stops and nothing
 *    else writes; on heal the node's report makes it `running` again (AllocStates: unknown, running)
 *    and the job still has that one alloc.
 * 2. Cut off past the window: the node stops the writer by itself (TTL + lost_after), the server
 *    loses the alloc when the window ends and frees the claim only after the fence hold; the
 *    replacement runs on the other node. Never two writers (intervals from the volume's own log).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { eventually } from "../../helpers/agent_process.js";
import { cleanUp } from "../restart/restart_fixtures.js";
import { writerOverlaps } from "./checker.js";
import { JepsenCluster } from "./cluster.js";
import { keepLogs, say } from "./schedule.js";
import { APP, readWrites, startWorkload, workloadRuns, writeLogPath, type AllocStub } from "./workload.js";

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-disconnect-")));
const TTL_MS = 3000;
const LOST_AFTER_MS = 8000;
const cluster = new JepsenCluster({ dir, heartbeatTtlMs: TTL_MS, nodeNames: ["A", "B"] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

after(async () => {
  await cluster.stopHard().catch(() => undefined);
  keepLogs(cluster, "disconnect");
  await cleanUp([dir], 0);
});

interface AllocView extends AllocStub {
  AllocStates?: { Field: string; Value: string }[];
  DesiredDescription: string;
}

const nodeStatus = async (name: string) =>
  (await cluster.get<{ Name: string; Status: string }[]>("/v1/nodes"))?.find((n) => n.Name === name)?.Status;
const allocs = async () => (await cluster.get<AllocView[]>(`/v1/job/${APP}/allocations`)) ?? [];

test(
  "disconnect { lost_after }: a writer cut off within the window keeps its volume; past it, it moves, never two writers",
  { timeout: 240_000 },
  async () => {
    try {
      await cluster.start();
      await cluster.nodesReady();
      const ext = await startWorkload(
        cluster,
        `    disconnect {\n      lost_after = "${LOST_AFTER_MS / 1000}s"\n    }`,
      );
      const logFile = writeLogPath(cluster, ext);
      const first = await workloadRuns(cluster, logFile, 0, 90_000);
      const proxies = cluster.node(first.NodeName).proxies;

      // 1. Within the window.
      const cutAt = Date.now();
      proxies.partition();
      try {
        await eventually(
          `node ${first.NodeName} disconnected and its alloc unknown`,
          async () =>
            (await nodeStatus(first.NodeName)) === "disconnected" &&
            (await allocs()).find((a) => a.ID === first.ID)?.ClientStatus === "unknown"
              ? true
              : undefined,
          TTL_MS * 3,
          100,
        );
        await sleep(Math.max(0, cutAt + TTL_MS + 3000 - Date.now()));
      } finally {
        proxies.heal();
      }
      const healedAt = Date.now();
      say(
        `disconnect: node ${first.NodeName} cut off for ${healedAt - cutAt} ms (TTL ${TTL_MS}, lost_after ${LOST_AFTER_MS})`,
      );
      const back = await eventually(
        "the alloc running again on its node, reported by the node",
        async () => {
          const a = (await allocs()).find((x) => x.ID === first.ID);
          const ready = (await nodeStatus(first.NodeName)) === "ready";
          return ready && a?.ClientStatus === "running" ? a : undefined;
        },
        30_000,
        200,
      );
      const full = await cluster.get<AllocView>(`/v1/allocation/${back.ID}`);
      assert.deepEqual(
        full?.AllocStates?.filter((s) => s.Field === "ClientStatus").map((s) => s.Value),
        ["unknown", "running"],
      );
      const writes = readWrites(logFile).writes;
      assert.deepEqual([...new Set(writes.map((w) => w.alloc))], [first.ID], "only the original ever wrote");
      const during = writes.filter(
        (w) => w.ns > BigInt(cutAt + 500) * 1_000_000n && w.ns < BigInt(healedAt) * 1_000_000n,
      );
      assert.ok(during.length > 10, `the writer kept writing while cut off (${during.length} writes)`);
      const live = (await allocs()).filter(
        (a) => a.DesiredStatus === "run" && !["complete", "failed", "lost"].includes(a.ClientStatus),
      );
      assert.deepEqual(
        live.map((a) => a.ID),
        [first.ID],
        "one alloc of the job runs on",
      );

      // 2. Past the window.
      const cut2 = Date.now();
      proxies.partition();
      let moved: AllocStub;
      try {
        moved = await eventually(
          "a replacement to run on the other node and write",
          async () => {
            const a = (await allocs()).find((x) => x.ID !== first.ID && x.ClientStatus === "running");
            return a && readWrites(logFile).writes.some((w) => w.alloc === a.ID) ? a : undefined;
          },
          90_000,
          250,
        );
      } finally {
        proxies.heal();
      }
      say(`disconnect: past lost_after, the writer moved to ${moved.NodeName} after ${Date.now() - cut2} ms`);
      assert.notEqual(moved.ID, first.ID);
      assert.notEqual(moved.NodeName, first.NodeName);
      const lost = (await allocs()).find((a) => a.ID === first.ID);
      assert.equal(lost?.ClientStatus, "lost");
      const all = readWrites(logFile).writes;
      assert.deepEqual(writerOverlaps(all), [], "never two writers");
      const lastOld = all.filter((w) => w.alloc === first.ID).at(-1)!.ns;
      const firstNew = all.find((w) => w.alloc === moved.ID)!.ns;
      say(
        `disconnect: the old writer's last write to the new one's first: ${(firstNew - lastOld) / 1_000_000n} ms`,
      );
      assert.ok(
        Number((lastOld - BigInt(cut2) * 1_000_000n) / 1_000_000n) >= LOST_AFTER_MS,
        "the node kept the writer running into the window (without one it stops after one TTL)",
      );
    } catch (err) {
      process.stderr.write(cluster.logTails(40) + "\n");
      throw err;
    }
  },
);
