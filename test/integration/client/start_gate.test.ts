/**
 * The start gate (src/client/drivers/shared/start_gate.ts) of both process drivers, with real
 * processes: a task's command never runs before beforeRun returned; a failing beforeRun leaves
 * nothing running; an agent killed after persisting the handle but before "go" (a real child
 * process, SIGKILLed) leaves a process that never runs the command, which a new driver instance
 * does not recover and reports as `notStarted`; a task that was released is recovered; a link
 * planted where the started record goes is not followed.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import type { TaskDriver, TaskHandle } from "../../../src/client/drivers/driver.js";
import { ExecDriver } from "../../../src/client/drivers/exec/exec_driver.js";
import { RawExecDriver } from "../../../src/client/drivers/raw_exec/raw_exec_driver.js";
import { isSameLiveProcess } from "../../../src/client/drivers/shared/proc.js";
import { startedFileFor } from "../../../src/client/drivers/shared/start_gate.js";
import { type DriverFixture, makeFixture, waitForFile } from "./driver_fixtures.js";

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "held_start_child.js");

/** Runs the dying agent (held_start_child.ts) and returns the handle it persisted. */
async function startThenCrash(driver: string, fx: DriverFixture, marker: string): Promise<TaskHandle> {
  const cfgFile = path.join(fx.base, "cfg.json");
  const handleFile = path.join(fx.base, "handle.json");
  await fs.writeFile(cfgFile, JSON.stringify(fx.cfg("/bin/sh", ["-c", `touch ${marker}; exec sleep 30`])));
  const signal = await new Promise<string | null>((resolve) => {
    execFile(process.execPath, [CHILD, driver, cfgFile, handleFile], (err) =>
      resolve((err as { signal?: string } | null)?.signal ?? null),
    );
  });
  assert.equal(signal, "SIGKILL", "the agent died in beforeRun");
  return JSON.parse(await fs.readFile(handleFile, "utf8")) as TaskHandle;
}

for (const [name, make] of [
  ["raw_exec", () => new RawExecDriver({ pollMs: 20 })],
  ["exec", () => new ExecDriver({ pollMs: 20 })],
] as const) {
  describe(`${name} start gate`, () => {
    let fx: DriverFixture;
    const driver: TaskDriver = make();
    const started: TaskHandle[] = [];

    before(async () => {
      fx = await makeFixture(`berth-gate-${name}-`);
    });

    after(async () => {
      for (const h of started) await driver.stop(h, 100).catch(() => undefined);
      await fx.cleanup();
    });

    /**
     * A marker the task's command creates in its `local` dir (writable by the task's user: exec
     * runs it as nobody); in the task's view under exec (chrooted).
     */
    const marker = (file: string) => ({
      host: path.join(fx.allocDir.taskLocalDir("web"), file),
      task: name === "exec" ? `/local/${file}` : path.join(fx.allocDir.taskLocalDir("web"), file),
    });

    it("runs the command only after beforeRun returned, and a released task is recovered", async () => {
      const m = marker("ran-after");
      let seenBefore: boolean | null = null;
      const h = await driver.start(fx.cfg("/bin/sh", ["-c", `touch ${m.task}; exec sleep 30`]), async () => {
        // Give a command that was not held every chance to show.
        await new Promise((r) => setTimeout(r, 200));
        seenBefore = await fs.access(m.host).then(
          () => true,
          () => false,
        );
      });
      started.push(h);
      assert.equal(seenBefore, false, "the command had not run while beforeRun ran");
      await waitForFile(m.host);
      assert.equal(await make().recover(h), true, "a new driver instance recovers the released task");
      await driver.stop(h, 1000);
    });

    it("a beforeRun that throws fails the start and leaves nothing running", async () => {
      const m = marker("ran-throw");
      let held: TaskHandle | null = null;
      await assert.rejects(
        driver.start(fx.cfg("/bin/sh", ["-c", `touch ${m.task}; exec sleep 30`]), (h) => {
          held = h;
          throw new Error("the state DB is gone");
        }),
        /the state DB is gone/,
      );
      const h = held as TaskHandle | null;
      assert.ok(h);
      assert.equal(
        await isSameLiveProcess(h.pid, String(h.state.startTime)),
        false,
        "the held process is gone",
      );
      await assert.rejects(fs.access(m.host), "the command never ran");
    });

    it("a link planted where the started record goes is not followed: the task does not run", async () => {
      const m = marker("ran-link");
      const outside = path.join(fx.base, "outside");
      await fs.writeFile(outside, "untouched\n");
      const h = await driver.start(fx.cfg("/bin/sh", ["-c", `touch ${m.task}; exec sleep 30`]), async () => {
        await fs.symlink(outside, startedFileFor(fx.allocDir.taskDir("web")));
      });
      started.push(h);
      const result = await driver.wait(h);
      assert.equal(result.notStarted, true, JSON.stringify(result));
      assert.equal(await fs.readFile(outside, "utf8"), "untouched\n", "nothing written through the link");
      await assert.rejects(fs.access(m.host), "the command never ran");
      await fs.rm(startedFileFor(fx.allocDir.taskDir("web")));
    });

    it("an agent killed after persisting the handle, before go: the task never runs and is not recovered", async () => {
      const m = marker("ran-crash");
      const h = await startThenCrash(name, fx, m.task);
      const next = make();
      assert.equal(await next.recover(h), false, "a held process is not recovered");
      const result = await next.wait(h);
      assert.equal(result.notStarted, true, JSON.stringify(result));
      assert.equal(await isSameLiveProcess(h.pid, String(h.state.startTime)), false, "it is gone");
      await assert.rejects(fs.access(m.host), "the command never ran");
    });
  });
}
