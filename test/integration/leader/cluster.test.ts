/**
 * Several in-process servers sharing one real etcd member (state and coordination): exactly one
 * runs the leader's loops; every one answers the
 * status routes, the members list and X-Nomad-KnownLeader as they really are; `berth server
 * members` and `berth operator raft list-peers` show it; when the leader stops another takes over;
 * node liveness runs on the leader alone yet covers nodes connected to any server, across a
 * leader change; with etcd gone no server claims to know a leader.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { serverMembers } from "../../../src/cli/commands/server_members.js";
import { operatorRaft } from "../../../src/cli/commands/operator_raft.js";
import { makeNode } from "../../builders/node.js";
import { captureIO } from "../../fakes/command_io.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { eventually } from "../../helpers/agent_process.js";
import { connectAgent } from "../server/fake_agent.js";
import { cluster, get, hostPort, leaders, oneLeader } from "./servers.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";

let etcd: EtcdServer | undefined;
before(async () => {
  if (!skip) etcd = await startEtcd();
});
after(async () => {
  await etcd?.stop();
});

test(
  "three servers: one leads; status routes, members, headers and the CLI say which; another takes over",
  { skip },
  async () => {
    const servers = await cluster(3, etcd!.endpoint);
    const live = new Set(servers);
    try {
      const leader = await oneLeader(servers);
      const addrs = servers.map(hostPort).sort();
      for (const s of servers) {
        await eventually(
          "every server to know the leader",
          async () =>
            (await get(s.httpAddress, "/v1/status/leader")).json === hostPort(leader) ? true : undefined,
          10_000,
          20,
        );
        assert.deepEqual(((await get(s.httpAddress, "/v1/status/peers")).json as string[]).sort(), addrs);
        const members = (await get(s.httpAddress, "/v1/agent/members")).json as {
          ServerName: string;
          ServerRegion: string;
          Members: {
            Name: string;
            Addr: string;
            Port: number;
            Status: string;
            Tags: Record<string, string>;
          }[];
        };
        assert.equal(members.ServerRegion, "global");
        assert.equal(members.Members.length, 3);
        for (const m of members.Members) {
          assert.equal(m.Status, "alive");
          assert.equal(
            `${m.Addr}:${m.Port}`,
            addrs.find((a) => a.endsWith(`:${m.Port}`)),
          );
          assert.equal("leader_since" in m.Tags, `${m.Addr}:${m.Port}` === hostPort(leader), m.Name);
        }
        const nodes = await get(s.httpAddress, "/v1/nodes?index=1&wait=10ms");
        assert.equal(nodes.headers.get("x-nomad-knownleader"), "true");
      }
      assert.deepEqual(
        ((await get(servers[0]!.httpAddress, "/v1/agent/members")).json as { ServerName: string }).ServerName,
        "s0.global",
      );

      const io = captureIO(servers[0]!.httpAddress);
      assert.equal(await serverMembers.run(serverMembers.parse([]), io), 0);
      assert.equal(
        io.out[0],
        "Name       Address    Port   Status  Leader  Raft Version  Build  Datacenter  Region",
      );
      const leaderName = `s${servers.indexOf(leader)}.global`;
      for (const line of io.out.slice(1)) {
        assert.match(
          line,
          new RegExp(
            `^s\\d\\.global +127\\.0\\.0\\.1 +\\d+ +alive +${String(line.startsWith(leaderName))} +- +berth +dc1 +global$`,
          ),
        );
      }
      const peers = captureIO(servers[1]!.httpAddress);
      assert.equal(await operatorRaft.run(operatorRaft.parse(["list-peers"]), peers), 0);
      const leaderRow = peers.out.find((l) => l.includes(" leader "));
      assert.ok(leaderRow?.startsWith(leaderName), peers.out.join("\n"));
      assert.match(leaderRow ?? "", /\d{4}-\d\d-\d\dT/);
      assert.equal(peers.out.filter((l) => l.includes(" follower ")).length, 2);

      await leader.stop();
      live.delete(leader);
      const next = await oneLeader([...live]);
      assert.notEqual(next, leader);
      for (const s of live) {
        await eventually(
          "the new leader to be known",
          async () =>
            (await get(s.httpAddress, "/v1/status/leader")).json === hostPort(next) ? true : undefined,
          10_000,
          20,
        );
        assert.equal(((await get(s.httpAddress, "/v1/status/peers")).json as string[]).length, 2);
      }
    } finally {
      for (const s of live) await s.stop();
    }
  },
);

test(
  "node liveness runs on the leader for nodes on any server, across a leader change",
  { skip },
  async () => {
    const ttl = 1_000;
    const servers = await cluster(2, etcd!.endpoint, ttl);
    const live = new Set(servers);
    let talking = true;
    try {
      const leader = await oneLeader(servers);
      const follower = servers.find((s) => s !== leader)!;
      // Both nodes reach the follower: "talker" keeps heartbeating there, "quiet" goes silent.
      const peer = await connectAgent(follower.httpAddress);
      await peer.call("Node.Register", { Node: makeNode("talker") });
      const beats = (async () => {
        while (talking) {
          await peer.call("Node.Heartbeat", { NodeID: "talker" }).catch(() => undefined);
          await new Promise((r) => setTimeout(r, ttl / 4));
        }
      })();
      const quiet = await connectAgent(follower.httpAddress);
      await quiet.call("Node.Register", { Node: makeNode("quiet") });
      quiet.close();
      const status = async (s: typeof leader, id: string) =>
        ((await get(s.httpAddress, `/v1/node/${id}`)).json as { Status: string }).Status;
      // The leader hears of "quiet" through the store, of "talker" through the node directory.
      await eventually(
        "the leader to mark the silent node down",
        async () => ((await status(leader, "quiet")) === "down" ? true : undefined),
        15_000,
        20,
      );
      assert.equal(await status(leader, "talker"), "ready", "a node heartbeating to a follower is alive");

      await leader.stop();
      live.delete(leader);
      await eventually(
        "the follower to lead",
        () => Promise.resolve(follower.leadership.state === "leader" || undefined),
        15_000,
        20,
      );
      await new Promise((r) => setTimeout(r, 3 * ttl));
      assert.equal(await status(follower, "talker"), "ready", "the new leader keeps the live node up");
      talking = false;
      await beats;
      peer.close();
    } finally {
      talking = false;
      for (const s of live) await s.stop();
    }
  },
);

test(
  "with etcd unavailable the leader steps down and no server claims a known leader",
  { skip },
  async () => {
    const own = await startEtcd();
    const servers = await cluster(2, own.endpoint);
    try {
      await oneLeader(servers);
      own.pause();
      await eventually(
        "no leader",
        () => Promise.resolve(leaders(servers).length === 0 || undefined),
        15_000,
        20,
      );
      for (const s of servers) {
        await eventually(
          "KnownLeader: false",
          async () => {
            const res = await get(s.httpAddress, "/v1/nodes?index=1&wait=10ms");
            return res.headers.get("x-nomad-knownleader") === "false" ? res : undefined;
          },
          10_000,
          50,
        );
        assert.equal((await get(s.httpAddress, "/v1/status/leader")).json, "");
      }
      own.resume();
      await oneLeader(servers);
    } finally {
      own.resume();
      for (const s of servers) await s.stop();
      await own.stop();
    }
  },
);
