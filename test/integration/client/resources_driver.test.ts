/**
 * Task resources, kill_signal and user with the real process drivers on this host's real cgroups
 * (v1 here): limits written before the task runs, OOM kills reported, cgroups removed when the
 * task is gone, also by an agent that recovered the task. Each test's cgroups live under a parent
 * of its own, which must be empty (and is removed) at the end.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { TaskHandle } from "../../../src/client/drivers/driver.js";
import { ExecDriver } from "../../../src/client/drivers/exec/exec_driver.js";
import { RawExecDriver } from "../../../src/client/drivers/raw_exec/raw_exec_driver.js";
import { CgroupManager } from "../../../src/client/drivers/shared/cgroups/manager.js";
import { taskResources } from "../../../src/client/drivers/shared/cgroups/limits.js";
import { type DriverFixture, makeFixture, waitForFile, withTimeout } from "./driver_fixtures.js";

const MIB = 1024 * 1024;
const NODE = process.execPath;
/** Touches every page of `mib` MiB of anonymous memory (Buffer.alloc fills it). */
const alloc = (mib: number) =>
  `const b = Buffer.alloc(${mib} * 1024 * 1024, 1); console.log("allocated", b.length);`;

const manager = new CgroupManager({ parent: `berth-test-res-${process.pid}` });
let fx: DriverFixture;
const leftovers: TaskHandle[] = [];

async function cgroupDirs(handle: TaskHandle): Promise<Record<string, string>> {
  const rec = JSON.parse(String(handle.state.cgroup)) as { dirs: Record<string, string> };
  return rec.dirs;
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}

