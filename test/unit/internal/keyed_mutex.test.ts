import { test } from "node:test";
import assert from "node:assert/strict";
import { KeyedMutex } from "../../../src/internal/keyed_mutex.js";

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("keyed mutex: one key runs in order, different keys in parallel", async () => {
  const m = new KeyedMutex();
  const log: string[] = [];
  const job = (key: string, name: string, ms: number) =>
    m.run(key, async () => {
      log.push(`start ${name}`);
      await tick(ms);
      log.push(`end ${name}`);
    });
  await Promise.all([job("v1", "a", 30), job("v1", "b", 1), job("v2", "c", 1)]);
  assert.ok(log.indexOf("end a") < log.indexOf("start b"), "same key serialised");
  assert.ok(log.indexOf("end c") < log.indexOf("end a"), "other key not blocked");
  assert.equal(m.size, 0);
});

test("keyed mutex: busyKeys lists keys with a holder or waiters, idle keys are dropped", async () => {
  const m = new KeyedMutex();
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const a = m.run("v1", () => gate);
  const b = m.run("v1", async () => undefined);
  const c = m.run("v2", () => gate);
  assert.deepEqual(m.busyKeys.sort(), ["v1", "v2"]);
  assert.equal(m.size, 2);
  open();
  await Promise.all([a, b, c]);
  assert.deepEqual(m.busyKeys, []);
});

test("keyed mutex: a waiter whose signal aborts leaves the queue; the rest keep their order", async () => {
  const m = new KeyedMutex();
  const log: string[] = [];
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const first = m.run("v1", async () => {
    await gate;
    log.push("first");
  });
  const ac = new AbortController();
  const aborted = m.run(
    "v1",
    async () => {
      log.push("aborted ran");
    },
    ac.signal,
  );
  const third = m.run("v1", async () => {
    log.push("third");
  });
  ac.abort();
  await assert.rejects(aborted);
  assert.deepEqual(log, [], "the holder still holds the key");
  open();
  await Promise.all([first, third]);
  assert.deepEqual(log, ["first", "third"]);
  assert.equal(m.size, 0);
});

test("keyed mutex: an already-aborted signal rejects without running fn", async () => {
  const m = new KeyedMutex();
  const ac = new AbortController();
  ac.abort();
  let ran = false;
  await assert.rejects(
    m.run(
      "v1",
      async () => {
        ran = true;
      },
      ac.signal,
    ),
  );
  assert.equal(ran, false);
  assert.equal(m.size, 0);
});

test("keyed mutex: a failing holder releases the key for the next", async () => {
  const m = new KeyedMutex();
  await assert.rejects(
    m.run("v1", () => Promise.reject(new Error("boom"))),
    /boom/,
  );
  assert.equal(await m.run("v1", async () => 7), 7);
  assert.equal(m.size, 0);
});
