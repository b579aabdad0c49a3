/**
 * ExecDriver.refreshMount with real namespaces: a "plugin dir" that is a shared self-bind holds a
 * "publish target" T with volume A bound on it; an exec task mounts T. The host then loses T and
 * binds another dir B there (a plugin publishing again); the task keeps A until refreshMount binds
 * the new mount in its own namespace, read-only where the mount is. Refusals: a destination through
 * a symlink, a new mount that never reached the task's namespace, a handle without a task root.
 */
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import type { TaskHandle, TaskMount } from "../../../src/client/drivers/driver.js";
import { ExecDriver } from "../../../src/client/drivers/exec/exec_driver.js";
import { sleep } from "../../../src/internal/abort.js";
import { type DriverFixture, makeFixture, run, waitForFile, withTimeout } from "./driver_fixtures.js";

/** Polls `read` until it returns `want` (or times out with what it last saw). */
async function until(what: string, read: () => Promise<string>, want: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const last = await read().catch((err: Error) => `<${err.message}>`);
    if (last === want) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: saw ${JSON.stringify(last)}`);
    await sleep(25);
  }
}

describe("exec driver: refreshing a volume mount in a running task", () => {
  let fx: DriverFixture;
  let plug: string;
  let target: string;
  let volA: string;
  let volB: string;
  const driver = new ExecDriver({ pollMs: 50 });
  const started: TaskHandle[] = [];

  before(async () => {
    fx = await makeFixture("berth-exec-refresh-");
    plug = path.join(fx.base, "plugin");
    target = path.join(plug, "per-alloc", "a1", "vol", "rw");
    volA = path.join(fx.base, "volA");
    volB = path.join(fx.base, "volB");
    await fs.mkdir(target, { recursive: true });
    await fs.mkdir(volA);
    await fs.mkdir(volB);
    await fs.writeFile(path.join(volA, "f"), "A\n");
    await fs.writeFile(path.join(volB, "f"), "B\n");
    await run("mount", ["--bind", plug, plug]);
    await run("mount", ["--make-shared", plug]);
  });

  after(async () => {
    for (const h of started) await driver.stop(h, 100).catch(() => undefined);
    await run("umount", ["-R", "-l", plug]).catch(() => undefined);
    const left = await mountsUnder(fx.base);
    await fx.cleanup();
    assert.deepEqual(left, [], "nothing may stay mounted under the test dir");
  });

  /** Starts a task that writes what it sees at /data/f and /ro/f to /alloc every 50 ms. */
  async function startWatcher(mounts: TaskMount[]): Promise<TaskHandle> {
    const ready = path.join(fx.allocDir.sharedDir, "seen-data");
    await fs.rm(ready, { force: true });
    const loop = [
      "while :; do",
      "cat /data/f > /alloc/.d 2>&1; mv /alloc/.d /alloc/seen-data;",
      "cat /ro/f > /alloc/.r 2>&1; mv /alloc/.r /alloc/seen-ro;",
      "sleep 0.05; done",
    ].join(" ");
    const h = await driver.start(fx.cfg("/bin/sh", ["-c", loop], { mounts }));
    started.push(h);
    await waitForFile(ready);
    return h;
  }

  const seen = (which: string) => () =>
    fs.readFile(path.join(fx.allocDir.sharedDir, `seen-${which}`), "utf8");

  it("binds the new mount at the task's destinations, read-only where the mount is, without a restart", async () => {
    await run("mount", ["--bind", volA, target]);
    const rw: TaskMount = { hostPath: target, taskPath: "/data", readOnly: false, propagation: "private" };
    const ro: TaskMount = { hostPath: target, taskPath: "/ro", readOnly: true, propagation: "private" };
    const h = await startWatcher([rw, ro]);
    assert.equal(typeof h.state.taskRoot, "string", "the handle records the task root");
    const root = h.state.taskRoot as string;
    await until("the task to see A", seen("data"), "A\n");

    // The plugin lost the mount and published again: on the host T now holds B.
    await run("umount", [target]);
    await run("mount", ["--bind", volB, target]);
    await sleep(200);
    assert.equal(await seen("data")(), "A\n", "the task still has its private copy of the old mount");

    // A restarted agent refreshes through the handle it persisted.
    const recovered = new ExecDriver({ pollMs: 50 });
    const persisted = JSON.parse(JSON.stringify(h)) as TaskHandle;
    await withTimeout(recovered.refreshMount(persisted, rw), 10_000, "refresh /data");
    await withTimeout(driver.refreshMount(h, ro), 10_000, "refresh /ro");
    await until("the task to see B at /data", seen("data"), "B\n");
    await until("the task to see B at /ro", seen("ro"), "B\n");

    // Seen from the host through the task's namespace: writable where rw, refused where ro.
    const inTask = (p: string) => `/proc/${h.pid}/root${root}${p}`;
    await fs.writeFile(inTask("/data/w"), "from task ns\n");
    assert.equal(await fs.readFile(path.join(volB, "w"), "utf8"), "from task ns\n");
    await assert.rejects(fs.writeFile(inTask("/ro/x"), "no"), { code: "EROFS" });
    const info = await fs.readFile(`/proc/${h.pid}/mountinfo`, "utf8");
    const at = (p: string) => info.split("\n").filter((l) => l.split(" ")[4] === `${root}${p}`);
    assert.equal(
      at("/data").length,
      1,
      `one mount at /data, the stale one is gone:\n${at("/data").join("\n")}`,
    );
    assert.equal(at("/ro").length, 1, `one mount at /ro:\n${at("/ro").join("\n")}`);
    assert.match(at("/ro")[0]!, /^\S+ \S+ \S+ \S+ \S+ ro[, ]/, "the /ro mount is read-only");
    assert.deepEqual(await mountsUnder(fx.allocDir.root), [], "nothing of the task shows on the host");

    await withTimeout(driver.stop(h, 2000), 10_000, "stop");
    await run("umount", [target]);
  });

  it("refuses a destination that resolves through a symlink, a mount that did not reach the task, and a handle without a root", async () => {
    await run("mount", ["--bind", volA, target]);
    // A plugin dir that was not a shared mount when the task started (raw_exec before berth shared it).
    const legacy = path.join(fx.base, "legacy");
    const legacyTarget = path.join(legacy, "t");
    await fs.mkdir(legacyTarget, { recursive: true });
    await run("mount", ["--bind", volA, legacyTarget]);
    const rw: TaskMount = { hostPath: target, taskPath: "/data", readOnly: false, propagation: "private" };
    const h = await startWatcher([rw]);
    try {
      await run("umount", [legacyTarget]);
      await run("mount", ["--bind", legacy, legacy]);
      await run("mount", ["--make-shared", legacy]);
      await run("mount", ["--bind", volB, legacyTarget]);
      await assert.rejects(driver.refreshMount(h, { ...rw, hostPath: legacyTarget }), {
        code: "ERR_DRIVER",
        message:
          /the mount at \S+legacy\/t in the task's mount namespace is not a copy of the host's new mount/,
      });

      const victim = path.join(fx.base, "victim");
      await fs.mkdir(victim);
      await fs.symlink(victim, path.join(fx.allocDir.taskLocalDir("web"), "evil"));
      await assert.rejects(driver.refreshMount(h, { ...rw, taskPath: "/local/evil/x" }), {
        code: "ERR_DRIVER",
        message:
          /cannot refresh the mount at \/local\/evil\/x: mount destination \/local\/evil\/x resolves through a symlink/,
      });
      assert.deepEqual(await fs.readdir(victim), [], "nothing was created through the symlink");

      // A shared mount made after the task started has no copy in the task's namespace.
      const late = path.join(fx.base, "late");
      await fs.mkdir(path.join(late, "t"), { recursive: true });
      await run("mount", ["--bind", late, late]);
      try {
        await run("mount", ["--make-shared", late]);
        await run("mount", ["--bind", volB, path.join(late, "t")]);
        await assert.rejects(driver.refreshMount(h, { ...rw, hostPath: path.join(late, "t") }), {
          code: "ERR_DRIVER",
          message:
            /late\/t is not a mount point in the task's mount namespace: the new mount did not reach it/,
        });
        // Not shared at all on the host.
        await assert.rejects(driver.refreshMount(h, { ...rw, hostPath: volB }), {
          code: "ERR_DRIVER",
          message: /volB is not a shared mount on the host/,
        });
      } finally {
        await run("umount", ["-R", late]);
      }

      const old: TaskHandle = { ...h, state: { ...h.state } };
      delete old.state.taskRoot;
      await assert.rejects(driver.refreshMount(old, rw), {
        code: "ERR_DRIVER",
        message: /the task's handle records no task root \(the task was started by an older berth\)/,
      });
      assert.equal(await seen("data")(), "A\n", "the task kept its mount through every refusal");
    } finally {
      await withTimeout(driver.stop(h, 2000), 10_000, "stop");
      await run("umount", [target]);
      await run("umount", ["-R", legacy]).catch(() => run("umount", [legacyTarget]));
    }
    await assert.rejects(driver.refreshMount(h, rw), { message: /task process \d+ is not running/ });
  });
});
