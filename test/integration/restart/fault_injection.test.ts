/**
 * The fault-injection run (issue 4): a persistent `berth agent -server -client -data-dir DIR` and
 * the hostpath plugin with `--faults` run many short batch alloc lifecycles over a pool of per_alloc
 * volumes, while each round's faults (retryable failures, now and then a hang past the client's call
 * deadline) hit NodeStage/NodePublish/NodeUnpublish/NodeUnstage, and some rounds `kill -9` the agent
 * at a random moment and start it again. A seeded PRNG drives it all (the seed is printed; set
 * BERTH_FAULT_SEED to replay). At the end: every alloc completed, every volume has no claim,
 * per-volume CSI call order holds, nothing is mounted under the data dir, no task process is left.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { hostpathPluginJob } from "../../builders/hostpath_plugin_job.js";
import { AgentProcess, crashAgent, eventually, freePort, logTail } from "../../helpers/agent_process.js";
import {
  awaitRoundEnd,
  batchJob,
  orderingViolations,
  prng,
  roundFaults,
  volumeSpec,
} from "./fault_fixtures.js";
import {
  callLog,
  cleanUp,
  Cli,
  keepLogIfFailed,
  pluginAndVolume,
  type AllocView,
} from "./restart_fixtures.js";

/** Volumes in the pool = allocs per round (alloc N uses vols[N]). */
const POOL = 10;
const LIFECYCLES = 200;
const ROUNDS = LIFECYCLES / POOL;
/** The agent's deadline of one node CSI call; hangs last longer than this. */
const CALL_TIMEOUT_MS = 1000;
const HANG_MS = 1800;
/** Found in the batch tasks' argv; also cleanUp's `sleep` marker (no task sleeps here). */
const MARKER = "berth-fault-run-86405";
const SLEEP = 86_405;

const seed = Number(process.env.BERTH_FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-faults-")));
const dataDir = path.join(dir, "data");
const logFile = path.join(dir, "agent.log");
let agent: AgentProcess | null = null;
let failed = false;

after(async () => {
  await crashAgent(agent!).catch(() => undefined);
  keepLogIfFailed(failed, logFile, `berth-faults-${seed}.log`);
  await cleanUp([dir], SLEEP);
});

/** Pids of processes whose argv carries the batch tasks' marker. */
function taskProcesses(): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(MARKER)) out.push(pid);
    } catch {
      /* gone */
    }
  }
  return out;
}

/**
 * Part of the gate (about 45 s), with a fresh seed each run; a failure prints the seed to replay.
 * BERTH_FAULT_SKIP=1 leaves it out of a local run.
 */
const skip = process.env.BERTH_FAULT_SKIP === "1" ? "BERTH_FAULT_SKIP=1 is set" : false;

test(
  `fault-injection run: ${LIFECYCLES} alloc lifecycles under faults and agent kills`,
  { skip },
  async () => {
    process.stderr.write(`fault-injection seed ${seed} (BERTH_FAULT_SEED=${seed} replays it)\n`);
    const rand = prng(seed);
    const port = await freePort();
    const cli = new Cli(`http://127.0.0.1:${port}`);
    const args = [
      "-server",
      "-client",
      "-data-dir",
      dataDir,
      "-http-addr",
      `127.0.0.1:${port}`,
      "-csi-plugin-wait=60s",
      "-csi-claim-retry=2m",
      `-csi-call-timeout=${CALL_TIMEOUT_MS}ms`,
    ];
    const start = async (): Promise<void> => {
      agent = new AgentProcess(args, logFile);
      await eventually("the node to be ready", async () => {
        const nodes = await cli.get<{ Status: string }[]>("/v1/nodes");
        return nodes?.some((n) => n.Status === "ready") ? true : undefined;
      });
    };
    const faultsHost = (pluginAllocId: string) =>
      path.join(dataDir, "alloc", pluginAllocId, "alloc", "faults.json");
    const setFaults = (file: string, faults: object): void => {
      fs.writeFileSync(file + ".tmp", JSON.stringify(faults));
      fs.renameSync(file + ".tmp", file);
    };

    try {
      await start();
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
      const pluginAlloc = await pluginAndVolume(cli, { plugin, volume: volFiles[0]! });
      for (const f of volFiles.slice(1)) await cli.run(["volume", "create", f]);
      const faultsFile = faultsHost(pluginAlloc.ID);

      const t0 = Date.now();
      let kills = 0;
      let lifecycles = 0;
      for (let round = 0; round < ROUNDS; round++) {
        setFaults(faultsFile, roundFaults(rand, HANG_MS));
        const job = `b${round}`;
        const jobFile = path.join(dir, `${job}.hcl`);
        fs.writeFileSync(jobFile, batchJob(job, POOL, MARKER));
        await cli.run(["job", "run", jobFile]);
        if (rand() < 0.3) {
          // A kill somewhere in the round: claims, stage/publish, the tasks, or the releases.
          await new Promise((r) => setTimeout(r, Math.floor(rand() * 2500)));
          await crashAgent(agent!);
          kills++;
          await start();
        }
        const allocs = await awaitRoundEnd(() => cli, job, vols, POOL, round);
        lifecycles += allocs.length;
      }
      const elapsed = Date.now() - t0;
      process.stderr.write(
        `fault-injection: ${lifecycles} lifecycles in ${(elapsed / 1000).toFixed(1)}s, ${kills} agent kills, seed ${seed}\n`,
      );
      assert.equal(lifecycles, LIFECYCLES);

      const calls = callLog(dataDir, pluginAlloc.ID);
      assert.ok(
        calls.some((c) => c.fault),
        "faults were injected",
      );
      assert.deepEqual(orderingViolations(calls), [], "CSI call order per volume");
      const left = (await mountsUnder(dataDir)).filter(
        (m) => m.includes(`${path.sep}staging${path.sep}`) || m.includes(`${path.sep}per-alloc${path.sep}`),
      );
      assert.deepEqual(left, [], "no volume left staged or published");
      assert.deepEqual(taskProcesses(), [], "no task process left");

      setFaults(faultsFile, {});
      for (const f of vols) await cli.run(["volume", "delete", f]);
      await cli.run(["job", "stop", "plugin"]);
      await eventually("the plugin alloc to complete", async () => {
        const as = await cli.get<AllocView[]>(`/v1/job/plugin/allocations`);
        return as?.[0]?.ClientStatus === "complete" ? true : undefined;
      });
      assert.equal(await agent!.stop(30_000), 0, "the agent exits 0");
      assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
    } catch (err) {
      failed = true;
      process.stderr.write(`seed ${seed}; agent log tail:\n${logTail(logFile, 60)}\n`);
      throw err;
    }
  },
);
