/**
 * Reschedule policy through the real server (SQLite in a data dir) and a fake node agent: a failed
 * alloc is not replaced at once but by a delayed follow-up eval, which survives a server restart;
 * once the policy's attempts are used the job stays failed (dead), with no further allocs or evals.
 * And a purged job registered again under its ID is a new job with its own alloc.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Server } from "../../../src/server/server.js";
import { nullLogger } from "../../../src/internal/log.js";
import { makeNode } from "../../builders/node.js";
import { connectAgent, http, startServer, type AgentPeer } from "./fake_agent.js";

const S = 1_000_000_000;

/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-call -- API answers read as JSON */
type Json = any;

function job(id: string, type: string, reschedule: Record<string, unknown> | undefined) {
  return {
    ID: id,
    Type: type,
    TaskGroups: [
      {
        Name: "g",
        ...(reschedule ? { ReschedulePolicy: reschedule } : {}),
        Tasks: [{ Name: "t", Driver: "exec" }],
      },
    ],
  };
}

async function agent(base: string): Promise<{ peer: AgentPeer; close(): void }> {
  const peer = await connectAgent(base);
  await peer.call("Node.Register", { Node: makeNode("n1") });
  const beat = setInterval(() => {
    peer.call("Node.Heartbeat", { NodeID: "n1" }).catch(() => undefined);
  }, 200);
  return {
    peer,
    close() {
      clearInterval(beat);
      peer.close();
    },
  };
}

async function report(peer: AgentPeer, id: string, status: "running" | "failed" | "complete") {
  await peer.call("Node.UpdateAllocs", {
    NodeID: "n1",
    Allocs: [{ ID: id, ClientStatus: status, ClientDescription: "", TaskStates: {} }],
  });
}

const allocs = async (base: string, jobId: string, all = false): Promise<Json[]> =>
  (await http(base, "GET", `/v1/job/${jobId}/allocations${all ? "?all=true" : ""}`)).json;
const alloc = async (base: string, id: string): Promise<Json> =>
  (await http(base, "GET", `/v1/allocation/${id}`)).json;
