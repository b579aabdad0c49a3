/**
 * A task's `resources`, `kill_signal` and `user` from the job, through the task runner and the
 * real raw_exec driver on this host's real cgroups, to the task's events and `berth alloc status`.
 */
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { TaskRunner } from "../../../src/client/allocrunner/taskrunner/task_runner.js";
import { RawExecDriver } from "../../../src/client/drivers/raw_exec/raw_exec_driver.js";
import { CgroupManager } from "../../../src/client/drivers/shared/cgroups/manager.js";
import { allocStatus } from "../../../src/cli/commands/alloc_status.js";
import type { TaskState } from "../../../src/structs/alloc.js";
import { makeTask, runnerConfig, tempDataDir } from "../../builders/task_runner.js";
import { startFakeApi } from "../../fakes/api.js";
import { captureIO } from "../../fakes/command_io.js";
import { waitForFile, withTimeout } from "./driver_fixtures.js";

const manager = new CgroupManager({ parent: `berth-test-restr-${process.pid}` });
const noRestart = { Attempts: 0, Interval: 60_000_000_000, Delay: 10_000_000, Mode: "fail" as const };

describe("task runner: resources, kill_signal and user on real cgroups", () => {
  let dataDir: string;
  before(async () => {
    dataDir = await tempDataDir("berth-restr-");
    await fs.chmod(dataDir, 0o755);
  });
  after(async () => {
    try {
      for (const dir of await manager.parentDirs()) {
        const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
        await fs.rmdir(dir).catch(() => undefined);
        assert.deepEqual(
          entries.filter((e) => e.isDirectory()).map((e) => e.name),
          [],
          `cgroups left in ${dir}`,
        );
      }
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it("a task over its memory is OOM-killed; its Terminated event and alloc status say so", async () => {
    const task = makeTask({
      Driver: "raw_exec",
      Config: { command: process.execPath, args: ["-e", "Buffer.alloc(200 * 1024 * 1024, 1)"] },
      Resources: { CPU: 100, MemoryMB: 64 },
      RestartPolicy: noRestart,
    });
    const cfg = runnerConfig(path.join(dataDir, "oom"), task, new RawExecDriver({ cgroups: manager }));
    const tr = new TaskRunner(cfg);
    await withTimeout(tr.run(), 60_000, "task runner");
    const st: TaskState = tr.state();
    const term = st.Events.find((e) => e.Type === "Terminated");
    assert.ok(term, "a Terminated event");
    assert.equal(term.Details.oom_killed, "true");
    assert.equal(term.Details.exit_message, "OOM Killed");
    assert.equal(term.Details.exit_code, "137");
    assert.equal(st.Failed, true);

    const alloc = { ...cfg.alloc, ClientStatus: "failed" as const, TaskStates: { web: st } };
    const api = await startFakeApi({ [`GET /v1/allocation/${alloc.ID}`]: { json: alloc } });
    try {
      const io = captureIO(api.address);
      assert.equal(await allocStatus.run(allocStatus.parse([alloc.ID]), io), 0);
      const line = io.out.find((l) => l.includes("Terminated"));
      assert.match(line ?? "", /Terminated\s+Exit Code: 137, Signal: SIGKILL, Exit Message: "OOM Killed"$/);
    } finally {
      await api.close();
    }
  });

  it("kill_signal and user reach the task: it runs as nobody and is stopped with SIGINT", async () => {
    const script = `id -u > local/uid; trap 'echo INT > local/got; exit 0' INT; trap 'echo TERM > local/got; exit 0' TERM
      : > local/ready; while :; do sleep 0.05; done`;
    const task = makeTask({
      Driver: "raw_exec",
      Config: { command: "/bin/sh", args: ["-c", script] },
      KillSignal: "SIGINT",
      User: "nobody",
      RestartPolicy: noRestart,
    });
    const cfg = runnerConfig(path.join(dataDir, "sig"), task, new RawExecDriver({ cgroups: manager }));
    const tr = new TaskRunner(cfg);
    const done = tr.run();
    const local = cfg.allocDir.taskLocalDir("web");
    await waitForFile(path.join(local, "ready"), 20_000);
    await withTimeout(tr.kill("test stop"), 30_000, "kill");
    await done;
    assert.equal((await fs.readFile(path.join(local, "uid"), "utf8")).trim(), "65534");
    assert.equal((await fs.readFile(path.join(local, "got"), "utf8")).trim(), "INT");
    const term = tr.state().Events.find((e) => e.Type === "Terminated");
    assert.equal(term?.Details.oom_killed, "false");
  });
});
