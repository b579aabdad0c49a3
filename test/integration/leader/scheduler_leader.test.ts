/**
 * Scheduler passes run on the leader alone (leader/scheduler_front.ts), with in-process servers on
 * one real etcd and real HTTP between them: a job registered through a follower is evaluated by
 * the leader (its scheduler's metrics count the pass, the followers' do not) and the answer names
 * the eval, readable on that follower at once; a job blocked for want of a node is placed when a
 * node registers with another follower; the internal path refuses callers without the cluster
 * secret (403), names a bad field (400) and, on a follower, answers ERR_NO_LEADER; when the
 * leader stops, a register on a follower goes to the next leader. With a leader
 * that cannot be reached, a register waits for a leader and fails after the hold with 503
 * ERR_NO_LEADER "No cluster leader"; once a leader is elected a waiting register succeeds and the
 * job that failed to be evaluated is evaluated by the new leader's start-up pass.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { Server } from "../../../src/server/server.js";
import { openEtcd } from "../../../src/server/leader/cluster.js";
import { haKeys } from "../../../src/server/leader/keys.js";
import { CLUSTER_SECRET_HEADER } from "../../../src/server/leader/peer_http.js";
import { SCHEDULER_PATH } from "../../../src/server/leader/scheduler_forward.js";
import { nullLogger } from "../../../src/internal/log.js";
import { Telemetry } from "../../../src/internal/metrics/telemetry.js";
import { makeNode } from "../../builders/node.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { eventually } from "../../helpers/agent_process.js";
import { family, parseExposition } from "../../helpers/prom_parse.js";
import { connectAgent } from "../server/fake_agent.js";
import { oneLeader } from "./servers.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";

let etcd: EtcdServer | undefined;
before(async () => {
  if (!skip) etcd = await startEtcd();
});
after(async () => {
  await etcd?.stop();
});

let prefixes = 0;

/** `n` servers on a fresh prefix, each with metrics of its own (Prometheus on). */
async function servers(n: number, prefix: string): Promise<Server[]> {
  const started: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = new Server({
        dataDir: null,
        httpAddr: "127.0.0.1:0",
        log: nullLogger,
        heartbeatTtlMs: 60_000,
        etcd: { endpoints: [etcd!.endpoint], prefix },
        member: { name: `s${i}`, leaseTtlSec: 2 },
        telemetry: new Telemetry({ prometheusMetrics: true }),
      });
      started.push(s);
      await s.start();
    }
  } catch (err) {
    for (const s of started) await s.stop();
    throw err;
  }
  return started;
}

function nextPrefix(): string {
  return `/sched-leader-test-${process.pid}-${prefixes++}`;
}

// Batch: no deployment, so no deployment watcher pass re-evaluates a blocked job by the way.
const job = (id: string) => ({
  Job: {
    ID: id,
    Type: "batch",
    TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "exec" }] }],
  },
});

async function register(s: Server, id: string) {
  const res = await fetch(`${s.httpAddress}/v1/jobs`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(job(id)),
  });
  const text = await res.text();
  return { status: res.status, code: res.headers.get("x-berth-error-code"), text };
}

async function getJson<T>(s: Server, route: string): Promise<{ status: number; json: T }> {
  const res = await fetch(s.httpAddress + route);
  return { status: res.status, json: (await res.json()) as T };
}

/** The sum of this server's samples of a metric family (Prometheus, read by a real parser) with `labels`. */
async function metric(
  s: Server,
  name: string,
  suffix: string,
  labels: Record<string, string>,
): Promise<number> {
  const text = await (await fetch(`${s.httpAddress}/v1/metrics?format=prometheus`)).text();
  const fam = parseExposition(text).find((f) => f.name === name);
  if (!fam) return 0;
  return family([fam], fam.name)
    .samples.filter(
      (x) => x.name.endsWith(suffix) && Object.entries(labels).every(([k, v]) => x.labels[k] === v),
    )
    .reduce((sum, x) => sum + x.value, 0);
}

