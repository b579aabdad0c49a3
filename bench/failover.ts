/**
 * Leader failover time: three `berth agent -server -etcd-endpoints=…` processes on loopback,
 * sharing a real etcd member (state and leadership); each round kills the leader with SIGKILL and measures, from the kill,
 * (a) until a surviving server logs "leader loops running" (its gate started every leader-only
 * loop: node liveness, blocked evals, volumewatcher, drainer, deployments, GC, orphans) and
 * (b) until a survivor's /v1/status/leader names a survivor. The killed server is started again
 * before the next round. Target (issue 14): kill → new leader running its loops ≤ 5 s; the lease
 * TTL (3 s by default) is most of it.
 *
 *   node dist/bench/failover.js [rounds=3]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { AgentProcess, eventually, freePort } from "../test/helpers/agent_process.js";
import { startEtcd } from "../test/helpers/etcd_server.js";

const ROUNDS = Number(process.argv[2] ?? 3);
interface Member {
  name: string;
  port: number;
  log: string;
  args: string[];
  proc: AgentProcess;
}

function loopsStarted(log: string): number {
  if (!fs.existsSync(log)) return 0;
  return fs.readFileSync(log, "utf8").split("leader loops running").length - 1;
}

async function leaderOf(port: number): Promise<string | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/v1/status/leader`);
    const leader = (await res.json()) as string;
    return leader === "" ? undefined : leader;
  } catch {
    return undefined;
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const etcd = await startEtcd();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-bench-failover-"));
  const members: Member[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const name = `s${i}`;
      const args = [
        "-server",
        "-data-dir",
        path.join(dir, name),
        "-http-addr",
        `127.0.0.1:${port}`,
        `-node-name=${name}`,
        `-etcd-endpoints=${etcd.endpoint}`,
      ];
      const log = path.join(dir, `${name}.log`);
      members.push({ name, port, log, args, proc: new AgentProcess(args, log) });
    }
    const loopsMs: number[] = [];
    const statusMs: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const leaderAddr = await eventually(
        "every server to agree on a leader",
        async () => {
          const seen = await Promise.all(members.map((m) => leaderOf(m.port)));
          return seen.every((s) => s !== undefined && s === seen[0]) ? seen[0] : undefined;
        },
        60_000,
        50,
      );
      const leader = members.find((m) => leaderAddr.endsWith(`:${m.port}`))!;
      const survivors = members.filter((m) => m !== leader);
      // The survivors' gate starts so far, and the leader's loops must be running before the kill.
      await eventually(
        "the leader's loops",
        () => Promise.resolve(loopsStarted(leader.log) > 0 || undefined),
        30_000,
        20,
      );
      const before = survivors.map((m) => loopsStarted(m.log));
      const t0 = performance.now();
      leader.proc.kill();
      let tStatus = 0;
      const tLoops = await eventually(
        "a survivor to run the leader loops",
        async () => {
          if (tStatus === 0) {
            const l = await leaderOf(survivors[0]!.port);
            if (l !== undefined && survivors.some((m) => l.endsWith(`:${m.port}`)))
              tStatus = performance.now();
          }
          return survivors.some((m, i) => loopsStarted(m.log) > before[i]!) ? performance.now() : undefined;
        },
        60_000,
        10,
      );
      loopsMs.push(Math.round(tLoops - t0));
      await eventually(
        "the status route",
        async () => {
          if (tStatus !== 0) return true;
          const l = await leaderOf(survivors[0]!.port);
          if (l !== undefined && survivors.some((m) => l.endsWith(`:${m.port}`))) tStatus = performance.now();
          return tStatus !== 0 || undefined;
        },
        30_000,
        10,
      );
      statusMs.push(Math.round(tStatus - t0));
      console.log(
        `round ${round}: killed ${leader.name}; new leader running its loops after ${loopsMs.at(-1)} ms, /v1/status/leader after ${statusMs.at(-1)} ms`,
      );
      leader.proc = new AgentProcess(leader.args, leader.log);
    }
    console.log(
      `kill -9 → new leader running its loops: median ${median(loopsMs)} ms, max ${Math.max(...loopsMs)} ms over ${ROUNDS} rounds (target ≤ 5000 ms; lease TTL 3 s)`,
    );
  } finally {
    for (const m of members) await m.proc.stop(10_000);
    await etcd.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
