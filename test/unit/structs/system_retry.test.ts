/** The back-off of a system slot whose allocs keep failing (structs/system_retry.ts), pure. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  failureStreak,
  SYSTEM_RETRY_RESET_NS,
  systemRetryDelay,
  systemRetryTime,
} from "../../../src/structs/system_retry.js";

const S = 1e9;
type A = Parameters<typeof failureStreak>[0];
function chain(...specs: Partial<A>[]): Map<string, A> {
  const out = new Map<string, A>();
  specs.forEach((spec, i) => {
    const a: A = {
      ID: `a${i}`,
      NodeID: "n1",
      Name: "s.g[0]",
      ClientStatus: "failed",
      CreateTime: i * 10 * S,
      ModifyTime: i * 10 * S + S,
      PreviousAllocation: i === 0 ? "" : `a${i - 1}`,
      Job: { Version: 0 },
      ...spec,
    };
    out.set(a.ID, a);
  });
  return out;
}
const last = (m: Map<string, A>) => [...m.values()].at(-1)!;

test("delays: the first failure at once, then 5 s doubling to a 5 min cap", () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 5000].map((n) => systemRetryDelay(n) / S),
    [0, 0, 5, 10, 20, 40, 80, 160, 300, 300, 300, 300],
  );
});

test("the streak counts consecutive failures of the same slot and version", () => {
  assert.equal(failureStreak(last(chain({}, {}, {}, {})), chain({}, {}, {}, {})), 4);
  const m = chain({}, { ClientStatus: "complete" }, {}, {});
  assert.equal(failureStreak(last(m), m), 2, "a completed alloc ends the streak");
  const v = chain({}, {}, { Job: { Version: 1 } }, { Job: { Version: 1 } });
  assert.equal(failureStreak(last(v), v), 2, "a new job version starts afresh");
  const other = chain({}, { NodeID: "n2" }, {}, {});
  assert.equal(failureStreak(last(other), other), 2, "another node's alloc is not this slot's");
  const long = chain({}, {}, { ModifyTime: 20 * S + SYSTEM_RETRY_RESET_NS }, {});
  assert.equal(failureStreak(last(long), long), 2, "an alloc that ran long ends the streak after it");
  const gone = chain({}, {}, {});
  gone.delete("a0");
  assert.equal(failureStreak(last(gone), gone), 2, "a collected alloc ends the chain");
  const loop = chain({ PreviousAllocation: "a1" }, {});
  assert.equal(failureStreak(last(loop), loop), 2, "a link cycle ends");
  assert.equal(failureStreak({ ...last(m), ClientStatus: "running" }, m), 0);
});

test("the time: the failed alloc's end plus its streak's delay", () => {
  const m = chain({}, {}, {});
  assert.equal(systemRetryTime(last(m), m), last(m).ModifyTime + 10 * S);
});
