/**
 * Regression: a task that exits at once, started while the agent's event loop is busy, must not
 * hang its start. (Node discards the stdio of an exited child that nobody listens to yet; the exec
 * driver once attached to its setup channel only after a few awaits, and lost the report.)
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { ExecDriver } from "../../../src/client/drivers/exec/exec_driver.js";
import { type DriverFixture, makeFixture, withTimeout } from "./driver_fixtures.js";

const fixtures: DriverFixture[] = [];

after(async () => {
  for (const fx of fixtures) {
    const left = await mountsUnder(fx.base);
    await fx.cleanup();
    assert.deepEqual(left, [], "nothing may stay mounted under the test dir");
  }
});

test("short tasks started under a busy event loop all start and finish", async () => {
  const driver = new ExecDriver({ pollMs: 50 });
  for (let i = 0; i < 8; i++) fixtures.push(await makeFixture("berth-exec-busy-", `t${i}`));
  // Block the loop 120 ms out of every 125 ms, as a loaded agent does, while the tasks start.
  const busy = setInterval(() => {
    const until = Date.now() + 120;
    while (Date.now() < until);
  }, 5);
  try {
    const handles = await withTimeout(
      Promise.all(fixtures.map((fx) => driver.start(fx.cfg("/bin/true", [])))),
      30_000,
      "every start to return",
    );
    const results = await withTimeout(Promise.all(handles.map((h) => driver.wait(h))), 30_000, "every exit");
    assert.deepEqual(
      results.map((r) => r.exitCode),
      handles.map(() => 0),
    );
  } finally {
    clearInterval(busy);
  }
});
