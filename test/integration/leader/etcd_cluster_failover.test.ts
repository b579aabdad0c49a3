/**
 * Issue 14's second acceptance, with real processes: three `berth agent -server -etcd-endpoints=…`
 * servers on one real etcd, one node agent N given all three (the leader first, so one SIGKILL takes
 * both N's server and the leader), csi-hostpath as a monolith plugin with --attach-required under
 * raw_exec on N (so every claim needs ControllerPublishVolume, run over N's own connection), and a
 * task that appends a timestamp to its CSI volume every 200 ms.
 *
 * SIGKILL the server holding N's connection. Then:
 * - N connects to another server within a bound, and that server's entry replaces the dead one in
 *   the node directory in etcd (`ha/node-conns/<node>`), and stays there after the dead server's
 *   lease has expired; N stays ready past several heartbeat TTLs;
 * - the task is the same alloc, still running; its publish target and the volume's staging are the
 *   very same mounts (same mount IDs in /proc/self/mountinfo), and its writes keep landing in the
 *   volume's backing directory after the kill;
 * - a controller call for N still works: a second volume is created through the survivor that does
 *   NOT hold N's connection (CreateVolume is forwarded to N's new server), and a second task on N
 *   claims it: hostpath's call log shows ControllerPublishVolume for N after the kill, then
 *   NodeStage and NodePublish, and the task's writes land in that volume;
 * - stopping both jobs releases every claim (ControllerUnpublishVolume for N on both volumes), and
 *   afterwards nothing is mounted and nothing is left running under the test dir.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { Etcd3 } from "etcd3";
import { readCallLog } from "../../../src/csi/hostpath/call_log.js";
import { mountAt, mountsUnder, type MountEntry } from "../../../src/internal/mountinfo.js";
import { haKeys, parseMember } from "../../../src/server/leader/keys.js";
import { hostpathJobOf, hostpathPluginGroup } from "../../builders/hostpath_plugin_job.js";
import {
  crashAgent,
  eventually,
  getJson,
  killProcessGroupsUnder,
  killProcessesUnder,
  logTail,
  runCli,
  type AgentProcess,
} from "../../helpers/agent_process.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { claimCount, line, userJob, volumeHcl, type ClaimsView } from "../lifecycle/hostpath_cluster.js";
import { agreedLeader, nodeAgent, nodesReady, startServers, type ServerProcess } from "./ha_processes.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";

/** The servers' heartbeat TTL (-heartbeat-ttl): N must stay ready for several of them. */
const HEARTBEAT_TTL_MS = 2_000;
/** How soon after the kill N must hold a connection to another server. */
const MOVE_BOUND_MS = 10_000;
/** The prefix the servers use in etcd (the agent's default, `server { etcd { prefix } }`). */
const KEYS = haKeys("/berth");
/** How the task and the volumes are used: one staging and one publish per alloc, under this key. */
const USAGE = "rw-file-system-single-node-writer";

interface VolumeView extends ClaimsView {
  ExternalID: string;
}
interface AllocView {
  ID: string;
  NodeID: string;
  ClientStatus: string;
}

/** A job whose task appends the time (unix ms) to /data/ticks every 200 ms, on volume `source`. */
const tickerJob = (id: string, source: string) =>
  userJob(id, { source, script: "while :; do date +%s%3N >> /data/ticks; sleep 0.2; done" });

/** The timestamps the ticker wrote to the volume with external ID `ext` (its backing directory). */
function ticks(storage: string, ext: string): number[] {
  try {
    return fs
      .readFileSync(path.join(storage, "volumes", ext, "ticks"), "utf8")
      .split("\n")
      .filter((l) => /^\d+$/.test(l))
      .map(Number);
  } catch {
    return [];
  }
}

/** The server N's agent says it connected to last (its log), as http://HOST:PORT. */
function connectedTo(log: string): string | undefined {
  const lines = fs
    .readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l.includes("connected to server"));
  return /server=(\S+)/.exec(lines.at(-1) ?? "")?.[1];
}

