/**
 * The scheduler front's routing (leader/scheduler_front.ts) with a fake cluster view, a fake peer
 * and a fake local scheduler: the leader runs calls locally, a follower sends them to the leader
 * it knows and answers its result once its own state shows it; with no leader, or a leader that
 * cannot be reached or no longer leads, it asks again for the hold time, then fails with
 * ERR_NO_LEADER; triggers to retry blocked jobs coalesce; the pass's own errors are not retried.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { BerthError, isBerthError } from "../../../src/structs/errors.js";
import type { JobScheduler } from "../../../src/server/deps.js";
import type { ServerMember } from "../../../src/server/leader/keys.js";
import { SchedulerFront, type LeaderRoute } from "../../../src/server/leader/scheduler_front.js";
import type { SchedulerCall, SchedulerPeer } from "../../../src/server/leader/scheduler_forward.js";
import type { EvalResult } from "../../../src/server/scheduler/evaluate_in.js";
import type { IndexedStore } from "../../../src/server/leader/await_index.js";

const member = (id: string): ServerMember => ({
  ID: id,
  Name: `${id}.global`,
  Region: "global",
  Datacenter: "dc1",
  HTTPAddr: `http://${id}:4646`,
  RPCAddr: `${id}:4646`,
  StartTime: 0,
});

const result = (evalId: string, index: number): EvalResult => ({
  placed: 0,
  stopped: 0,
  failures: [],
  index,
  evalId,
  blockedEvalId: "",
  followups: [],
  heldSlots: 0,
});

class FakeLocal implements JobScheduler {
  evaluated: string[] = [];
  retries = 0;
  evaluate(_ns: string, id: string): Promise<EvalResult> {
    this.evaluated.push(id);
    return Promise.resolve(result(`local-${id}`, 1));
  }
  retryBlocked(): Promise<void> {
    this.retries++;
    return Promise.resolve();
  }
}

class FakePeer implements SchedulerPeer {
  sent: { addr: string; call: SchedulerCall }[] = [];
  answer: (addr: string, call: SchedulerCall) => Promise<EvalResult | null> = () =>
    Promise.resolve(result("remote", 5));
  send(addr: string, call: SchedulerCall): Promise<EvalResult | null> {
    // What the peer receives: the call as it crosses the wire (JSON), not the object in memory.
    this.sent.push({ addr, call: JSON.parse(JSON.stringify(call)) as SchedulerCall });
    return this.answer(addr, call);
  }
}

/** A store whose index the test moves; waitFor wakes on each move. */
class FakeStore implements IndexedStore {
  private at = 3;
  private wakers: (() => void)[] = [];
  index(): number {
    return this.at;
  }
  set(i: number): void {
    this.at = i;
    for (const w of this.wakers.splice(0)) w();
  }
  waitFor(_t: unknown, _min: number, _s: AbortSignal | undefined, timeoutMs: number): Promise<number> {
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(this.at), timeoutMs);
      this.wakers.push(() => {
        clearTimeout(t);
        resolve(this.at);
      });
    });
  }
}

function setup(holdMs = 400) {
  const self = member("self");
  const peer = new FakePeer();
  const view: { isLeader: boolean; leader: ServerMember | null } = {
    isLeader: false,
    leader: member("lead"),
  };
  const route: LeaderRoute = {
    get isLeader() {
      return view.isLeader;
    },
    self,
    leader: () => (view.leader ? { member: view.leader } : null),
    schedulerPeer: peer,
  };
  const local = new FakeLocal();
  const store = new FakeStore();
  const front = new SchedulerFront(
    local,
    () => route,
    store,
    { holdMs, retryBaseMs: 10, retryMaxMs: 40 },
    nullLogger,
  );
  return { front, peer, view, local, store, self };
}

test("the leader runs passes and retries locally; nothing is sent", async () => {
  const { front, peer, view, local } = setup();
  view.isLeader = true;
  assert.equal((await front.evaluate("default", "web")).evalId, "local-web");
  await front.retryBlocked();
  assert.deepEqual([local.evaluated, local.retries, peer.sent.length], [["web"], 1, 0]);
});

