/**
 * Issue 28's forward deadline, with real processes: three `berth agent -server -etcd-endpoints=…`
 * servers on one real etcd (the default 3 s lease TTL, so a hold of 5 s). The leader is SIGSTOPped
 * — a pause or hang, no connection reset — and a job register (`PUT /v1/jobs`, whose scheduler pass
 * must run on the leader) through a healthy follower must answer within the lease TTL + 2 s: either
 * success through the new leader, or 503 ERR_NO_LEADER. Measured and printed, twice: once sent
 * right after the pause (the follower still sees the paused server as leader, so the call goes to
 * it and hangs there until its lease runs out), and once after the new leader is known.
 * The paused server is always SIGCONTed and every process stopped, even when the test fails.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { eventually, killProcessGroupsUnder, logTail } from "../../helpers/agent_process.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { agreedLeader, leaderOf, startServers, type ServerProcess } from "./ha_processes.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";
/** The agent's default lease TTL, and the hold the README promises for it. */
const HOLD_MS = 3_000 + 2_000;
/** Room for the test's own HTTP round trip on a busy machine. */
const SLACK_MS = 1_500;

const job = (id: string) => ({
  Job: {
    ID: id,
    Type: "batch",
    TaskGroups: [
      { Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "true" } }] },
    ],
  },
});

/** Registers `id` through `s`; the status, error code and how long the answer took. */
async function register(s: ServerProcess, id: string) {
  const start = performance.now();
  const res = await fetch(`${s.base}/v1/jobs`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(job(id)),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  return {
    status: res.status,
    code: res.headers.get("x-berth-error-code"),
    text,
    ms: performance.now() - start,
  };
}

function answeredInTime(r: Awaited<ReturnType<typeof register>>, what: string): void {
  console.log(
    `${what}: ${r.status} ${r.code ?? ""} in ${Math.round(r.ms)} ms (bound ${HOLD_MS} + ${SLACK_MS} ms)`,
  );
  assert.ok(
    r.status === 200 || (r.status === 503 && r.code === "ERR_NO_LEADER"),
    `${what}: success or 503 ERR_NO_LEADER, got ${r.status} ${r.code}: ${r.text}`,
  );
  assert.ok(r.ms < HOLD_MS + SLACK_MS, `${what}: answered in ${Math.round(r.ms)} ms`);
}

test(
  "a write through a follower answers within the lease TTL + 2 s while the leader is SIGSTOPped",
  { skip, timeout: 180_000 },
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-fwd-deadline-"));
    let etcd: EtcdServer | undefined;
    let servers: ServerProcess[] = [];
    let paused: ServerProcess | undefined;
    try {
      etcd = await startEtcd();
      servers = await startServers(dir, etcd.endpoint, 3);
      const leader = await agreedLeader(servers, 60_000);
      const [f1] = servers.filter((s) => s !== leader) as [ServerProcess];
      const warm = await register(f1, "warm");
      assert.equal(warm.status, 200, warm.text);

      process.kill(leader.proc.pid!, "SIGSTOP");
      paused = leader;
      const first = await register(f1, "during-pause");
      answeredInTime(first, "register sent at the pause");

      const next = await eventually(
        "a new leader among the others",
        async () => {
          const l = await leaderOf(f1.base);
          return l !== undefined && l !== leader.host ? l : undefined;
        },
        30_000,
        50,
      );
      const second = await register(f1, "after-election");
      answeredInTime(second, `register after ${next} leads`);
      assert.equal(second.status, 200, second.text);
    } catch (err) {
      for (const s of servers) console.log(`--- ${s.name}\n${logTail(s.log, 40)}`);
      throw err;
    } finally {
      if (paused?.proc.pid !== undefined && paused.proc.running) process.kill(paused.proc.pid, "SIGCONT");
      await Promise.all(servers.map((s) => s.proc.stop(20_000)));
      killProcessGroupsUnder(dir);
      await etcd?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