/** Passes this server's own scheduler ran for `trigger` (its MeasuredScheduler's timer count). */
const passes = (s: Server, trigger: string) =>
  metric(s, "berth_server_scheduler_eval_seconds", "_count", { trigger });

/** Scheduler calls this server sent to the leader, by op and outcome. */
const forwarded = (s: Server, op: string, outcome: string) =>
  metric(s, "berth_server_scheduler_forwarded", "_total", { op, outcome });

test(
  "a follower's job register runs on the leader; a node registering with another follower unblocks it",
  { skip },
  async () => {
    const prefix = nextPrefix();
    const all = await servers(3, prefix);
    const live = new Set(all);
    const client = openEtcd([etcd!.endpoint]);
    let peer: Awaited<ReturnType<typeof connectAgent>> | undefined;
    try {
      const leader = await oneLeader(all);
      const [f1, f2] = all.filter((s) => s !== leader) as [Server, Server];
      await eventually(
        "the followers to know the leader",
        async () => {
          for (const s of [f1, f2]) {
            const l = await getJson<string>(s, "/v1/status/leader");
            if (l.json !== new URL(leader.httpAddress).host) return undefined;
          }
          return true;
        },
        10_000,
        20,
      );

      // No node yet: the pass blocks; it ran on the leader, and f1 answers with its eval.
      const reg = await register(f1, "web");
      assert.equal(reg.status, 200, reg.text);
      const { EvalID } = JSON.parse(reg.text) as { EvalID: string };
      assert.notEqual(EvalID, "", "the answer carries the leader's eval");
      const ev = await getJson<{ Status: string; BlockedEval: string; TriggeredBy: string }>(
        f1,
        `/v1/evaluation/${EvalID}`,
      );
      assert.equal(ev.status, 200, "the follower reads the eval it answered with");
      assert.equal(ev.json.TriggeredBy, "job-register");
      assert.notEqual(ev.json.BlockedEval, "", "no node: the job is blocked");
      assert.equal(await passes(leader, "job-register"), 1, "the leader ran the pass");
      assert.equal(await passes(f1, "job-register"), 0, "the follower did not");
      assert.equal(await passes(f2, "job-register"), 0);
      assert.equal(await forwarded(f1, "evaluate", "ok"), 1, "f1 sent it");
      assert.equal(await forwarded(leader, "evaluate", "ok"), 0);

      // The node that fits registers with the other follower: the leader retries its blocked job.
      peer = await connectAgent(f2.httpAddress);
      await peer.call("Node.Register", { Node: makeNode("n1") });
      const placed = await eventually(
        "the blocked job to be placed on n1",
        async () => {
          const allocs = (await getJson<{ NodeID: string }[]>(f2, "/v1/job/web/allocations")).json;
          return allocs.length === 1 ? allocs : undefined;
        },
        10_000,
        50,
      );
      assert.equal(placed[0]!.NodeID, "n1");
      assert.equal(await passes(f2, "queued-allocs"), 0, "the retry ran on the leader");
      assert.ok((await passes(leader, "queued-allocs")) >= 1);
      assert.ok((await forwarded(f2, "retry-blocked", "ok")) >= 1, "f2 asked the leader to retry");

      // The internal path: only servers; fields checked; a follower runs nothing.
      const secret = (await client.get(haKeys(prefix).clusterSecret).string()) ?? "";
      assert.notEqual(secret, "");
      const call = (s: Server, headers: Record<string, string>, body: unknown) =>
        fetch(s.httpAddress + SCHEDULER_PATH, {
          method: "POST",
          headers: { "Content-Type": "application/json", ...headers },
          body: JSON.stringify(body),
        });
      const good = {
        Op: "evaluate",
        Namespace: "default",
        JobID: "web",
        Trigger: "job-register",
        Options: {},
        MinIndex: 0,
      };
      const refused: Record<string, string>[] = [{}, { [CLUSTER_SECRET_HEADER]: "guessed" }];
      for (const headers of refused) {
        const res = await call(leader, headers, good);
        assert.equal(res.status, 403);
        assert.equal(res.headers.get("x-berth-error-code"), "ERR_PERMISSION_DENIED");
        assert.match(await res.text(), /cluster secret/);
      }
      const bad = await call(leader, { [CLUSTER_SECRET_HEADER]: secret }, { ...good, Trigger: "whim" });
      assert.equal(bad.status, 400);
      assert.match(await bad.text(), /^Trigger: "whim" is not an eval trigger/);
      const onFollower = await call(f1, { [CLUSTER_SECRET_HEADER]: secret }, good);
      assert.equal(onFollower.status, 503);
      assert.equal(onFollower.headers.get("x-berth-error-code"), "ERR_NO_LEADER");
      assert.equal(await passes(leader, "job-register"), 1, "no refused call ran a pass");
      assert.equal(await passes(f1, "job-register"), 0);

      // The leader stops: a register on a follower right after waits for the next leader.
      await leader.stop();
      live.delete(leader);
      const next = await register(f1, "after");
      assert.equal(next.status, 200, next.text);
      const after = (JSON.parse(next.text) as { EvalID: string }).EvalID;
      assert.equal((await getJson(f1, `/v1/evaluation/${after}`)).status, 200);
      const successor = await oneLeader([f1, f2]);
      assert.equal(await passes(successor, "job-register"), 1, "the new leader ran it");
      assert.equal(await passes(successor === f1 ? f2 : f1, "job-register"), 0);
    } finally {
      peer?.close();
      client.close();
      for (const s of live) await s.stop();
    }
  },
);