test("a follower sends the pass to the leader and answers once its own state shows the result", async () => {
  const { front, peer, local, store } = setup(5_000);
  let answered = false;
  const pending = front.evaluate("ns", "web", "alloc-stop", { quiet: true }).then((r) => {
    answered = true;
    return r;
  });
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(peer.sent, [
    {
      addr: "http://lead:4646",
      call: {
        Op: "evaluate",
        Namespace: "ns",
        JobID: "web",
        Trigger: "alloc-stop",
        Options: { Quiet: true },
        MinIndex: 3,
      },
    },
  ]);
  assert.equal(answered, false, "the replica is still at 3, the eval at 5");
  store.set(5);
  assert.equal((await pending).evalId, "remote");
  assert.equal(local.evaluated.length, 0);
});

test("a server that no longer leads, or cannot be reached, is asked again after re-reading who leads", async () => {
  const { front, peer, view } = setup(5_000);
  let tries = 0;
  peer.answer = (addr) => {
    tries++;
    if (tries === 1)
      return Promise.reject(new BerthError("ERR_NO_LEADER", "this server is not the cluster leader"));
    if (tries === 2) {
      view.leader = member("next");
      return Promise.reject(new BerthError("ERR_RPC_UNAVAILABLE", "connection refused"));
    }
    return Promise.resolve(result(`from ${addr}`, 1));
  };
  assert.equal((await front.evaluate("default", "web")).evalId, "from http://next:4646");
  assert.deepEqual(
    peer.sent.map((s) => s.addr),
    ["http://lead:4646", "http://lead:4646", "http://next:4646"],
  );
});

test("no leader for the whole hold: ERR_NO_LEADER 'No cluster leader'; a leader found meanwhile runs it", async () => {
  const { front, peer, view, local } = setup(300);
  view.leader = null;
  await assert.rejects(
    front.evaluate("default", "web"),
    (err: unknown) =>
      isBerthError(err) &&
      err.code === "ERR_NO_LEADER" &&
      /^No cluster leader \(waited 0\.3 s/.test(err.message),
  );
  assert.deepEqual([peer.sent.length, local.evaluated.length], [0, 0]);

  const pending = front.evaluate("default", "web");
  setTimeout(() => (view.isLeader = true), 100);
  assert.equal((await pending).evalId, "local-web", "this server won the election and ran it");
});

test("the pass's own errors reach the caller as they are, not retried", async () => {
  const { front, peer } = setup(5_000);
  peer.answer = () => Promise.reject(new BerthError("ERR_STATE_UNAVAILABLE", "etcd is away"));
  await assert.rejects(
    front.evaluate("default", "web"),
    (err: unknown) => isBerthError(err) && err.code === "ERR_STATE_UNAVAILABLE",
  );
  assert.equal(peer.sent.length, 1);
});

test("retry triggers coalesce: a burst is one call, triggers while it is out are one more", async () => {
  const { front, peer, store } = setup(5_000);
  await Promise.all(Array.from({ length: 20 }, () => front.retryBlocked()));
  assert.equal(peer.sent.length, 1, "the triggers of one turn are one call");
  peer.sent.length = 0;
  let release!: () => void;
  peer.answer = () => new Promise((resolve) => (release = () => resolve(null)));
  const burst = Array.from({ length: 20 }, () => front.retryBlocked());
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(peer.sent.length, 1);
  assert.deepEqual(peer.sent[0]!.call, { Op: "retry-blocked", MinIndex: 3 });
  store.set(9);
  for (let i = 0; i < 5; i++) void front.retryBlocked();
  peer.answer = () => Promise.resolve(null);
  release();
  await Promise.all(burst);
  assert.deepEqual(
    peer.sent.map((s) => s.call),
    [
      { Op: "retry-blocked", MinIndex: 3 },
      { Op: "retry-blocked", MinIndex: 9 },
    ],
  );
});

test("a retry that finds no leader is logged, never thrown; close() ends a call waiting for a leader", async () => {
  const { front, view } = setup(200);
  view.leader = null;
  await front.retryBlocked();
  const long = setup(60_000);
  long.view.leader = null;
  const waiting = long.front.evaluate("default", "web");
  setTimeout(() => void long.front.close(), 50);
  await assert.rejects(waiting, (err: unknown) => isBerthError(err) && err.code === "ERR_ABORTED");
});
