/**
 * internal/abort.ts anySignal: its timeout fires even when nothing but a listener holds the result
 * and the garbage collector runs meanwhile (Node 20's AbortSignal.any holds its sources weakly, so
 * an AbortSignal.timeout among them was collected and never fired).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import v8 from "node:v8";
import vm from "node:vm";
import { anySignal, isAbortError } from "../../../src/internal/abort.js";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("a timeout fires through garbage collections; its reason is a TimeoutError", async () => {
  const N = 500;
  const sources: AbortController[] = [];
  const reasons: unknown[] = [];
  for (let i = 0; i < N; i++) {
    const source = new AbortController();
    sources.push(source);
    anySignal([source.signal], 100).addEventListener("abort", (e) =>
      reasons.push((e.target as AbortSignal).reason),
    );
  }
  for (let k = 0; k < 5; k++) {
    await sleep(10);
    gc();
  }
  await sleep(400);
  assert.equal(reasons.length, N, "every wait ended");
  assert.ok(reasons.every((r) => isAbortError(r) && (r as Error).name === "TimeoutError"));
  assert.equal(sources.length, N);
});

test("an input's abort ends it before the timeout, with that input's reason", async () => {
  const source = new AbortController();
  const s = anySignal([source.signal, undefined], 60_000);
  source.abort(new Error("stopped"));
  assert.equal(s.aborted, true);
  assert.equal((s.reason as Error).message, "stopped");
  const already = anySignal([AbortSignal.abort("gone")], 60_000);
  assert.equal(already.reason, "gone");
  const plain = anySignal([new AbortController().signal]);
  assert.equal(plain.aborted, false);
});