describe("task resources on real cgroups", () => {
  before(async () => {
    fx = await makeFixture("berth-res-");
    // Tasks that run as nobody must be able to reach their task dir.
    await fs.chmod(fx.base, 0o755);
    const host = await manager.host();
    assert.equal(
      host.mode,
      "v1",
      `this suite expects the host's cgroup v1 controllers, got ${JSON.stringify(host)}`,
    );
  });

  after(async () => {
    const raw = new RawExecDriver({ cgroups: manager });
    for (const h of leftovers) await raw.stop(h, 0).catch(() => undefined);
    try {
      for (const dir of await manager.parentDirs()) {
        const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
        const children = entries.filter((e) => e.isDirectory()).map((e) => e.name);
        await fs.rmdir(dir).catch(() => undefined);
        assert.deepEqual(children, [], `berth cgroups left in ${dir}`);
      }
    } finally {
      await fx.cleanup();
    }
  });

  it("OOM: a 64 MiB task that touches 200 MiB is killed and its exit says OOM-killed", async () => {
    const d = new RawExecDriver({ cgroups: manager });
    const h = await d.start(fx.cfg(NODE, ["-e", alloc(200)], { resources: taskResources({ MemoryMB: 64 }) }));
    const dirs = await cgroupDirs(h);
    assert.ok(dirs.memory && dirs.cpu, "memory and cpu cgroups recorded in the handle");
    const r = await withTimeout(d.wait(h), 30_000, "OOM task exit");
    assert.deepEqual(r, { exitCode: 137, signal: "SIGKILL", oomKilled: true });
    assert.equal(await exists(dirs.memory), false, "memory cgroup removed once the task is gone");
    assert.equal(await exists(dirs.cpu), false, "cpu cgroup removed once the task is gone");
  });

  it("OOM under exec too: the task is in its cgroup from the start, chrooted", async () => {
    const d = new ExecDriver({ cgroups: manager });
    const h = await d.start(
      fx.cfg("/usr/bin/node", ["-e", alloc(200)], { resources: taskResources({ MemoryMB: 64 }) }),
    );
    const dirs = await cgroupDirs(h);
    const r = await withTimeout(d.wait(h), 30_000, "OOM exec task exit");
    assert.deepEqual(r, { exitCode: 137, signal: "SIGKILL", oomKilled: true });
    assert.equal(await exists(dirs.memory!), false, "memory cgroup removed once the task is gone");
  });

  it("a task within its limit runs, inside cgroups holding its memory and cpu shares", async () => {
    const d = new RawExecDriver({ cgroups: manager });
    const go = path.join(fx.allocDir.taskDir("web"), "go");
    const ready = path.join(fx.allocDir.taskDir("web"), "ready");
    await fs.rm(go, { force: true });
    await fs.rm(ready, { force: true });
    const script = `${alloc(100)} require("fs").writeFileSync("ready", String(process.pid));
      const t = setInterval(() => { if (require("fs").existsSync("go")) { clearInterval(t); } }, 20);`;
    const h = await d.start(
      fx.cfg(NODE, ["-e", script], {
        resources: taskResources({ CPU: 250, MemoryMB: 256, MemoryMaxMB: 512 }),
      }),
    );
    leftovers.push(h);
    await waitForFile(ready);
    const dirs = await cgroupDirs(h);
    const read = (dir: string, f: string) => fs.readFile(path.join(dir, f), "utf8").then((t) => t.trim());
    assert.equal(await read(dirs.memory!, "memory.limit_in_bytes"), String(512 * MIB));
    assert.equal(await read(dirs.memory!, "memory.soft_limit_in_bytes"), String(256 * MIB));
    assert.equal(await read(dirs.cpu!, "cpu.shares"), "250");
    const taskPid = (await fs.readFile(ready, "utf8")).trim();
    assert.ok(
      (await read(dirs.memory!, "cgroup.procs")).split("\n").includes(taskPid),
      "task in its memory cgroup",
    );
    assert.ok(
      (await read(dirs.cpu!, "cgroup.procs")).split("\n").includes(taskPid),
      "task in its cpu cgroup",
    );
    await fs.writeFile(go, "");
    const r = await withTimeout(d.wait(h), 30_000, "task exit");
    assert.deepEqual(r, { exitCode: 0, signal: null });
    assert.equal(await exists(dirs.memory!), false);
  });

  it("cores: the task is pinned to that many cores of the agent's cpuset", async () => {
    const d = new RawExecDriver({ cgroups: manager });
    const out = path.join(fx.allocDir.taskLocalDir("web"), "cpus");
    const h = await d.start(
      fx.cfg("/bin/sh", ["-c", `grep Cpus_allowed_list /proc/self/status > ${out}`], {
        resources: taskResources({ Cores: 1, MemoryMB: 64 }),
      }),
    );
    const dirs = await cgroupDirs(h);
    assert.ok(dirs.cpuset, "a cpuset cgroup for a task with cores");
    assert.deepEqual(await withTimeout(d.wait(h), 30_000, "task exit"), { exitCode: 0, signal: null });
    const allowed = (await fs.readFile(out, "utf8")).split(":")[1]!.trim();
    assert.match(allowed, /^\d+$/, `one core, got ${allowed}`);
    assert.equal(await exists(dirs.cpuset), false, "cpuset cgroup removed once the task is gone");
  });

  it("kill_signal: stop sends the task's signal first (SIGINT), SIGTERM by default", async () => {
    const d = new RawExecDriver({ cgroups: manager });
    const script = `trap 'echo INT > got; exit 0' INT; trap 'echo TERM > got; exit 0' TERM
      : > ready; while :; do sleep 0.05; done`;
    for (const [killSignal, want] of [
      ["SIGINT", "INT"],
      ["", "TERM"],
    ] as const) {
      const dir = fx.allocDir.taskDir("web");
      await fs.rm(path.join(dir, "got"), { force: true });
      await fs.rm(path.join(dir, "ready"), { force: true });
      const h = await d.start(
        fx.cfg("/bin/sh", ["-c", script], { killSignal, resources: taskResources(null) }),
      );
      leftovers.push(h);
      await waitForFile(path.join(dir, "ready"));
      await withTimeout(d.stop(h, 10_000), 20_000, "stop");
      assert.equal((await fs.readFile(path.join(dir, "got"), "utf8")).trim(), want);
      assert.equal((await d.wait(h)).exitCode, 0, "the task handled the signal and exited 0");
    }
  });

  it("kill_signal: an unknown signal fails the start, naming it, before anything runs", async () => {
    const d = new RawExecDriver({ cgroups: manager });
    await assert.rejects(d.start(fx.cfg("/bin/true", [], { killSignal: "SIGBOGUS" })), {
      code: "ERR_VALIDATION",
      message: /task "web": unknown kill signal "SIGBOGUS"/,
    });
  });

  it("user: exec and raw_exec run the task as that user (uid, gid)", async () => {
    const dir = fx.allocDir.taskDir("web");
    const exec = new ExecDriver({ cgroups: manager });
    await fs.rm(path.join(dir, "tmp", "id"), { force: true });
    const h1 = await exec.start(
      fx.cfg("/bin/sh", ["-c", "echo $(id -u):$(id -g) > /tmp/id"], {
        user: "nobody",
        resources: taskResources(null),
      }),
    );
    assert.deepEqual(await withTimeout(exec.wait(h1), 30_000, "exec task"), { exitCode: 0, signal: null });
    assert.equal((await fs.readFile(path.join(dir, "tmp", "id"), "utf8")).trim(), "65534:65534");

    const raw = new RawExecDriver({ cgroups: manager });
    await fs.rm(path.join(dir, "local", "id"), { force: true });
    const h2 = await raw.start(
      fx.cfg("/bin/sh", ["-c", "echo $(id -u):$(id -g) > local/id"], {
        user: "nobody",
        resources: taskResources(null),
      }),
    );
    assert.deepEqual(await withTimeout(raw.wait(h2), 30_000, "raw_exec task"), { exitCode: 0, signal: null });
    assert.equal((await fs.readFile(path.join(dir, "local", "id"), "utf8")).trim(), "65534:65534");
  });

  it("user: an unknown user fails the start naming the user, creating no cgroup", async () => {
    const d = new RawExecDriver({ cgroups: manager });
    await assert.rejects(
      d.start(fx.cfg("/bin/true", [], { user: "berth-no-such-user", resources: taskResources(null) })),
      { code: "ERR_DRIVER", message: /task "web": user "berth-no-such-user" does not exist on this node/ },
    );
    for (const dir of await manager.parentDirs()) {
      const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
      assert.deepEqual(
        entries.filter((e) => e.isDirectory()),
        [],
      );
    }
  });

  it("a stale copy left in the task's cgroup by an earlier start is killed before the task runs", async () => {
    const host = await manager.host();
    assert.ok(host.mode === "v1" && host.bases.memory);
    const stale = path.join(host.bases.memory, `berth-test-res-${process.pid}`, "a1.web");
    await fs.mkdir(stale, { recursive: true });
    const sleeper = spawn("/bin/sleep", ["600"], { stdio: "ignore" });
    try {
      await once(sleeper, "spawn");
      await fs.writeFile(path.join(stale, "memory.limit_in_bytes"), String(32 * MIB));
      await fs.writeFile(path.join(stale, "cgroup.procs"), String(sleeper.pid));
      const exited = once(sleeper, "exit");
      const d = new RawExecDriver({ cgroups: manager });
      // The task lists who shares its cgroup while it runs: itself and its shell parent only.
      const procs = path.join(fx.allocDir.taskLocalDir("web"), "procs");
      const h = await d.start(
        fx.cfg("/bin/sh", ["-c", `cat ${stale}/cgroup.procs > ${procs}`], {
          resources: taskResources({ MemoryMB: 128 }),
        }),
      );
      assert.deepEqual(await withTimeout(d.wait(h), 30_000, "task exit"), { exitCode: 0, signal: null });
      const sharing = (await fs.readFile(procs, "utf8")).trim().split("\n");
      assert.ok(!sharing.includes(String(sleeper.pid)), "the stale process was gone before the task ran");
      assert.deepEqual(await exited, [null, "SIGKILL"], "the stale process was killed");
    } finally {
      sleeper.kill("SIGKILL");
    }
  });

  it("a host without usable cgroups runs the task unlimited, recording no cgroup", async () => {
    const empty = path.join(fx.base, "no-cgroups");
    await fs.mkdir(empty, { recursive: true });
    const none = path.join(empty, "none");
    const off = new CgroupManager({ detect: { root: empty, procCgroup: none, mountinfo: none } });
    assert.deepEqual(await off.host(), { mode: "off", reason: "no cgroup memory controller is mounted" });
    const d = new RawExecDriver({ cgroups: off });
    const h = await d.start(fx.cfg("/bin/true", [], { resources: taskResources({ MemoryMB: 64 }) }));
    assert.equal(h.state.cgroup, "");
    assert.deepEqual(await withTimeout(d.wait(h), 30_000, "task exit"), { exitCode: 0, signal: null });
  });

  it("a restarted agent recovers the task's cgroup: OOM reported, cgroup removed", async () => {
    const first = new RawExecDriver({ cgroups: manager });
    const dir = fx.allocDir.taskDir("web");
    await fs.rm(path.join(dir, "go"), { force: true });
    await fs.rm(path.join(dir, "ready"), { force: true });
    const script = `const fs = require("fs"); fs.writeFileSync("ready", "");
      const t = setInterval(() => { if (fs.existsSync("go")) { clearInterval(t); ${alloc(200)} } }, 20);`;
    const h = await first.start(fx.cfg(NODE, ["-e", script], { resources: taskResources({ MemoryMB: 64 }) }));
    leftovers.push(h);
    await waitForFile(path.join(dir, "ready"));
    first.detach();
    const dirs = await cgroupDirs(h);
    // The default poll (200 ms): a detached first driver that wrongly cleaned up would be done by then.
    const second = new RawExecDriver({ cgroups: manager });
    assert.equal(await second.recover(h), true);
    await fs.writeFile(path.join(dir, "go"), "");
    const r = await withTimeout(second.wait(h), 30_000, "recovered task exit");
    assert.equal(r.oomKilled, true);
    assert.equal(r.exitCode, 137);
    assert.equal(await exists(dirs.memory!), false, "the recovering agent removed the cgroup");
  });
});