/** A port nothing listens on (bound and closed again): a dead leader's address. */
async function deadPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

test(
  "no reachable leader: a register waits, fails with 503 ERR_NO_LEADER; once a leader is elected it succeeds",
  { skip },
  async () => {
    // A leader that is gone without its lease having run out yet: its key names a dead address.
    const prefix = nextPrefix();
    const client = openEtcd([etcd!.endpoint]);
    const lease = client.lease(120, { autoKeepAlive: false });
    const port = await deadPort();
    await lease.put(haKeys(prefix).leader).value(
      JSON.stringify({
        ID: "ghost",
        Name: "ghost.global",
        Region: "global",
        Datacenter: "dc1",
        HTTPAddr: `http://127.0.0.1:${port}`,
        RPCAddr: `127.0.0.1:${port}`,
        StartTime: Date.now(),
      }),
    );
    let all: Server[] = [];
    try {
      all = await servers(1, prefix);
      const s = all[0]!;
      await eventually(
        "the server to follow the ghost",
        async () => (await getJson<string>(s, "/v1/status/leader")).json === `127.0.0.1:${port}` || undefined,
        10_000,
        20,
      );
      const failed = await register(s, "early");
      assert.equal(failed.status, 503, failed.text);
      assert.equal(failed.code, "ERR_NO_LEADER");
      assert.match(
        failed.text,
        /^No cluster leader \(waited 4\.0 s; last: ghost\.global at http:\/\/127\.0\.0\.1:\d+: /,
      );
      assert.equal(await passes(s, "job-register"), 0, "no pass ran anywhere");
      assert.equal(await forwarded(s, "evaluate", "no_leader"), 1);

      // A register waiting for a leader when the ghost's lease ends: this server wins and runs it.
      const waiting = register(s, "late");
      await new Promise((r) => setTimeout(r, 500));
      await lease.revoke();
      const late = await waiting;
      assert.equal(late.status, 200, late.text);
      assert.notEqual((JSON.parse(late.text) as { EvalID: string }).EvalID, "");
      await eventually(
        "this server to lead",
        () => Promise.resolve(s.leadership.state === "leader" || undefined),
        10_000,
        20,
      );
      // The job whose pass never ran is evaluated by the new leader's start-up pass.
      await eventually(
        "the early job to be evaluated",
        async () => (await getJson<unknown[]>(s, "/v1/job/early/evaluations")).json.length > 0 || undefined,
        10_000,
        50,
      );
    } finally {
      await lease.revoke().catch(() => undefined);
      client.close();
      for (const s of all) await s.stop();
    }
  },
);
