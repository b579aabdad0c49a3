/**
 * The fault-injection run's several-servers mode (issue 14): three `berth agent -server
 * -etcd-endpoints=…` servers on a real etcd and one node agent given all three (`-servers=a,b,c`),
 * with the hostpath plugin's `--faults` failing or hanging its node calls as in the one-server run
 * (fault_injection.test.ts). Rounds of short batch allocs over a pool of per_alloc volumes; in the first
 * round the leader, in most later ones a random server, is SIGKILLed at a random moment and started
 * again. A seeded PRNG drives it (the seed is printed; BERTH_FAULT_SEED replays it). At the end:
 * every alloc completed, every claim released, the CSI call order held per volume, nothing staged
 * or published, no task process left. Kept short for CI (a few rounds).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { hostpathPluginJob } from "../../builders/hostpath_plugin_job.js";
import { AgentProcess, crashAgent, eventually, logTail } from "../../helpers/agent_process.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { agreedLeader, leaderOf, startServers, type ServerProcess } from "../leader/ha_processes.js";
import {
  awaitRoundEnd,
  batchJob,
  orderingViolations,
  prng,
  roundFaults,
  volumeSpec,
} from "./fault_fixtures.js";
import { callLog, cleanUp, Cli, pluginAndVolume, type AllocView } from "./restart_fixtures.js";

const POOL = 5;
const ROUNDS = 4;
const CALL_TIMEOUT_MS = 1000;
const HANG_MS = 1800;
const MARKER = "berth-fault-ha-86406";
const SLEEP = 86_406;

const seed = Number(process.env.BERTH_FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-faults-ha-")));
const dataDir = path.join(dir, "node");
const nodeLog = path.join(dir, "node.log");
let etcd: EtcdServer | undefined;
let servers: ServerProcess[] = [];
let node: AgentProcess | null = null;

after(async () => {
  await crashAgent(node!).catch(() => undefined);
  for (const s of servers) await crashAgent(s.proc).catch(() => undefined);
  await cleanUp([dir], SLEEP);
  await etcd?.stop();
});

const skip = !etcdAvailable()
  ? "etcd is not installed (/usr/bin/etcd)"
  : process.env.BERTH_FAULT_SKIP === "1"
    ? "BERTH_FAULT_SKIP=1 is set"
    : false;

/** A CLI/HTTP client on whichever server is running (one may be down mid-round). */
function liveCli(): Cli {
  const s = servers.find((x) => x.proc.running) ?? servers[0]!;
  return new Cli(s.base);
}

