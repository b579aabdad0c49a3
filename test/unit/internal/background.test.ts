/** BackgroundTasks: failures logged and surfaced, never rejected; drain/close wait for everything. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { BackgroundTasks } from "../../../src/internal/background.js";
import type { Logger } from "../../../src/internal/log.js";

function recordingLog(): Logger & { errors: string[] } {
  const errors: string[] = [];
  const log = {
    errors,
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (msg: string, fields: Record<string, unknown> = {}) =>
      errors.push(`${msg} ${String(fields.task)}`),
    child: () => log,
  };
  return log;
}

test("a failing task is logged with its name and handed to onError", async () => {
  const log = recordingLog();
  const tasks = new BackgroundTasks(log);
  const seen: unknown[] = [];
  tasks.run(
    "boom",
    () => Promise.reject(new Error("x")),
    (err) => seen.push(err),
  );
  tasks.run("sync throw", () => {
    throw new Error("y");
  });
  tasks.run(
    "bad surface",
    () => Promise.reject(new Error("z")),
    () => {
      throw new Error("surface failed");
    },
  );
  await tasks.drain();
  assert.equal((seen[0] as Error).message, "x");
  assert.deepEqual(log.errors.sort(), [
    "background task failed bad surface",
    "background task failed boom",
    "background task failed sync throw",
    "reporting a background task's failure failed bad surface",
  ]);
  assert.equal(tasks.size, 0);
});

test("drain waits for tasks started while it waits; after close nothing starts", async () => {
  const tasks = new BackgroundTasks(recordingLog());
  const order: string[] = [];
  tasks.run("first", async () => {
    await new Promise((r) => setTimeout(r, 10));
    order.push("first");
    tasks.run("second", async () => {
      await new Promise((r) => setTimeout(r, 10));
      order.push("second");
    });
  });
  await tasks.drain();
  assert.deepEqual(order, ["first", "second"]);
  await tasks.close();
  assert.equal(
    tasks.run("late", async () => order.push("late")),
    false,
  );
  await tasks.drain();
  assert.deepEqual(order, ["first", "second"], "a task run after close() never starts");
});
