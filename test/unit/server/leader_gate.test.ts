/**
 * The leader gate: loops start in order on gain, stop in order on loss, one transition at a time;
 * a loss preempts an unfinished start (its term's signal aborts at once) and never delays the next
 * term; a loop's work is fenced by its term.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { LeaderGate, type LeaderLoop } from "../../../src/server/leader/gate.js";
import { nullLogger } from "../../../src/internal/log.js";
import { fenceRefusal } from "../../../src/internal/fence.js";

function recorder() {
  const log: string[] = [];
  let built = 0;
  const build = (): LeaderLoop[] => {
    const term = ++built;
    return ["liveness", "watcher", "gc"].map((name) => ({
      name,
      start: async () => {
        await new Promise((r) => setTimeout(r, 5));
        log.push(`start ${name} ${term}`);
      },
      stop: async () => {
        await new Promise((r) => setTimeout(r, 5));
        log.push(`stop ${name} ${term}`);
      },
    }));
  };
  return { log, build };
}

test("gain starts fresh loops in order; lose stops them in the same order; each term is new", async () => {
  const { log, build } = recorder();
  const gate = new LeaderGate(build, nullLogger);
  const states: string[] = [];
  gate.onChange((s) => states.push(s));
  await gate.gain();
  assert.equal(gate.state, "leader");
  assert.ok(gate.leaderSince !== null);
  await gate.gain(); // already leading: nothing new
  await gate.lose("lease lost");
  assert.equal(gate.state, "follower");
  assert.equal(gate.leaderSince, null);
  await gate.gain();
  assert.deepEqual(log, [
    "start liveness 1",
    "start watcher 1",
    "start gc 1",
    "stop liveness 1",
    "stop watcher 1",
    "stop gc 1",
    "start liveness 2",
    "start watcher 2",
    "start gc 2",
  ]);
  assert.deepEqual(states, ["starting", "leader", "stopping", "follower", "starting", "leader"]);
});

test("a loss asked for before a queued start runs cancels it; close never restarts", async () => {
  const { log, build } = recorder();
  const gate = new LeaderGate(build, nullLogger);
  const gaining = gate.gain();
  const losing = gate.lose("lease lost");
  await Promise.all([gaining, losing]);
  assert.equal(gate.state, "follower");
  assert.deepEqual(log, [], "the term ended before its start ran: nothing started");
  await gate.close("server stopping");
  await gate.gain();
  assert.equal(gate.state, "follower", "a closed gate never starts loops again");
  assert.equal(log.length, 0);
});

/** Resolves once `cond()` holds (polled), or fails after `ms`. */
async function until(cond: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 2));
  }
}

test("lose during an unfinished start aborts it at once; the loops that started are stopped", async () => {
  const log: string[] = [];
  let sawAbort = false;
  const build = (): LeaderLoop[] => [
    {
      name: "liveness",
      start: () => void log.push("start liveness"),
      stop: async () => void log.push("stop liveness"),
    },
    {
      name: "blocked evals",
      // A start-up pass that only ends on its term's signal.
      start: (term) =>
        new Promise<void>((resolve) => {
          log.push("start blocked evals");
          term.signal.addEventListener("abort", () => {
            sawAbort = true;
            resolve();
          });
        }),
      stop: async () => void log.push("stop blocked evals"),
    },
    { name: "gc", start: () => void log.push("start gc"), stop: async () => void log.push("stop gc") },
  ];
  const gate = new LeaderGate(build, nullLogger);
  const gaining = gate.gain({ revision: "7" });
  await until(() => log.includes("start blocked evals"));
  assert.equal(gate.state, "starting");
  const losing = gate.lose("lease lost");
  assert.ok(sawAbort, "the term's signal aborts in lose() itself, not behind the start");
  await Promise.all([gaining, losing]);
  assert.equal(gate.state, "follower");
  assert.deepEqual(log, ["start liveness", "start blocked evals", "stop liveness", "stop blocked evals"]);
  await gate.close("server stopping");
});

test("the next term's gain does not wait for a start that ignores its signal; close waits for it", async () => {
  let release!: () => void;
  const stuck = new Promise<void>((r) => (release = r));
  let terms = 0;
  let stuckDone = false;
  const build = (): LeaderLoop[] => {
    const n = ++terms;
    return [
      {
        name: "slow start",
        // Term 1's start ignores its signal entirely; term 2's is instant.
        start: async () => {
          if (n === 1) {
            await stuck;
            stuckDone = true;
          }
        },
        stop: async () => undefined,
      },
    ];
  };
  const gate = new LeaderGate(build, nullLogger);
  void gate.gain({ revision: "1" });
  await until(() => gate.state === "starting");
  void gate.lose("lease lost");
  await gate.gain({ revision: "2" });
  assert.equal(gate.state, "leader", "term 2 runs its loops while term 1's start is still stuck");
  assert.equal(stuckDone, false);
  let closed = false;
  const closing = gate.close("server stopping").then(() => (closed = true));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(closed, false, "close waits for the start its term left running");
  release();
  await closing;
  assert.ok(stuckDone);
});

test("a loop's work is fenced by its term: refused once the term ended or went stale, never before", async () => {
  let stale: string | undefined;
  const seen: (string | undefined)[] = [];
  let tick!: () => void;
  let next = new Promise<void>((r) => (tick = r));
  const build = (): LeaderLoop[] => [
    {
      name: "caller",
      // A loop that checks, before each of its sends, what the fence says (as NodeConnections.call does).
      start: () => {
        void (async () => {
          for (;;) {
            await next;
            next = new Promise<void>((r) => (tick = r));
            seen.push(fenceRefusal());
          }
        })();
      },
      stop: async () => undefined,
    },
  ];
  const gate = new LeaderGate(build, nullLogger);
  await gate.gain({ revision: "9", refusal: () => stale });
  const step = async () => {
    tick();
    await new Promise((r) => setTimeout(r, 5));
  };
  await step();
  assert.equal(seen[0], undefined, "a live term sends");
  stale = "this server's etcd lease was last confirmed 9000 ms ago";
  await step();
  assert.match(seen[1] ?? "", /9000 ms/, "a stale session refuses before the election notices");
  stale = undefined;
  await gate.lose("lease lost");
  await step();
  assert.match(seen[2] ?? "", /leader term 9 ended/, "a term that ended refuses at once");
  assert.equal(fenceRefusal(), undefined, "work outside any term is not fenced");
  await gate.close("server stopping");
});
