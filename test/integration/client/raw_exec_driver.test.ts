import assert from "node:assert/strict";
import fs from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { TaskHandle } from "../../../src/client/drivers/driver.js";
import { RawExecDriver } from "../../../src/client/drivers/raw_exec/raw_exec_driver.js";
import { type DriverFixture, makeFixture, waitForFile } from "./driver_fixtures.js";

describe("raw_exec driver", () => {
  let fx: DriverFixture;
  const driver = new RawExecDriver({ pollMs: 50 });
  const started: TaskHandle[] = [];

  before(async () => {
    fx = await makeFixture("berth-rawexec-");
  });

  after(async () => {
    for (const h of started) await driver.stop(h, 100).catch(() => undefined);
    await fx.cleanup();
  });

  it("runs on the host in the task dir with the given env and args, logging to files", async () => {
    const h = await driver.start(fx.cfg("/bin/sh", ["-c", 'echo "$FOO $1 $(pwd)"; exit 4', "sh", "x"]));
    started.push(h);
    assert.deepEqual(await driver.wait(h), { exitCode: 4, signal: null });
    assert.equal(await fx.readStdout(), `bar x ${fx.allocDir.taskDir("web")}\n`);
    assert.equal((await driver.fingerprint()).SupportsMounts, false);
    assert.equal(driver.capabilities().supportsMounts, false);
  });

  it("stops and recovers like exec", async () => {
    const ready = path.join(fx.allocDir.taskDir("web"), "ready");
    const h = await driver.start(fx.cfg("/bin/sh", ["-c", `touch ${ready}; exec sleep 30`]));
    started.push(h);
    await waitForFile(ready);
    const other = new RawExecDriver({ pollMs: 50 });
    assert.equal(await other.recover(h), true);
    const waited = other.wait(h);
    await other.stop(h, 5000);
    assert.deepEqual(await waited, { exitCode: 143, signal: "SIGTERM" });
    assert.deepEqual(await driver.wait(h), { exitCode: 143, signal: "SIGTERM" });
    await fs.rm(ready);
  });

  it("refuses mounts with a message that names the task and points at exec", async () => {
    await assert.rejects(
      driver.start(
        fx.cfg("/bin/true", [], {
          mounts: [{ hostPath: fx.base, taskPath: "/data", readOnly: false, propagation: "private" }],
        }),
      ),
      {
        code: "ERR_DRIVER",
        message: 'task "web": driver raw_exec does not support volume mounts; use the exec driver',
      },
    );
  });
});
