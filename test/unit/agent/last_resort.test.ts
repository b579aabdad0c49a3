/**
 * The agent's process-level 'unhandledRejection' guard logs a stray rejection at error as a bug
 * instead of exiting. It is a last resort: background work is tracked where it starts (see
 * test/unit/client/alloc_sync.test.ts, which asserts no rejection reaches the process at all).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { installLastResortGuard } from "../../../src/agent/last_resort.js";
import type { Logger } from "../../../src/internal/log.js";

test("the guard logs a stray rejection at error and can be removed", () => {
  const errors: string[] = [];
  const log = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (msg: string) => errors.push(msg),
    child: () => log,
  } as Logger;
  const proc = new EventEmitter();
  const remove = installLastResortGuard(log, proc as unknown as NodeJS.Process);
  proc.emit("unhandledRejection", new Error("stray"), Promise.resolve());
  assert.equal(errors.length, 1);
  assert.match(errors[0] ?? "", /unhandled promise rejection \(a bug/);
  remove();
  assert.equal(proc.listenerCount("unhandledRejection"), 0);
});

test("berth agent installs the guard before it starts anything", () => {
  const src = readFileSync(new URL("../../../../src/agent/main.ts", import.meta.url), "utf8");
  const guard = src.indexOf("installLastResortGuard(log)");
  assert.ok(guard > 0, "agent/main.ts installs the guard");
  assert.ok(guard < src.indexOf("new Agent("), "before the agent is made");
});
