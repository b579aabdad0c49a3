/** The leader gate: loops start in order on gain, stop in order on loss, one transition at a time. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { LeaderGate, type LeaderLoop } from "../../../src/server/leader/gate.js";
import { nullLogger } from "../../../src/internal/log.js";

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

test("a loss asked for during a start waits for it, then stops all it started; close never restarts", async () => {
  const { log, build } = recorder();
  const gate = new LeaderGate(build, nullLogger);
  const gaining = gate.gain();
  const losing = gate.lose("lease lost");
  await Promise.all([gaining, losing]);
  assert.equal(gate.state, "follower");
  assert.deepEqual(log.slice(3), ["stop liveness 1", "stop watcher 1", "stop gc 1"]);
  await gate.close("server stopping");
  await gate.gain();
  assert.equal(gate.state, "follower", "a closed gate never starts loops again");
  assert.equal(log.length, 6);
});
