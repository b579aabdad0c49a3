/**
 * Issue 14's claim race across real server processes: two `berth agent -server
 * -etcd-endpoints=…` servers on one real etcd; node n1's agent connection is held by one server,
 * n2's by the other (fake agents over the real agent RPC). 100 times, both nodes send
 * CSIVolume.Claim for the same single-node-writer volume at the same instant, each through its
 * own server: exactly one claim wins each time (the other is refused as in use), both servers then
 * show that one holder, and the winner's release frees it for the next round.
 *
 * The scheduler never places two writers of such a volume (csi_feasibility.ts), so the racing
 * allocs are written into the cluster's etcd state directly, as a third store would (the claim
 * endpoint alone must then hold the line). The volume has no controller: a claim is one store
 * transaction, the part that must be linearizable across servers.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { EtcdStateStore } from "../../../src/server/state/etcd/etcd_store.js";
import { DEFAULT_ETCD_PREFIX } from "../../../src/server/state/open_store.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { alloc, volumeJob } from "../../conformance/builders.js";
import { eventually, getJson, killProcessGroupsUnder, logTail } from "../../helpers/agent_process.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { tempDir } from "../../helpers/temp_dir.js";
import { connectAgent, put, type AgentPeer } from "../server/fake_agent.js";
import { agreedLeader, startServers, type ServerProcess } from "./ha_processes.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";
const ROUNDS = 100;

interface VolumeView {
  WriteAllocs: Record<string, unknown> | null;
  ReadAllocs: Record<string, unknown> | null;
  PastClaims: Record<string, unknown>;
}

const writers = (v: VolumeView) => Object.keys(v.WriteAllocs ?? {});

test(
  `${ROUNDS} rounds: two servers get conflicting single-node-writer claims at one instant; exactly one wins`,
  { skip, timeout: 120_000 },
  async () => {
    const dir = tempDir("berth-ha-claims-");
    let etcd: EtcdServer | undefined;
    let servers: ServerProcess[] = [];
    let store: EtcdStateStore | undefined;
    const peers: AgentPeer[] = [];
    let passed = false;
    try {
      etcd = await startEtcd();
      servers = await startServers(dir, etcd.endpoint, 2, ["-heartbeat-ttl=60s"]);
      await agreedLeader(servers);
      const nodes = ["n1", "n2"];
      for (const [i, id] of nodes.entries()) {
        const peer = await connectAgent(servers[i]!.base);
        peers.push(peer);
        await peer.call("Node.Register", {
          Node: makeNode(id, { CSINodePlugins: { p1: nodePluginInfo("p1", {}, { ID: `ext-${id}` }) } }),
        });
      }
      await eventually("both servers to see the plugin's two nodes", async () => {
        const seen = await Promise.all(
          servers.map((s) =>
            getJson<{ NodesHealthy: number }>(s.base, "/v1/plugin/csi/p1").catch(() => undefined),
          ),
        );
        return seen.every((p) => p?.NodesHealthy === 2) ? true : undefined;
      });
      await put(servers[0]!.base, "/v1/volume/csi/vol1", {
        Volumes: [
          {
            ID: "vol1",
            Name: "vol1",
            PluginID: "p1",
            ExternalID: "ext-vol1",
            RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
          },
        ],
      });

      // Two pending allocs per round, one on each node, both asking for vol1 to write.
      store = await EtcdStateStore.open({ endpoints: [etcd.endpoint], prefix: DEFAULT_ETCD_PREFIX });
      const job = volumeJob("race", { source: "vol1", count: 2 * ROUNDS });
      const rounds = Array.from({ length: ROUNDS }, () => [randomUUID(), randomUUID()] as const);
      await store.txn((tx) => {
        tx.putJob(job);
        rounds.forEach((ids, r) => ids.forEach((id, i) => tx.putAlloc(alloc(id, job, nodes[i]!, 2 * r + i))));
      });
      const lastId = rounds.at(-1)![1];
      await eventually("both servers to read the allocs", async () => {
        const seen = await Promise.all(
          servers.map((s) => getJson(s.base, `/v1/allocation/${lastId}`).catch(() => undefined)),
        );
        return seen.every((a) => a !== undefined) ? true : undefined;
      });

      const claim = (i: number, allocId: string) =>
        peers[i]!.call("CSIVolume.Claim", {
          Namespace: "default",
          VolumeID: "vol1",
          AllocationID: allocId,
          NodeID: nodes[i]!,
          Mode: "write",
          AccessMode: "single-node-writer",
          AttachmentMode: "file-system",
        });
      const wins = [0, 0];
      for (const [r, ids] of rounds.entries()) {
        const results = await Promise.allSettled([claim(0, ids[0]), claim(1, ids[1])]);
        const won = results.flatMap((res, i) => (res.status === "fulfilled" ? [i] : []));
        assert.equal(won.length, 1, `round ${r}: exactly one claim wins (${JSON.stringify(results)})`);
        const winner = won[0]!;
        wins[winner]!++;
        const lost = results[1 - winner] as PromiseRejectedResult;
        assert.equal(
          (lost.reason as { code?: string }).code,
          "ERR_CSI_IN_USE",
          `round ${r}: the loser is told the volume is in use: ${String(lost.reason)}`,
        );
        for (const s of servers) {
          await eventually(
            `round ${r}: ${s.name} to show the one writer`,
            async () => {
              const v = await getJson<VolumeView>(s.base, "/v1/volume/csi/vol1?claims=true");
              const w = writers(v);
              if (w.length > 1) throw new Error(`two writers on ${s.name}: ${JSON.stringify(w)}`);
              return w[0] === ids[winner] ? true : undefined;
            },
            10_000,
            10,
          );
        }
        await peers[winner]!.call("CSIVolume.Unpublish", {
          Namespace: "default",
          VolumeID: "vol1",
          AllocationID: ids[winner]!,
          NodeID: nodes[winner]!,
          State: "node-detached",
        });
      }
      for (const s of servers) {
        const v = await getJson<VolumeView>(s.base, "/v1/volume/csi/vol1?claims=true");
        assert.deepEqual(
          [writers(v), Object.keys(v.ReadAllocs ?? {}), v.PastClaims],
          [[], [], {}],
          `${s.name}: every claim released`,
        );
      }
      process.stderr.write(`claim race: n1 (via s0) won ${wins[0]} rounds, n2 (via s1) ${wins[1]}\n`);
      passed = true;
    } finally {
      for (const p of peers) p.close();
      store?.close();
      for (const s of servers) await s.proc.stop(30_000);
      killProcessGroupsUnder(dir);
      if (!passed) {
        for (const s of servers)
          process.stderr.write(`--- ${s.name}.log (tail) ---\n${logTail(s.log, 40)}\n`);
      }
      await etcd?.stop();
    }
    assert.ok(
      servers.every((s) => !s.proc.running),
      "no server left running",
    );
  },
);
