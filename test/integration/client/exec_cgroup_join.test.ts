/**
 * `alloc exec` on the node joins the task's cgroup(s) before its command runs, on this host's real
 * cgroups (v1 here), through the ClientAlloc handlers themselves (a fake peer calls them): a real
 * raw_exec task with `memory = 64` (RawExecDriver, cgroups under a parent of this test's own),
 * then ClientAlloc.Exec and interactive sessions (ExecOpen, with and without a TTY) in it.
 * - every way in runs with the task's own /proc/self/cgroup;
 * - a session allocating past 64 MiB is OOM-killed, not left to run in the agent's cgroup;
 * - a cgroup that cannot be joined fails the exec with ERR_DRIVER, and the command never ran.
 * After all: no cgroup left under the test's parent, no process left.
 */
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { TaskHandle } from "../../../src/client/drivers/driver.js";
import { RawExecDriver } from "../../../src/client/drivers/raw_exec/raw_exec_driver.js";
import { CgroupManager } from "../../../src/client/drivers/shared/cgroups/manager.js";
import { taskResources } from "../../../src/client/drivers/shared/cgroups/limits.js";
import { registerClientAllocHandlers } from "../../../src/client/rpc/client_alloc.js";
import type { TaskRunnerLike } from "../../../src/client/allocrunner/alloc_runner_config.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { ClientMethods } from "../../../src/structs/rpc.js";
import { type DriverFixture, makeFixture, waitForFile, withTimeout } from "./driver_fixtures.js";

const manager = new CgroupManager({ parent: `berth-test-execjoin-${process.pid}` });
const driver = new RawExecDriver({ cgroups: manager });
const HOG = 'a=x; i=0; while [ $i -lt 27 ]; do a="$a$a"; i=$((i+1)); done; echo survived';

type Handler = (params: unknown, signal: AbortSignal) => Promise<unknown>;
const handlers = new Map<string, Handler>();
let fx: DriverFixture;
let handle: TaskHandle;
/** What the handlers see as the task's handle (a test swaps in a broken one). */
let shown: TaskHandle;

function call<M extends keyof ClientMethods>(
  method: M,
  params: ClientMethods[M][0],
): Promise<ClientMethods[M][1]> {
  return handlers.get(method)!(params, new AbortController().signal) as Promise<ClientMethods[M][1]>;
}

async function exec(command: string[]): Promise<{ out: string; err: string; code: number }> {
  const r = await call("ClientAlloc.Exec", {
    AllocID: "a1",
    Task: "web",
    Command: command,
    Stdin: "",
    TimeoutMs: 60_000,
  });
  const text = (b: string) => Buffer.from(b, "base64").toString("utf8");
  return { out: text(r.Stdout), err: text(r.Stderr), code: r.ExitCode };
}

/** An interactive session's whole output and exit code. */
async function session(command: string[], tty: boolean): Promise<{ out: string; code: number }> {
  const { SessionID } = await call("ClientAlloc.ExecOpen", {
    AllocID: "a1",
    Task: "web",
    Command: command,
    Tty: tty,
    Height: 24,
    Width: 80,
  });
  await call("ClientAlloc.ExecInput", { SessionID, Stdin: "", Close: true, Height: 0, Width: 0 });
  let out = "";
  for (let i = 0; i < 100; i++) {
    const r = await call("ClientAlloc.ExecOutput", { SessionID, WaitMs: 5_000 });
    out += Buffer.from(r.Stdout, "base64").toString("utf8");
    if (r.Exited) return { out, code: r.ExitCode };
  }
  throw new Error("the session did not end");
}

describe("alloc exec joins the task's cgroup", () => {
  before(async () => {
    fx = await makeFixture("berth-execjoin-");
    const ready = path.join(fx.allocDir.taskDir("web"), "ready");
    handle = await driver.start(
      fx.cfg("/bin/sh", ["-c", `touch ${ready}; while :; do sleep 1; done`], {
        resources: taskResources({ MemoryMB: 64 }),
      }),
    );
    shown = handle;
    await waitForFile(ready);
    const runner = {
      state: () => ({
        State: "running",
        Failed: false,
        Restarts: 0,
        StartedAt: null,
        FinishedAt: null,
        Events: [],
      }),
      runningHandle: () => shown,
    } as unknown as TaskRunnerLike;
    registerClientAllocHandlers(
      { handle: (method, fn) => handlers.set(method, fn as Handler) },
      (id) =>
        id === "a1"
          ? {
              root: fx.allocDir.root,
              taskNames: () => ["web"],
              task: (n) => (n === "web" ? runner : undefined),
            }
          : undefined,
      nullLogger,
    );
  });

  after(async () => {
    try {
      await driver.stop(handle, 0);
      await withTimeout(driver.wait(handle), 30_000, "task exit");
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
      await fx.cleanup();
    }
  });

  it("Exec and sessions (with and without a TTY) see the task's own cgroups", async () => {
    const own = await fs.readFile(`/proc/${handle.pid}/cgroup`, "utf8");
    assert.match(own, new RegExp(`/berth-test-execjoin-${process.pid}/a1\\.web(\\.scope)?$`, "m"));
    const viaExec = await exec(["cat", "/proc/self/cgroup"]);
    assert.deepEqual(viaExec, { out: own, err: "", code: 0 });
    assert.deepEqual(await session(["cat", "/proc/self/cgroup"], false), { out: own, code: 0 });
    // A terminal turns "\n" into "\r\n".
    const tty = await session(["cat", "/proc/self/cgroup"], true);
    assert.deepEqual({ out: tty.out.replaceAll("\r\n", "\n"), code: tty.code }, { out: own, code: 0 });
  });

  it("a session past the task's 64 MiB is OOM-killed", async () => {
    assert.deepEqual(await exec(["/bin/sh", "-c", HOG]), { out: "", err: "", code: 137 });
    assert.deepEqual(await session(["/bin/sh", "-c", HOG], false), { out: "", code: 137 });
  });

  it("a cgroup that cannot be joined: ERR_DRIVER, and the command never ran", async () => {
    // The recorded cgroup with a directory that is not there (v1: memory's; v2: the one).
    const rec = JSON.parse(String(handle.state.cgroup)) as { dir?: string; dirs?: Record<string, string> };
    const gone = rec.dirs
      ? { ...rec, dirs: { ...rec.dirs, memory: path.join(rec.dirs.memory!, "no-such-cgroup") } }
      : { ...rec, dir: path.join(rec.dir!, "no-such-cgroup") };
    shown = { ...handle, state: { ...handle.state, cgroup: JSON.stringify(gone) } };
    const marker = path.join(fx.base, "ran");
    try {
      await assert.rejects(exec(["touch", marker]), {
        code: "ERR_DRIVER",
        message: /cannot move the exec session into the task's cgroup/,
      });
      await assert.rejects(session(["touch", marker], false), { code: "ERR_DRIVER" });
    } finally {
      shown = handle;
    }
    await assert.rejects(fs.access(marker), { code: "ENOENT" });
    // A missing command is named, as without a cgroup.
    await assert.rejects(exec(["berth-no-such-command"]), {
      code: "ERR_VALIDATION",
      message: /Command: "berth-no-such-command" not found/,
    });
  });
});