test(
  `fault-injection run, 3 servers: ${POOL * ROUNDS} alloc lifecycles under faults and random server kills`,
  { skip, timeout: 180_000 },
  async () => {
    process.stderr.write(`fault-injection (3 servers) seed ${seed} (BERTH_FAULT_SEED=${seed} replays it)\n`);
    const rand = prng(seed);
    etcd = await startEtcd();
    servers = await startServers(dir, etcd.endpoint, 3);
    await agreedLeader(servers);
    node = new AgentProcess(
      [
        "-client",
        "-data-dir",
        dataDir,
        `-servers=${servers.map((s) => s.host).join(",")}`,
        "-node-name=n1",
        "-csi-plugin-wait=60s",
        "-csi-claim-retry=2m",
        `-csi-call-timeout=${CALL_TIMEOUT_MS}ms`,
      ],
      nodeLog,
    );
    const setFaults = (file: string, faults: object): void => {
      fs.writeFileSync(file + ".tmp", JSON.stringify(faults));
      fs.renameSync(file + ".tmp", file);
    };
    /** SIGKILLs server `i` and starts it again with the same flags (same port, same data dir). */
    const restartServer = async (i: number) => {
      const s = servers[i]!;
      await crashAgent(s.proc);
      const args = s.proc.child.spawnargs.slice(3);
      s.proc = new AgentProcess(args, s.log);
    };
    try {
      await eventually("the node to be ready", async () => {
        const nodes = await liveCli().get<{ Status: string }[]>("/v1/nodes");
        return nodes?.some((n) => n.Status === "ready") ? true : undefined;
      });
      const plugin = path.join(dir, "plugin.hcl");
      fs.writeFileSync(
        plugin,
        hostpathPluginJob({
          jobType: "service",
          args: [
            "--node-id=${node.unique.id}",
            "--state-dir=${NOMAD_TASK_DIR}/hostpath",
            "--call-log=/alloc/calls.jsonl",
            "--faults=/alloc/faults.json",
          ],
        }),
      );
      const vols = Array.from({ length: POOL }, (_, i) => `vols[${i}]`);
      const volFiles = vols.map((id, i) => {
        const f = path.join(dir, `vol${i}.hcl`);
        fs.writeFileSync(f, volumeSpec(id));
        return f;
      });
      const pluginAlloc = await pluginAndVolume(liveCli(), { plugin, volume: volFiles[0]! });
      for (const f of volFiles.slice(1)) await liveCli().run(["volume", "create", f]);
      const faultsFile = path.join(dataDir, "alloc", pluginAlloc.ID, "alloc", "faults.json");

      let kills = 0;
      let leaderKills = 0;
      let lifecycles = 0;
      for (let round = 0; round < ROUNDS; round++) {
        setFaults(faultsFile, roundFaults(rand, HANG_MS));
        const job = `b${round}`;
        const jobFile = path.join(dir, `${job}.hcl`);
        fs.writeFileSync(jobFile, batchJob(job, POOL, MARKER));
        await liveCli().run(["job", "run", jobFile]);
        // The first round always kills the leader; later ones a random server, most of the time.
        if (round === 0 || rand() < 0.75) {
          // A kill somewhere in the round: placement, claims, stage/publish, or the releases.
          await new Promise((r) => setTimeout(r, Math.floor(rand() * 2500)));
          const leading = await leaderOf(liveCli().addr);
          const victim =
            round === 0 ? servers.findIndex((s) => s.host === leading) : Math.floor(rand() * servers.length);
          if (servers[victim]?.host === leading) leaderKills++;
          await restartServer(Math.max(0, victim));
          kills++;
        }
        const allocs = await awaitRoundEnd(liveCli, job, vols, POOL, round);
        lifecycles += allocs.length;
      }
      process.stderr.write(
        `fault-injection (3 servers): ${lifecycles} lifecycles, ${kills} server kills (${leaderKills} of the leader)\n`,
      );
      assert.ok(leaderKills > 0, "the leader was killed at least once");
      assert.equal(lifecycles, POOL * ROUNDS);

      const calls = callLog(dataDir, pluginAlloc.ID);
      assert.deepEqual(orderingViolations(calls), [], "CSI call order per volume");
      const left = (await mountsUnder(dataDir)).filter(
        (m) => m.includes(`${path.sep}staging${path.sep}`) || m.includes(`${path.sep}per-alloc${path.sep}`),
      );
      assert.deepEqual(left, [], "no volume left staged or published");

      setFaults(faultsFile, {});
      await agreedLeader(servers);
      for (const id of vols) await liveCli().run(["volume", "delete", id]);
      await liveCli().run(["job", "stop", "plugin"]);
      await eventually("the plugin alloc to complete", async () => {
        const as = await liveCli().get<AllocView[]>(`/v1/job/plugin/allocations`);
        return as?.[0]?.ClientStatus === "complete" ? true : undefined;
      });
      assert.equal(await node.stop(30_000), 0, "the node agent exits 0");
      for (const s of servers) assert.equal(await s.proc.stop(30_000), 0, `${s.name} exits 0`);
      assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
    } catch (err) {
      process.stderr.write(`seed ${seed}; node agent log tail:\n${logTail(nodeLog, 60)}\n`);
      for (const s of servers) process.stderr.write(`--- ${s.name}.log ---\n${logTail(s.log, 30)}\n`);
      throw err;
    }
  },
);
