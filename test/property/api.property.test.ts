/**
 * The property-based suite over the HTTP API (issue 10's first acceptance item). fast-check
 * generates requests over every /v1 route from the API's own types and mutates them
 * (arb_requests.ts); for every one of them:
 *   - the answer is never a 5xx;
 *   - the server is still healthy: it answers GET /v1/jobs, and neither a route nor a background
 *     loop logged an error;
 *   - a 4xx (and any GET) leaves the stored state identical: a dump of every table of the SQLite
 *     file (indexes included) before and after is the same;
 *   - no answer contains a secret value the bodies carry;
 * and after the run the server restarts cleanly on the same data dir and answers /v1/jobs.
 * The seed is printed; `BERTH_FUZZ_SEED=<seed>` replays a run, `BERTH_FUZZ_RUNS=<n>` sets its length.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { request, showRequest } from "./arb_requests.js";
import { FuzzTarget } from "./harness.js";
import { SECRET_VALUES } from "./arb_bodies.js";
import { dumpDiff } from "./store_dump.js";

const seed = process.env.BERTH_FUZZ_SEED ? Number(process.env.BERTH_FUZZ_SEED) : Date.now() % 2 ** 31;
const numRuns = Number(process.env.BERTH_FUZZ_RUNS ?? 2000);

const show = showRequest;

test("HTTP API property: no 5xx, a healthy server, a 4xx changes nothing, a clean restart", async () => {
  console.log(`property seed: ${seed} runs: ${numRuns} (replay with BERTH_FUZZ_SEED=${seed})`);
  const target = new FuzzTarget();
  const statuses = new Map<number, number>();
  let cases = 0;
  const timing = { send: 0, settle: 0, dump: 0, send2xx: 0, health: 0 };
  try {
    await target.start();
    await target.settle();
    let state = target.store.dump();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const errorsBefore = target.errors.length;
        // The state as of the last case (a settled state: see below) is this case's "before".
        const before = state;
        // BERTH_FUZZ_TRACE=1 prints each request before it is sent: the last line names the culprit
        // of a hang that stops the process (an in-process server shares the test's event loop).
        if (process.env.BERTH_FUZZ_TRACE) console.log(`→ ${show(r)}`);
        const t0 = performance.now();
        const res = await target.send(r);
        const ms = performance.now() - t0;
        timing.send += ms;
        if (ms > 500) console.log(`slow ${Math.round(ms)} ms: ${res.status} ${show(r).slice(0, 200)}`);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        for (const secret of SECRET_VALUES)
          assert.ok(!res.text.includes(secret), `a secret answered for ${show(r)}`);
        assert.ok(
          res.status < 500,
          `${res.status} ${res.code ?? ""}: ${res.text.slice(0, 300)}\n  for ${show(r)}`,
        );
        // Every write that succeeded, and every 20th case, checks that the API still answers (a hung
        // or broken server would also fail the next case's request).
        if (++cases % 20 === 0 || (res.status < 300 && r.method !== "GET")) {
          const h0 = performance.now();
          const health = await target.send({ method: "GET", url: "/v1/jobs?namespace=*", headers: {} });
          timing.health += performance.now() - h0;
          assert.equal(health.status, 200, `GET /v1/jobs after ${show(r)}: ${health.text}`);
        }
        if (res.status < 300 && r.method !== "GET") {
          // A write may set off background work (the retry of blocked jobs, the drainer): wait for
          // it, so the next case starts from a state nothing else is about to change.
          const s0 = performance.now();
          await target.settle();
          timing.settle += performance.now() - s0;
        }
        const d0 = performance.now();
        state = target.store.dump();
        timing.dump += performance.now() - d0;
        if (res.status < 300) timing.send2xx += ms;
        if (res.status >= 400 || r.method === "GET") {
          assert.ok(
            before === state,
            `${res.status} ${res.code ?? ""} "${res.text.trim().slice(0, 200)}" changed the state:\n` +
              `${dumpDiff(before, state)}\n  for ${show(r)}`,
          );
        }
        assert.deepEqual(target.errors.slice(errorsBefore), [], `errors logged after ${show(r)}`);
      }),
      { seed, numRuns, includeErrorInReport: true },
    );
    console.log(`ms: ${JSON.stringify(timing)}`);
    console.log(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
  } finally {
    await target.stop();
  }

  // The state the run left behind loads: a second server starts on it and answers.
  const again = await target.restart();
  try {
    const res = await fetch(`${again.httpAddress}/v1/jobs?namespace=*`);
    assert.equal(res.status, 200, await res.text());
    await res.arrayBuffer().catch(() => undefined);
  } finally {
    await again.stop();
  }
  assert.deepEqual(target.errors, [], "no error logged by the run or the restart");
});
