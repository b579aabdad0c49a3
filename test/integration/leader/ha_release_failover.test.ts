/**
 * Issue 14's first acceptance, with real processes: three `berth agent -server -etcd-endpoints=…`
 * servers on one real etcd, node agents A and B, csi-hostpath (--attach-required, one shared state
 * dir and call log) under raw_exec: its controller on A, node plugins on B (first, so the writer
 * lands there) and then on A.
 *
 * B's agent and everything it started are SIGKILLed. The leader marks B down, the writer's alloc
 * lost, and its volumewatcher releases B's claim: ControllerUnpublishVolume for B through A's
 * controller. The plugin detaches (the attachment file goes) and then holds its answer for a few
 * seconds (--faults answerAfterMs): the release is between ControllerUnpublish and freeing. That
 * is when the leader is SIGKILLed. Another server becomes leader, resumes the release from the
 * claim in etcd and frees it; the replacement runs on A with the same volume (its write lands
 * next to B's); the volume ends with exactly the replacement's claim and one attachment (A's).
 * After the job stops: no claim, nothing mounted, nothing running.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { readCallLog } from "../../../src/csi/hostpath/call_log.js";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
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
import {
  agreedLeader,
  leaderOf,
  nodeAgent,
  nodesReady,
  startServers,
  type ServerProcess,
} from "./ha_processes.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";

interface VolumeView extends ClaimsView {
  ExternalID: string;
}
interface AllocView {
  ID: string;
  NodeName: string;
  ClientStatus: string;
  DesiredStatus: string;
}

/** How long the plugin holds ControllerUnpublish's answer after detaching: the kill's window. */
const ANSWER_AFTER_MS = 4_000;

async function unmountAll(dir: string): Promise<void> {
  for (const m of (await mountsUnder(dir)).reverse()) {
    try {
      execFileSync("umount", ["-l", m], { stdio: "ignore" });
    } catch {
      /* already gone */
    }
  }
}