const evalById = async (base: string, id: string): Promise<Json> =>
  (await http(base, "GET", `/v1/evaluation/${id}`)).json;

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("a failed alloc waits for its delay in a stored follow-up eval, which survives a server restart; then the policy is exhausted", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-resched-"));
  const servers: Server[] = [];
  const agents: { close(): void }[] = [];
  t.after(async () => {
    for (const a of agents) a.close();
    for (const s of servers) await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const start = async () => {
    const s = new Server({ dataDir: dir, httpAddr: "127.0.0.1:0", log: nullLogger, heartbeatTtlMs: 60_000 });
    await s.start();
    servers.push(s);
    return s;
  };
  const s1 = await start();
  let base = s1.httpAddress;
  const a1 = await agent(base);
  agents.push(a1);
  const policy = {
    Attempts: 1,
    Interval: 3600 * S,
    Delay: 5 * S,
    DelayFunction: "constant",
    Unlimited: false,
  };
  const reg = await http(base, "PUT", "/v1/jobs", { Job: job("web", "service", policy) });
  assert.equal(reg.status, 200, reg.text);
  const [first] = await allocs(base, "web");
  await report(a1.peer, first.ID, "running");
  await report(a1.peer, first.ID, "failed");

  // Not replaced at once: the failed alloc names a pending follow-up eval due after the delay.
  assert.equal((await allocs(base, "web")).length, 1);
  const failed = await alloc(base, first.ID);
  assert.ok(failed.FollowupEvalID, "the failed alloc names its follow-up eval");
  const follow = await evalById(base, failed.FollowupEvalID);
  assert.deepEqual(
    [follow.Status, follow.TriggeredBy, follow.StatusDescription, follow.JobID],
    ["pending", "alloc-failure", "created for delayed rescheduling", "web"],
  );
  assert.equal(
    Date.parse(follow.WaitUntil),
    Math.floor((failed.ModifyTime + 5 * S) / 1e6),
    "due at failure + delay",
  );
  assert.equal((await http(base, "GET", "/v1/job/web")).json.Status, "pending");
  const trigger = (await http(base, "GET", "/v1/job/web/evaluations")).json.find(
    (e: Json) => e.ID === follow.PreviousEval,
  );
  assert.equal(trigger.TriggeredBy, "alloc-failure", "the pass the failure started");

  // The server restarts before the delay ends: the stored eval is re-armed and runs.
  a1.close();
  await s1.stop();
  const s2 = await start();
  base = s2.httpAddress;
  const a2 = await agent(base);
  agents.push(a2);
  const replaced = await until("the replacement", async () => {
    const list = await allocs(base, "web");
    return list.length === 2 ? list : undefined;
  });
  const second = replaced.find((a: Json) => a.ID !== first.ID);
  const next = await alloc(base, second.ID);
  assert.equal(next.PreviousAllocation, first.ID);
  assert.deepEqual(
    next.RescheduleTracker.Events.map((e: Json) => [e.PrevAllocID, e.PrevNodeID, e.Delay]),
    [[first.ID, "n1", 5 * S]],
  );
  assert.ok(next.RescheduleTracker.Events[0].RescheduleTime >= Date.parse(follow.WaitUntil) * 1e6 - S);
  assert.equal((await alloc(base, first.ID)).NextAllocation, second.ID);
  const ran = await evalById(base, follow.ID);
  assert.equal(ran.Status, "complete", "the follow-up eval ran and placed the replacement");

  // The replacement fails too: 1 attempt in the hour is used, so nothing more is tried.
  await report(a2.peer, second.ID, "running");
  await report(a2.peer, second.ID, "failed");
  assert.equal((await allocs(base, "web")).length, 2);
  assert.equal((await alloc(base, second.ID)).FollowupEvalID ?? "", "");
  const evals: Json[] = (await http(base, "GET", "/v1/job/web/evaluations")).json;
  assert.deepEqual(
    evals.filter((e) => e.Status === "pending" || e.Status === "blocked"),
    [],
  );
  assert.equal((await http(base, "GET", "/v1/job/web")).json.Status, "dead");
});

test("job register: reschedule policies are validated with the field named; system jobs refuse one", async (t) => {
  const base = await startServer(t);
  const bad = await http(base, "PUT", "/v1/jobs", { Job: job("a", "service", { Delay: 1 * S }) });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /Job\.TaskGroups\[0\]\.ReschedulePolicy: .*Delay cannot be less than 5s \(got 1s\)/);
  const sys = await http(base, "PUT", "/v1/jobs", { Job: job("b", "system", { Attempts: 1 }) });
  assert.equal(sys.status, 400);
  assert.match(sys.text, /System or sysbatch jobs should not have a reschedule policy/);
  const ok = await http(base, "PUT", "/v1/jobs", {
    Job: { ...job("c", "batch", undefined), Reschedule: { Attempts: 2 } },
  });
  assert.equal(ok.status, 200, ok.text);
  const stored = (await http(base, "GET", "/v1/job/c")).json;
  assert.deepEqual(stored.TaskGroups[0].ReschedulePolicy, {
    Attempts: 2,
    Interval: 24 * 3600 * S,
    Delay: 5 * S,
    DelayFunction: "constant",
    MaxDelay: 0,
    Unlimited: false,
  });
});

test("a purged batch job registered again under its ID is a new job: its own alloc, not the old complete one", async (t) => {
  const base = await startServer(t);
  const a = await agent(base);
  t.after(() => a.close());
  assert.equal((await http(base, "PUT", "/v1/jobs", { Job: job("once", "batch", undefined) })).status, 200);
  const [old] = await allocs(base, "once");
  await report(a.peer, old.ID, "running");
  await report(a.peer, old.ID, "complete");
  assert.equal((await http(base, "GET", "/v1/job/once")).json.Status, "dead");
  assert.equal((await http(base, "DELETE", "/v1/job/once?purge=true")).status, 200);

  assert.equal((await http(base, "PUT", "/v1/jobs", { Job: job("once", "batch", undefined) })).status, 200);
  const again = (await http(base, "GET", "/v1/job/once")).json;
  assert.equal(again.Version, 0);
  const mine = await allocs(base, "once");
  assert.equal(mine.length, 1, "one new alloc");
  assert.notEqual(mine[0].ID, old.ID);
  assert.deepEqual([mine[0].ClientStatus, mine[0].DesiredStatus], ["pending", "run"]);
  assert.equal(again.Status, "running");
  const all = await allocs(base, "once", true);
  assert.deepEqual(
    all.map((x: Json) => x.ID).sort(),
    [old.ID, mine[0].ID].sort(),
    "?all=true shows the purged job's too",
  );
});
