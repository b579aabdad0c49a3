/**
 * Issue 29: periodic launches survive a leader failover on etcd without a doubled or a missed
 * launch. Three `berth agent -server` processes on one etcd; a periodic job ticking every 10 s
 * (Nomad's 7-field cron, seconds first). The leader is killed (SIGKILL) twice:
 * - just before a tick T: nobody launches T on time, so the next leader launches it once when its
 *   term starts (Nomad's catch-up: one child, not on a tick, between T and T+10), then T+10 on time;
 * - just after its launch of a tick T2: the next leader finds T2 recorded with its child and does
 *   not launch it again; T2+10 is launched on time.
 * Children are read from what survives: each child is named by its launch second.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { eventually, getJson, killProcessGroupsUnder, logTail } from "../../helpers/agent_process.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { agreedLeader, startServers, type ServerProcess } from "./ha_processes.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";
const PERIOD_S = 10;

const JOB = {
  Job: {
    ID: "pf",
    Type: "batch",
    Periodic: { Specs: [`*/${PERIOD_S} * * * * * *`], ProhibitOverlap: false },
    TaskGroups: [
      { Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "exec", Config: { command: "/bin/true" } }] },
    ],
  },
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nextTick = (s: number) => (Math.floor(s / PERIOD_S) + 1) * PERIOD_S;

/** Launch seconds of the job's children, ascending, as a live server lists them. */
async function launches(base: string): Promise<number[]> {
  const jobs = await getJson<{ ID: string; ParentID?: string }[]>(base, "/v1/jobs?prefix=pf%2F");
  return jobs
    .filter((j) => j.ParentID === "pf")
    .map((j) => Number(/\/periodic-(\d+)$/.exec(j.ID)?.[1]))
    .sort((a, b) => a - b);
}

/** Sleeps until `ms` (unix ms). */
async function until(ms: number) {
  const left = ms - Date.now();
  if (left > 0) await sleep(left);
}

test(
  "a leader killed around a periodic launch: the next leader neither doubles nor misses it",
  { skip, timeout: 180_000 },
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-periodic-failover-"));
    let etcd: EtcdServer | undefined;
    let servers: ServerProcess[] = [];
    let passed = false;
    try {
      etcd = await startEtcd();
      servers = await startServers(dir, etcd.endpoint, 3);
      let leader = await agreedLeader(servers);
      const res = await fetch(`${leader.base}/v1/jobs`, { method: "PUT", body: JSON.stringify(JOB) });
      assert.equal(res.status, 200, await res.text());
      const other = () => servers.find((s) => s.proc.running && s !== leader)!;

      // 1. Killed just before tick T (with a tick launched before it, so the record is not the submit).
      const first = await eventually(
        "a first launch",
        async () => (await launches(leader.base))[0],
        30_000,
        100,
      );
      let T = nextTick(first);
      if (T * 1000 - Date.now() < 1_500) T += PERIOD_S;
      await until(T * 1000 - 400);
      leader.proc.kill();
      await leader.proc.stop();
      leader = await agreedLeader(servers);
      await until((T + PERIOD_S) * 1000 + 2_500);
      let seen = await launches(other().base);
      const aroundT = seen.filter((s) => s >= T && s < T + PERIOD_S);
      assert.equal(
        aroundT.length,
        1,
        `one launch for tick ${T} (missed while no leader ran): ${seen.join(",")}`,
      );
      assert.ok(
        aroundT[0]! > T,
        `the catch-up is launched by the next leader, after ${T}: ${seen.join(",")}`,
      );
      assert.deepEqual(
        seen.filter((s) => s >= T + PERIOD_S),
        [T + PERIOD_S],
        `tick ${T + PERIOD_S} launched on time, once: ${seen.join(",")}`,
      );

      // 2. Killed just after its launch of a tick T2.
      const before = seen.length;
      const T2 = await eventually(
        "the next launch",
        async () => {
          const now = await launches(leader.base);
          return now.length > before ? now[now.length - 1] : undefined;
        },
        30_000,
        25,
      );
      leader.proc.kill();
      await leader.proc.stop();
      leader = await agreedLeader(servers);
      await until((T2 + PERIOD_S) * 1000 + 2_500);
      seen = await launches(leader.base);
      assert.deepEqual(
        seen.filter((s) => s >= T2),
        [T2, T2 + PERIOD_S],
        `tick ${T2} launched once (no catch-up after it), ${T2 + PERIOD_S} on time: ${seen.join(",")}`,
      );
      // No tick before the kills was doubled or missed either.
      const onTicks = seen.filter((s) => s % PERIOD_S === 0 && s < T);
      for (let i = 1; i < onTicks.length; i++)
        assert.equal(onTicks[i]! - onTicks[i - 1]!, PERIOD_S, seen.join(","));
      passed = true;
    } finally {
      if (!passed) for (const s of servers) process.stderr.write(`${s.name} log:\n${logTail(s.log, 40)}\n`);
      await Promise.all(servers.map((s) => s.proc.stop(20_000)));
      killProcessGroupsUnder(dir);
      await etcd?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
