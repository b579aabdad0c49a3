/**
 * The raw_exec driver as the agent config sets it: disabled, it fingerprints as Nomad's disabled
 * driver (not detected, "disabled") and refuses to start a task, running nothing; a task it started
 * while enabled is still recovered and stopped after a restart with the driver disabled, so nothing
 * is orphaned.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { RawExecDriver } from "../../../src/client/drivers/raw_exec/raw_exec_driver.js";
import { type DriverFixture, makeFixture, waitForFile } from "../client/driver_fixtures.js";

describe("raw_exec enabled by the agent config only", () => {
  let fx: DriverFixture;

  before(async () => {
    fx = await makeFixture("berth-rawexec-cfg-");
  });

  after(async () => {
    await fx.cleanup();
  });

  it("disabled: not detected, and start() runs nothing", async () => {
    const off = new RawExecDriver({ pollMs: 50, enabled: false });
    assert.deepEqual(await off.fingerprint(), {
      Detected: false,
      Healthy: false,
      HealthDescription: "disabled",
      SupportsMounts: false,
    });
    const marker = path.join(fx.base, "ran");
    await assert.rejects(off.start(fx.cfg("/bin/sh", ["-c", `touch ${marker}`])), {
      code: "ERR_DRIVER",
      message: "raw_exec is disabled",
    });
    assert.equal(fs.existsSync(marker), false, "the command never ran");
    const on = new RawExecDriver({ pollMs: 50, enabled: true });
    assert.equal((await on.fingerprint()).Detected, true);
  });

  it("a task started while enabled is recovered and stopped with the driver disabled", async () => {
    const ready = path.join(fx.allocDir.taskDir("web"), "ready");
    const on = new RawExecDriver({ pollMs: 50, enabled: true });
    const h = await on.start(fx.cfg("/bin/sh", ["-c", `touch ${ready}; exec sleep 30`]));
    try {
      await waitForFile(ready);
      const off = new RawExecDriver({ pollMs: 50, enabled: false });
      assert.equal(await off.recover(h), true);
      const waited = off.wait(h);
      await off.stop(h, 5000);
      assert.deepEqual(await waited, { exitCode: 143, signal: "SIGTERM" });
    } finally {
      await on.stop(h, 1000).catch(() => undefined);
    }
  });
});