async function unmountAll(dir: string): Promise<void> {
  for (const m of await mountsUnder(dir)) {
    try {
      execFileSync("umount", ["-l", m], { stdio: "ignore" });
    } catch {
      /* already gone */
    }
  }
}

test(
  "kill -9 the server a node agent is connected to: the agent moves, its task keeps its mounts and writes, and a controller publish for that node still works",
  { skip, timeout: 150_000 },
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-node-failover-"));
    const storage = path.join(dir, "storage");
    const callLog = path.join(dir, "calls.jsonl");
    const nodeLog = path.join(dir, "n.log");
    let etcd: EtcdServer | undefined;
    let kv: Etcd3 | undefined;
    let servers: ServerProcess[] = [];
    let agent: AgentProcess | undefined;
    let passed = false;
    try {
      etcd = await startEtcd();
      kv = new Etcd3({ hosts: etcd.endpoint });
      servers = await startServers(dir, etcd.endpoint, 3, [`-heartbeat-ttl=${HEARTBEAT_TTL_MS / 1000}s`]);
      const victim = await agreedLeader(servers);
      const others = servers.filter((s) => s !== victim);
      // N dials the leader first: the kill below cuts N's connection and ends the leader's term.
      agent = nodeAgent(dir, "N", [victim, ...others]);
      // The CLI talks to a server that never holds N's connection before the kill.
      let api = others[1]!.base;
      await nodesReady(api, ["N"]);
      const nodes = await getJson<{ ID: string; Name: string }[]>(api, "/v1/nodes");
      const nodeId = nodes.find((n) => n.Name === "N")!.ID;

      /** The HTTP address of the server etcd's node directory says holds N's connection. */
      const holder = async (): Promise<string | undefined> => {
        const serverId = await kv!.get(KEYS.nodeConns + nodeId).string();
        if (serverId === null) return undefined;
        return parseMember((await kv!.get(KEYS.servers + serverId).string()) ?? undefined)?.HTTPAddr;
      };
      const cli = async (args: string[], base = api) => {
        const r = await runCli(args, { BERTH_ADDR: base });
        assert.equal(r.code, 0, `berth ${args.join(" ")}: ${r.stderr}\n${r.stdout}`);
        return r.stdout;
      };
      const writeFile = (name: string, text: string) => {
        fs.writeFileSync(path.join(dir, name), text);
        return path.join(dir, name);
      };
      const volume = (id: string, base = api) =>
        getJson<VolumeView>(base, `/v1/volume/csi/${id}?claims=true`);
      const runningAlloc = (job: string) =>
        eventually(`${job}'s task to run`, async () => {
          const allocs = await getJson<AllocView[]>(api, `/v1/job/${job}/allocations`);
          return allocs.length === 1 && allocs[0]!.ClientStatus === "running" ? allocs[0] : undefined;
        });
      const calls = (ext: string) => readCallLog(callLog).filter((c) => c.volume_id === ext);

      assert.equal(
        await eventually("N's connection in the node directory", holder),
        victim.base,
        "N is connected to the server it dials first",
      );
      assert.equal(connectedTo(nodeLog), victim.base, "N's log names the same server");

      const plugin = hostpathPluginGroup("plugin", {
        driver: "raw_exec",
        type: "monolith",
        node: "N",
        args: [
          "--mode=monolith",
          "--attach-required",
          `--state-dir=${storage}`,
          `--call-log=${callLog}`,
          "--node-id=${node.unique.name}",
        ],
      });
      await cli(["job", "run", writeFile("plugin.hcl", hostpathJobOf("hostpath", [plugin]))]);
      await eventually("the plugin's controller and node to be healthy", async () => {
        const p = await getJson<{ ControllersHealthy: number; NodesHealthy: number }>(
          api,
          "/v1/plugin/csi/hostpath",
        );
        return p.ControllersHealthy === 1 && p.NodesHealthy === 1 ? true : undefined;
      });
      await cli(["volume", "create", writeFile("vol1.hcl", volumeHcl("vol1"))]);
      const ext1 = (await volume("vol1")).ExternalID;
      await cli(["job", "run", writeFile("ticker.hcl", tickerJob("ticker", "vol1"))]);
      const alloc = await runningAlloc("ticker");
      assert.equal(alloc.NodeID, nodeId);

      const pluginDir = path.join(dir, "n", "client", "csi", "monolith", "hostpath");
      const target = path.join(pluginDir, "per-alloc", alloc.ID, "vol1", USAGE);
      const staging = path.join(pluginDir, "staging", "default", "vol1", USAGE);
      const mounted = async (p: string): Promise<MountEntry> => {
        const m = await mountAt(p);
        assert.ok(m, `${p} is a mount point`);
        return m;
      };
      const [targetBefore, stagingBefore] = [await mounted(target), await mounted(staging)];
      await eventually("the task's writes to reach the volume", async () =>
        ticks(storage, ext1).length > 0 ? true : undefined,
      );

      await crashAgent(victim.proc);
      const killedAt = Date.now();
      const survivors = others;
      const moved = await eventually(
        "N to hold a connection to another server",
        async () => {
          const h = await holder();
          return h !== undefined && h !== victim.base && connectedTo(nodeLog) === h ? h : undefined;
        },
        MOVE_BOUND_MS,
        50,
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\nN's log:\n${logTail(nodeLog, 40)}`);
      });
      const movedAfterMs = Date.now() - killedAt;
      assert.ok(
        survivors.some((s) => s.base === moved),
        `N moved to a surviving server (${moved})`,
      );
      t.diagnostic(
        `kill → N's connection recorded on ${survivors.find((s) => s.base === moved)!.name}: ${movedAfterMs} ms`,
      );
      const newLeader = await agreedLeader(survivors);
      t.diagnostic(`kill → ${newLeader.name} leads: ${Date.now() - killedAt} ms`);
      // From here on the CLI talks to the survivor NOT holding N's connection, so every controller
      // call it causes for N (CreateVolume) is forwarded to N's new server.
      api = survivors.find((s) => s.base !== moved)!.base;

      // Three heartbeat TTLs (and the dead server's lease, 3 s) later: N still ready, still held
      // by the server it moved to, the one alloc still running on its very same mounts.
      await new Promise((r) => setTimeout(r, 3 * HEARTBEAT_TTL_MS));
      assert.equal(await holder(), moved, "the dead server's expiring lease took nothing of N's entry");
      for (const s of survivors) {
        const view = await getJson<{ Name: string; Status: string }[]>(s.base, "/v1/nodes");
        assert.equal(view.find((n) => n.Name === "N")?.Status, "ready", `${s.name} sees N ready`);
        const allocs = await getJson<AllocView[]>(s.base, "/v1/job/ticker/allocations");
        assert.deepEqual(
          allocs.map((a) => [a.ID, a.ClientStatus]),
          [[alloc.ID, "running"]],
          `${s.name}: the same alloc, still running`,
        );
      }
      const [targetAfter, stagingAfter] = [await mounted(target), await mounted(staging)];
      assert.equal(targetAfter.id, targetBefore.id, "the task's publish target is the same mount");
      assert.equal(stagingAfter.id, stagingBefore.id, "the volume's staging is the same mount");
      const seen = ticks(storage, ext1).length;
      await eventually("the task's writes to keep landing in the volume", async () => {
        const now = ticks(storage, ext1);
        return now.length >= seen + 5 && now.at(-1)! > killedAt + 3 * HEARTBEAT_TTL_MS ? true : undefined;
      });

      // A controller publish for N, after the kill: a second volume, created through the other
      // survivor (CreateVolume forwarded to N's server), claimed by a second task on N.
      await cli(["volume", "create", writeFile("vol2.hcl", volumeHcl("vol2"))]);
      const ext2 = (await volume("vol2")).ExternalID;
      await cli(["job", "run", writeFile("ticker2.hcl", tickerJob("ticker2", "vol2"))]);
      const alloc2 = await runningAlloc("ticker2");
      assert.equal(alloc2.NodeID, nodeId);
      await eventually("the second task's writes to land in its volume", async () =>
        ticks(storage, ext2).length > 0 ? true : undefined,
      );
      const published = calls(ext2).filter(
        (c) => c.method === "ControllerPublishVolume" && c.node_id === "N" && c.code === "OK",
      );
      assert.ok(
        published.length > 0 && published.every((c) => c.time > killedAt),
        `ControllerPublishVolume for N after the kill: ${JSON.stringify(calls(ext2))}`,
      );
      assert.deepEqual(
        calls(ext2)
          .filter((c) => c.code === "OK")
          .map(line),
        ["ControllerPublishVolume:N:OK", "NodeStageVolume:N:OK", "NodePublishVolume:N:OK"],
        "the second volume was published to N, then staged and published there",
      );
      // CreateVolume names no volume ID (the plugin picks it): the second one is vol2's.
      const created = readCallLog(callLog).filter((c) => c.method === "CreateVolume" && c.code === "OK");
      assert.equal(created.length, 2, "one CreateVolume per volume");
      assert.ok(created[1]!.time > killedAt, "vol2's CreateVolume reached N after the kill");

      await cli(["job", "stop", "ticker"]);
      await cli(["job", "stop", "ticker2"]);
      for (const s of survivors) {
        await eventually(`${s.name} to see every claim released`, async () => {
          const counts = [claimCount(await volume("vol1", s.base)), claimCount(await volume("vol2", s.base))];
          return counts.every((c) => c === 0) ? true : undefined;
        });
      }
      const detach = "ControllerUnpublishVolume:N:OK";
      const detaches = (ext: string) => calls(ext).filter((c) => c.code === "OK" && line(c) === detach);
      for (const ext of [ext1, ext2]) {
        const seq = calls(ext)
          .filter((c) => c.code === "OK")
          .map(line);
        const first = seq.indexOf(detach);
        assert.deepEqual(
          [seq.slice(0, Math.max(first, 0)), seq.slice(first).every((c) => c === detach)],
          [
            [
              "ControllerPublishVolume:N:OK",
              "NodeStageVolume:N:OK",
              "NodePublishVolume:N:OK",
              "NodeUnpublishVolume:N:OK",
              "NodeUnstageVolume:N:OK",
            ],
            true,
          ],
          `${ext}: published to N, used, unmounted there and then detached from N (${JSON.stringify(seq)})`,
        );
      }
      // One release walk per claim, whichever servers N's Unpublish and the leader's volumewatcher
      // run on: the per-volume lock is cluster-wide (leader/volume_locks.ts). With a lock per
      // server, both walked the claim when N's server was not the leader: two detaches.
      for (const ext of [ext1, ext2]) {
        assert.equal(
          detaches(ext).length,
          1,
          `${ext} detached from N once: ${JSON.stringify(detaches(ext))}`,
        );
      }
      assert.deepEqual(
        (await mountsUnder(pluginDir)).filter((m) => /\/(per-alloc|staging)\//.test(m)),
        [],
        "no staging or publish mount is left",
      );
      await cli(["job", "stop", "-purge", "hostpath"]);
      assert.equal(await agent.stop(60_000), 0, "N's agent exit code");
      for (const s of survivors) assert.equal(await s.proc.stop(30_000), 0, `${s.name}'s exit code`);
      assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
      assert.deepEqual(killProcessesUnder(dir), [], "no process outlived the agents");
      passed = true;
    } finally {
      agent?.kill();
      for (const s of servers) s.proc.kill();
      const leftovers = killProcessGroupsUnder(dir);
      if (!passed || leftovers.length > 0) {
        for (const name of [...servers.map((s) => s.name), "n"]) {
          process.stderr.write(`--- ${name}.log (tail) ---\n${logTail(path.join(dir, `${name}.log`), 40)}\n`);
        }
      }
      await unmountAll(dir);
      fs.rmSync(dir, { recursive: true, force: true });
      kv?.close();
      await etcd?.stop();
    }
  },
);