test(
  "kill -9 the leader between ControllerUnpublish and freeing: a new leader completes the release, the replacement runs with its volume",
  { skip, timeout: 150_000 },
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-ha-release-"));
    const storage = path.join(dir, "storage");
    const callLog = path.join(dir, "calls.jsonl");
    const faults = path.join(dir, "faults.json");
    let etcd: EtcdServer | undefined;
    let servers: ServerProcess[] = [];
    const clients = new Map<string, AgentProcess>();
    let passed = false;
    try {
      etcd = await startEtcd();
      servers = await startServers(dir, etcd.endpoint, 3, ["-heartbeat-ttl=5s"]);
      const firstLeader = await agreedLeader(servers);
      const followers = servers.filter((s) => s !== firstLeader);
      // A dials a follower first, so the leader's kill below does not also cut A's connection:
      // the release then goes through the new leader and A's controller, not a reconnect race.
      clients.set("A", nodeAgent(dir, "A", [followers[0]!, firstLeader, followers[1]!]));
      clients.set("B", nodeAgent(dir, "B", servers));
      let api = followers[0]!.base;
      await nodesReady(api, ["A", "B"]);
      const cli = async (args: string[]) => {
        const r = await runCli(args, { BERTH_ADDR: api });
        assert.equal(r.code, 0, `berth ${args.join(" ")}: ${r.stderr}\n${r.stdout}`);
        return r.stdout;
      };
      const writeFile = (name: string, text: string) => {
        fs.writeFileSync(path.join(dir, name), text);
        return path.join(dir, name);
      };
      const group = (name: string, node: string, type: "controller" | "node") =>
        hostpathPluginGroup(name, {
          driver: "raw_exec",
          type,
          node,
          args: [
            `--mode=${type}`,
            "--attach-required",
            `--state-dir=${storage}`,
            `--call-log=${callLog}`,
            ...(type === "controller" ? [`--faults=${faults}`] : ["--node-id=${node.unique.name}"]),
          ],
        });
      const pluginHealthy = (nodes: number) =>
        eventually(`the controller and ${nodes} node plugin(s) to be healthy`, async () => {
          const p = await getJson<{ ControllersHealthy: number; NodesHealthy: number }>(
            api,
            "/v1/plugin/csi/hostpath",
          ).catch(() => undefined);
          return p && p.ControllersHealthy === 1 && p.NodesHealthy >= nodes ? p : undefined;
        });
      const allocsOf = (job: string) => getJson<AllocView[]>(api, `/v1/job/${job}/allocations`);
      const volume = () => getJson<VolumeView>(api, "/v1/volume/csi/shared?claims=true");

      await cli([
        "job",
        "run",
        writeFile(
          "plugin.hcl",
          hostpathJobOf("hostpath", [group("controller", "A", "controller"), group("node-b", "B", "node")]),
        ),
      ]);
      await pluginHealthy(1);
      await cli(["volume", "create", writeFile("volume.hcl", volumeHcl("shared"))]);
      const ext = (await volume()).ExternalID;
      const writer = userJob("writer", {
        source: "shared",
        script: "echo started >> /data/starts.txt && exec sleep 600",
      });
      await cli(["job", "run", writeFile("writer.hcl", writer)]);
      const first = await eventually("the writer to run on B", async () => {
        const allocs = await allocsOf("writer");
        return allocs.length === 1 && allocs[0]!.ClientStatus === "running" ? allocs[0] : undefined;
      });
      assert.equal(first.NodeName, "B", "only B runs a node plugin yet");
      const starts = path.join(storage, "volumes", ext, "starts.txt");
      await eventually("B's write to reach the storage", async () =>
        fs.existsSync(starts) ? true : undefined,
      );
      await cli([
        "job",
        "run",
        writeFile("plugin-a.hcl", hostpathJobOf("hostpath-a", [group("node-a", "A", "node")])),
      ]);
      await pluginHealthy(2);

      const attachments = path.join(storage, "attachments", ext);
      const attachedTo = () =>
        fs.existsSync(attachments)
          ? fs
              .readdirSync(attachments)
              .map((f) => Buffer.from(f.replace(/\.json$/, ""), "base64url").toString())
              .sort()
          : [];
      assert.deepEqual(attachedTo(), ["B"], "the volume is attached to B");
      // The one ControllerUnpublish to come (B's) detaches, then answers only after the window.
      fs.writeFileSync(
        faults,
        JSON.stringify({ ControllerUnpublishVolume: { answerAfterMs: ANSWER_AFTER_MS, times: 1 } }),
      );

      await crashAgent(clients.get("B")!);
      assert.ok(killProcessGroupsUnder(path.join(dir, "b")).length > 0, "B's task processes were killed");
      // A lost machine's mounts go with it.
      await unmountAll(path.join(dir, "b"));

      await eventually(
        "the leader's release of B's claim to detach the volume from B",
        () => Promise.resolve(attachedTo().includes("B") ? undefined : true),
        30_000,
        20,
      );
      const leading = await leaderOf(followers[0]!.base);
      const victim = servers.find((s) => s.host === leading);
      assert.ok(victim, "a leader is known");
      await crashAgent(victim.proc);
      const killedAt = Date.now();
      const survivors = servers.filter((s) => s !== victim);
      api = survivors[0]!.base;
      const held = await volume();
      assert.ok(
        Object.keys(held.WriteAllocs ?? {}).includes(first.ID) || first.ID in held.PastClaims,
        `the kill came before the claim was freed: ${JSON.stringify(held)}`,
      );

      const newLeader = await agreedLeader(survivors);
      t.diagnostic(`leader failover: kill → ${newLeader.name} leads in ${Date.now() - killedAt} ms`);
      const replacement = await eventually(
        "the replacement to run on A",
        async () =>
          (await allocsOf("writer")).find(
            (a) => a.ID !== first.ID && a.ClientStatus === "running" && a.NodeName === "A",
          ),
        60_000,
      );
      await eventually("the replacement's write next to B's", async () =>
        fs.readFileSync(starts, "utf8").trim().split("\n").length === 2 ? true : undefined,
      );
      // No claim lost (the replacement holds one), none duplicated (B's is gone, nobody else's).
      for (const s of survivors) {
        const v = await getJson<VolumeView>(s.base, "/v1/volume/csi/shared?claims=true");
        assert.deepEqual(Object.keys(v.WriteAllocs ?? {}), [replacement.ID], `${s.name}: the one writer`);
        assert.deepEqual(
          [Object.keys(v.ReadAllocs ?? {}), v.PastClaims],
          [[], {}],
          `${s.name}: no other claim`,
        );
      }
      assert.deepEqual(attachedTo(), ["A"], "attached to A alone");
      const running = (await allocsOf("writer")).filter((a) => a.ClientStatus === "running");
      assert.deepEqual(
        running.map((a) => a.ID),
        [replacement.ID],
      );
      const calls = readCallLog(callLog)
        .filter((c) => c.volume_id === ext && c.code === "OK")
        .map(line);
      const detachB = "ControllerUnpublishVolume:B:OK";
      // Twice: the held call (the plugin answers it to a dead leader), then the new leader's
      // resumed step (idempotent); only then A's attach, stage and publish.
      assert.equal(calls.filter((c) => c === detachB).length, 2, JSON.stringify(calls));
      assert.deepEqual(
        calls.slice(calls.lastIndexOf(detachB) + 1),
        ["ControllerPublishVolume:A:OK", "NodeStageVolume:A:OK", "NodePublishVolume:A:OK"],
        `A got the volume after B's detach (calls: ${JSON.stringify(calls)})`,
      );

      await cli(["job", "stop", "writer"]);
      await eventually("the volume's claims to be released", async () => {
        const v = await volume();
        return claimCount(v) === 0 ? v : undefined;
      });
      assert.deepEqual(attachedTo(), [], "detached everywhere");
      await cli(["job", "stop", "-purge", "hostpath"]);
      await cli(["job", "stop", "-purge", "hostpath-a"]);
      assert.equal(await clients.get("A")!.stop(60_000), 0, "A's agent exit code");
      for (const s of survivors) assert.equal(await s.proc.stop(30_000), 0, `${s.name}'s exit code`);
      assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
      assert.deepEqual(killProcessesUnder(dir), [], "no process outlived the agents");
      passed = true;
    } finally {
      for (const c of clients.values()) c.kill();
      for (const s of servers) s.proc.kill();
      const leftovers = killProcessGroupsUnder(dir);
      if (!passed || leftovers.length > 0) {
        for (const name of [...servers.map((s) => s.name), "a", "b"]) {
          process.stderr.write(`--- ${name}.log (tail) ---\n${logTail(path.join(dir, `${name}.log`), 40)}\n`);
        }
      }
      await unmountAll(dir);
      fs.rmSync(dir, { recursive: true, force: true });
      await etcd?.stop();
    }
  },
);
