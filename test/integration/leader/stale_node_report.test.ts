/**
 * A node report that waited in a paused server's socket must not roll the node back (issue 28's
 * long Jepsen run: after a 45 s SIGSTOP of its old server, a node's plugin vanished from the
 * plugin record for good while it ran healthy). Real processes: two `berth agent -server
 * -etcd-endpoints=…` servers on one real etcd; fake node agents speak the agent RPC over real
 * WebSockets, as the real agent does when it fails over: s0 is SIGSTOPped, a report (a
 * fingerprint without the plugin, or a registration without it) is sent to it and stays in its
 * socket buffer, the agent drops that connection and reports the newer state (the plugin healthy)
 * through s1; then s0 is SIGCONTed and serves the buffered report. The node must keep the newer
 * report, and s0 must say it refused the older one. s0 is always SIGCONTed and every process
 * stopped, even when the test fails.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { randomUUID } from "node:crypto";
import { eventually, getJson, killProcessGroupsUnder, logTail } from "../../helpers/agent_process.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, type AgentPeer } from "../server/fake_agent.js";
import { agreedLeader, startServers, type ServerProcess } from "./ha_processes.js";
import type { CSIInfo } from "../../../src/structs/plugin.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";

const healthy = { p1: nodePluginInfo("p1") };
const DRIVERS = makeNode("x").Drivers;

function register(peer: AgentPeer, id: string, plugins: Record<string, CSIInfo>, order: [number, number]) {
  return peer.call(
    "Node.Register",
    { Node: makeNode(id, { Name: id, CSINodePlugins: plugins }), ReportOrder: order },
    { timeoutMs: 10_000 },
  );
}

/** The call, sent now; its answer (or its failure) is not awaited here. */
function sendOnly(call: Promise<unknown>): void {
  call.catch(() => undefined);
}

test(
  "a report buffered in a paused server does not overwrite the node's newer report",
  { skip, timeout: 180_000 },
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-stale-report-"));
    let etcd: EtcdServer | undefined;
    let servers: ServerProcess[] = [];
    let paused: ServerProcess | undefined;
    const peers: AgentPeer[] = [];
    try {
      etcd = await startEtcd();
      servers = await startServers(dir, etcd.endpoint, 2);
      await agreedLeader(servers, 60_000);
      const [s0, s1] = servers as [ServerProcess, ServerProcess];
      // Node F: its stale report is a fingerprint; node R: a registration.
      const f = randomUUID();
      const r = randomUUID();
      const f0 = await connectAgent(s0.base);
      const r0 = await connectAgent(s0.base);
      peers.push(f0, r0);
      await register(f0, f, healthy, [1, 1]);
      await register(r0, r, healthy, [1, 1]);

      process.kill(s0.proc.pid!, "SIGSTOP");
      paused = s0;
      // Sent to the paused server: the kernel takes the frames into its socket buffer.
      sendOnly(
        f0.call(
          "Node.UpdateFingerprint",
          { NodeID: f, Drivers: DRIVERS, CSIControllerPlugins: {}, CSINodePlugins: {}, ReportOrder: [1, 2] },
          { timeoutMs: 60_000 },
        ),
      );
      sendOnly(register(r0, r, {}, [1, 2]));
      await new Promise((res) => setTimeout(res, 300));
      // The agent gives up on s0 and reports the newer state through s1.
      f0.terminate();
      r0.terminate();
      const f1 = await connectAgent(s1.base);
      const r1 = await connectAgent(s1.base);
      peers.push(f1, r1);
      await register(f1, f, healthy, [1, 3]);
      await register(r1, r, healthy, [1, 3]);

      process.kill(s0.proc.pid!, "SIGCONT");
      paused = undefined;
      // s0 serves the buffered reports first; a later write through s0 commits after them.
      const sync = await connectAgent(s0.base);
      peers.push(sync);
      await eventually(
        "a registration through the resumed s0",
        () =>
          register(sync, randomUUID(), {}, [1, 1]).then(
            () => true,
            () => undefined,
          ),
        30_000,
        200,
      );
      const rolledBack: string[] = [];
      for (const [id, what] of [
        [f, "fingerprint"],
        [r, "registration"],
      ] as const) {
        const node = await getJson<{ CSINodePlugins: Record<string, CSIInfo> }>(s0.base, `/v1/node/${id}`);
        if (Object.keys(node.CSINodePlugins).join() !== "p1")
          rolledBack.push(`by the ${what} buffered in s0`);
      }
      assert.deepEqual(rolledBack, [], "no node rolled back to a report older than the one applied");
      const refused = fs
        .readFileSync(s0.log, "utf8")
        .match(/refused a node report older than the one applied/g);
      assert.equal(refused?.length, 2, "s0 logs each stale report it refused");
    } catch (err) {
      for (const s of servers) console.log(`--- ${s.name}\n${logTail(s.log, 40)}`);
      throw err;
    } finally {
      if (paused?.proc.pid !== undefined && paused.proc.running) process.kill(paused.proc.pid, "SIGCONT");
      for (const p of peers) p.terminate();
      await Promise.all(servers.map((s) => s.proc.stop(20_000)));
      killProcessGroupsUnder(dir);
      await etcd?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
