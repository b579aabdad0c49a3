/**
 * Who an exec task runs as, on the real exec driver and task runner: `nobody` when the job names
 * no user (so nothing in a job gets root on the node by default, as Nomad's exec), the agent's user
 * for a privileged (CSI plugin) task, and a job's `user = "root"` refused by the node's user
 * denylist (client options `user.denylist` / `user.checked_drivers`, Nomad's defaults) before
 * anything starts, unless the operator allows it. `alloc exec` into a task runs as the task's user.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { TaskRunner } from "../../../src/client/allocrunner/taskrunner/task_runner.js";
import type { TaskHandle } from "../../../src/client/drivers/driver.js";
import { ExecDriver } from "../../../src/client/drivers/exec/exec_driver.js";
import { taskCommand } from "../../../src/client/rpc/task_process.js";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { makeTask, runnerConfig, tempDataDir } from "../../builders/task_runner.js";
import { type DriverFixture, makeFixture, waitForFile, withTimeout } from "./driver_fixtures.js";

const run = promisify(execFile);
const noRestart = { Attempts: 0, Interval: 60_000_000_000, Delay: 10_000_000, Mode: "fail" as const };

/** The uid of `name` on this host, as the driver looks it up. */
async function uidOf(name: string): Promise<number> {
  return Number((await run("id", ["-u", "--", name])).stdout.trim());
}

describe("exec driver: the user a task runs as", () => {
  let fx: DriverFixture;
  let dataDir: string;
  const driver = new ExecDriver({ pollMs: 50, cgroups: null });
  const started: TaskHandle[] = [];

  before(async () => {
    fx = await makeFixture("berth-exec-user-");
    dataDir = await tempDataDir("berth-exec-user-tr-");
  });

  after(async () => {
    for (const h of started) await driver.stop(h, 100).catch(() => undefined);
    const left = [...(await mountsUnder(fx.base)), ...(await mountsUnder(dataDir))];
    await fx.cleanup();
    await fs.rm(dataDir, { recursive: true, force: true });
    assert.deepEqual(left, [], "nothing may stay mounted under the test dirs");
  });

  it("a task that names no user runs as nobody: it cannot read /etc/shadow, it can write its own dirs and /alloc", async () => {
    const h = await driver.start(
      fx.cfg("/bin/sh", [
        "-c",
        "id -u > /local/uid; if cat /etc/shadow > /dev/null 2>&1; then echo read; else echo refused; fi > /local/shadow; echo s > /alloc/s; echo t > /tmp/t",
      ]),
    );
    started.push(h);
    assert.deepEqual(await withTimeout(driver.wait(h), 10_000, "task exit"), { exitCode: 0, signal: null });
    const local = fx.allocDir.taskLocalDir("web");
    assert.equal(Number(await fs.readFile(path.join(local, "uid"), "utf8")), await uidOf("nobody"));
    assert.equal((await fs.readFile(path.join(local, "shadow"), "utf8")).trim(), "refused");
    assert.equal(await fs.readFile(path.join(fx.allocDir.sharedDir, "s"), "utf8"), "s\n");
  });

  it("a privileged task (a CSI plugin) that names no user keeps the agent's user", async () => {
    const h = await driver.start(fx.cfg("/bin/sh", ["-c", "id -u > /local/uid-priv"], { privileged: true }));
    started.push(h);
    assert.equal((await withTimeout(driver.wait(h), 10_000, "task exit")).exitCode, 0);
    const uid = await fs.readFile(path.join(fx.allocDir.taskLocalDir("web"), "uid-priv"), "utf8");
    assert.equal(Number(uid), process.getuid!());
  });

  it("alloc exec into a task runs as the task's user, not the agent's root", async () => {
    const ready = path.join(fx.allocDir.taskLocalDir("web"), "ready");
    const h = await driver.start(fx.cfg("/bin/sh", ["-c", "touch /local/ready; exec sleep 30"]));
    started.push(h);
    await waitForFile(ready);
    const cmd = await taskCommand(h, fx.allocDir.taskDir("web"), ["id", "-u"]);
    const out = await run(cmd.file, cmd.args, { env: cmd.env });
    assert.equal(Number(out.stdout.trim()), await uidOf("nobody"));
    await driver.stop(h, 100);
  });

  it('a job\'s user = "root" is refused by the default denylist before the task starts, for good', async () => {
    const task = makeTask({
      Driver: "exec",
      User: "root",
      Config: { command: "/bin/sh", args: ["-c", "touch /local/ran"] },
      RestartPolicy: noRestart,
    });
    const cfg = runnerConfig(path.join(dataDir, "denied"), task, driver);
    const tr = new TaskRunner(cfg);
    await withTimeout(tr.run(), 30_000, "task runner");
    const st = tr.state();
    assert.equal(st.State, "dead");
    assert.equal(st.Failed, true);
    const why = st.Events.map(
      (e) => `${e.Type}: ${e.DisplayMessage ?? ""} ${JSON.stringify(e.Details)}`,
    ).join("\n");
    assert.match(why, /running as user \\?"root\\?" is disallowed/);
    assert.equal(
      st.Events.some((e) => e.Type === "Started"),
      false,
      "the task never started",
    );
    await assert.rejects(fs.access(path.join(cfg.allocDir.taskLocalDir("web"), "ran")));
  });

  it("a node whose operator empties the denylist lets a job run as root", async () => {
    const task = makeTask({
      Driver: "exec",
      User: "root",
      Config: { command: "/bin/sh", args: ["-c", "id -u > /local/uid"] },
      RestartPolicy: noRestart,
    });
    const cfg = runnerConfig(path.join(dataDir, "allowed"), task, driver, {
      taskUsers: { denylist: [], checkedDrivers: ["exec"] },
    });
    const tr = new TaskRunner(cfg);
    await withTimeout(tr.run(), 30_000, "task runner");
    assert.equal(tr.state().Failed, false, JSON.stringify(tr.state().Events));
    const uid = await fs.readFile(path.join(cfg.allocDir.taskLocalDir("web"), "uid"), "utf8");
    assert.equal(Number(uid), 0);
  });
});
