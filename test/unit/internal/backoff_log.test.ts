import assert from "node:assert/strict";
import { test } from "node:test";
import { backoffDelay, retryWithBackoff } from "../../../src/internal/backoff.js";
import { createLogger } from "../../../src/internal/log.js";

test("backoff doubles from the base and stops at the cap", () => {
  assert.deepEqual(
    [0, 1, 2, 3, 10].map((n) => backoffDelay(n, 1000, 60_000, 0)),
    [1000, 2000, 4000, 8000, 60_000],
  );
});

test("retryWithBackoff retries only what shouldRetry allows, within the deadline", async () => {
  let calls = 0;
  const ok = await retryWithBackoff(
    async () => {
      calls++;
      if (calls < 3) throw new Error("transient");
      return "done";
    },
    { baseMs: 1, maxMs: 2, deadlineMs: 1000, jitter: 0, shouldRetry: () => true },
  );
  assert.equal(ok, "done");
  assert.equal(calls, 3);

  calls = 0;
  await assert.rejects(
    retryWithBackoff(
      async () => {
        calls++;
        throw new Error("permanent");
      },
      { baseMs: 1, maxMs: 2, deadlineMs: 1000, shouldRetry: () => false },
    ),
    /permanent/,
  );
  assert.equal(calls, 1, "a non-retryable error is not retried");

  const ac = new AbortController();
  setTimeout(() => ac.abort(), 20);
  await assert.rejects(
    retryWithBackoff(
      async () => {
        throw new Error("again");
      },
      { baseMs: 5, maxMs: 5, deadlineMs: Infinity, signal: ac.signal, shouldRetry: () => true },
    ),
  );
});

test("the logger redacts secrets by key, at the top level and nested", () => {
  const lines: string[] = [];
  const log = createLogger({ level: "debug", sink: { write: (l) => lines.push(l) } });
  log.info("creating volume", {
    secrets: { password: "hunter2" },
    request: { Secrets: { token: "s3cr3t" }, MountOptions: { MountFlags: ["password=p4ss"] }, name: "demo" },
  });
  const out = lines.join("\n");
  for (const secret of ["hunter2", "s3cr3t", "p4ss"]) assert.ok(!out.includes(secret), `${secret} leaked`);
  assert.match(out, /demo/);
});
