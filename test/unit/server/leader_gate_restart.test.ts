/**
 * LeaderGate.restart (a snapshot restore replaced the state under the leader's loops): the term's
 * loops stop and fresh ones start on the same election term (its revision and refusal kept), the
 * old term's signal aborts; a gate that does not lead restarts nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { LeaderGate, type LeaderTerm } from "../../../src/server/leader/gate.js";
import { nullLogger } from "../../../src/internal/log.js";

test("restart ends the term's loops and starts fresh ones on the same election term", async () => {
  const log: string[] = [];
  const terms: LeaderTerm[] = [];
  let built = 0;
  const gate = new LeaderGate((term) => {
    const n = ++built;
    terms.push(term);
    return [
      {
        name: "watcher",
        start: () => void log.push(`start ${n}`),
        stop: async () => void log.push(`stop ${n}`),
      },
    ];
  }, nullLogger);

  await gate.restart("nothing to restart"); // a follower: no term, nothing happens
  assert.deepEqual(log, []);
  const refusal = () => undefined;
  await gate.gain({ revision: "42", refusal });
  await gate.restart("state restored from a snapshot");
  assert.equal(gate.state, "leader");
  assert.deepEqual(log, ["start 1", "stop 1", "start 2"]);
  assert.equal(terms[0]!.signal.aborted, true, "the old term ended");
  assert.equal(terms[1]!.signal.aborted, false);
  assert.equal(terms[1]!.revision, "42", "the same election term");
  await gate.lose("lease lost");
  assert.equal(terms[1]!.signal.aborted, true);
  await gate.restart("after losing: nothing");
  assert.deepEqual(log, ["start 1", "stop 1", "start 2", "stop 2"]);
});
