/**
 * The docker driver against a real dockerd of the test's own (test/helpers/dockerd.ts), images
 * built locally: start/wait with exit codes and logs into the task's files, the task dirs bound
 * in, stop with the kill signal then SIGKILL, re-attach from the persisted handle by a second
 * driver (an agent restart: the same container, no second one), a container created but never
 * started is removed and reported `notStarted`, the privileged fallback on a host whose bounding
 * set lacks capabilities (said in a task event), an image that cannot be pulled is an error naming
 * it, a busy container's stats, and a driver without a daemon fingerprints as undetected. After all: no container, nothing
 * mounted, the daemon stopped and its dirs removed.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { DockerDriver } from "../../../src/client/drivers/docker/docker_driver.js";
import type { TaskHandle, TaskStartConfig } from "../../../src/client/drivers/driver.js";
import { taskUsageFrom } from "../../../src/client/rpc/usage_rates.js";
import { Dockerd, SHELL_IMAGE } from "../../helpers/dockerd.js";
import { eventually } from "../../helpers/agent_process.js";

let dir: string;
let dockerd: Dockerd;
let n = 0;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-dockerdrv-")));
  dockerd = new Dockerd(path.join(dir, "d"));
  await dockerd.start();
  await dockerd.buildShellImage();
});

after(async () => {
  const left = await dockerd.containers().catch(() => []);
  const { mounts } = await dockerd.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(left, [], "every container was removed by the driver");
  assert.deepEqual(mounts, [], "nothing left mounted under the daemon's dirs");
});

/** A task's start config in a fresh task dir; `config` is the task's docker config. */
function task(config: Record<string, unknown>, extra: Partial<TaskStartConfig> = {}): TaskStartConfig {
  const allocId = `0000000${n}-0000-4000-8000-000000000000`.slice(-36);
  const root = path.join(dir, `alloc${n++}`);
  const taskDir = path.join(root, "t");
  for (const d of ["alloc", "t/local", "t/secrets", "t/logs"])
    fs.mkdirSync(path.join(root, d), { recursive: true });
  return {
    allocId,
    taskName: "t",
    taskDir,
    allocSharedDir: path.join(root, "alloc"),
    command: "",
    args: [],
    env: { GREETING: "hello" },
    mounts: [],
    stdoutPath: path.join(taskDir, "logs", "t.stdout.0"),
    stderrPath: path.join(taskDir, "logs", "t.stderr.0"),
    config,
    ...extra,
  };
}

function driver(opts: { allowPrivileged?: boolean } = {}): DockerDriver {
  return new DockerDriver({ endpoint: dockerd.endpoint, ...opts });
}

test("fingerprint: healthy with the daemon's version; no daemon: undetected, never a throw", async () => {
  const info = await driver().fingerprint();
  assert.equal(info.Detected, true);
  assert.equal(info.Healthy, true);
  assert.match(info.Attributes?.["driver.docker.version"] ?? "", /^\d+\.\d+/);
  const none = await new DockerDriver({ endpoint: `unix://${dir}/no.sock` }).fingerprint();
  assert.equal(none.Detected, false);
  assert.equal(none.Healthy, false);
  assert.match(none.HealthDescription, /Failed to connect to docker daemon/);
});

test("start/wait: exit code, stdout and stderr in the task's files, task dirs and env", async () => {
  const d = driver();
  const cfg = task({
    image: SHELL_IMAGE,
    command: "/bin/sh",
    args: [
      "-c",
      'echo "$GREETING out"; echo err >&2; echo shared > /alloc/x; echo $NOMAD_X > /local/y; exit 3',
    ],
  });
  let persisted: TaskHandle | null = null;
  const h = await d.start(cfg, (handle) => {
    persisted = structuredClone(handle);
  });
  assert.ok(persisted, "beforeRun got the handle");
  assert.equal((persisted as TaskHandle).state.containerId, h.state.containerId);
  const res = await d.wait(h);
  assert.equal(res.exitCode, 3);
  assert.equal(fs.readFileSync(cfg.stdoutPath, "utf8"), "hello out\n");
  assert.equal(fs.readFileSync(cfg.stderrPath, "utf8"), "err\n");
  assert.equal(fs.readFileSync(path.join(cfg.allocSharedDir, "x"), "utf8"), "shared\n");
  assert.deepEqual(await dockerd.containers(), [], "the exited container is removed");
});

test("stop: the kill signal first, SIGKILL after the timeout", async () => {
  const d = driver();
  // The shell ignores TERM: only the SIGKILL after 1 s ends it.
  const cfg = task({
    image: SHELL_IMAGE,
    command: "/bin/sh",
    args: ["-c", "trap '' TERM; echo up; while :; do sleep 1; done"],
  });
  const h = await d.start(cfg);
  await eventually("the task to be up", async () =>
    fs.readFileSync(cfg.stdoutPath, "utf8") === "up\n" ? true : undefined,
  );
  await d.stop(h, 1_000);
  const res = await d.wait(h);
  assert.equal(res.exitCode, 137);
  assert.deepEqual(await dockerd.containers(), []);
});

test("signal and exec (with and without a TTY): through the Engine, inside the container", async () => {
  const d = driver();
  const cfg = task({
    image: SHELL_IMAGE,
    command: "/bin/sh",
    args: ["-c", "trap 'echo got usr1; exit 5' USR1; echo ready > /local/ready; while :; do sleep 0.2; done"],
  });
  const h = await d.start(cfg);
  await eventually("the trap to be set", async () =>
    fs.existsSync(path.join(cfg.taskDir, "local", "ready")) ? true : undefined,
  );
  const proc = await d.exec(h, ["/bin/cat", "/local/ready"], { tty: false, height: 0, width: 0 });
  let out = "";
  proc.stdout.on("data", (c: Buffer) => (out += c.toString()));
  proc.stdin.end();
  assert.equal(await proc.exited, 0);
  assert.equal(out, "ready\n");
  // A TTY exec: the terminal the Engine allocates, of the size asked for.
  // (Read after a moment: an Engine before API 1.42 sets the size by a resize after the start.)
  const tty = await d.exec(h, ["/bin/sh", "-c", "sleep 0.5; stty size"], {
    tty: true,
    height: 30,
    width: 100,
  });
  let screen = "";
  tty.stdout.on("data", (c: Buffer) => (screen += c.toString()));
  // The end of a terminal's input is ^D: the command's output is not lost.
  tty.stdin.end();
  assert.equal(await tty.exited, 0);
  assert.equal(screen.trim(), "30 100");
  await d.signal(h, "SIGUSR1");
  assert.equal((await d.wait(h)).exitCode, 5);
  assert.match(fs.readFileSync(cfg.stdoutPath, "utf8"), /got usr1/);
});

test("resources: the memory limit holds; an OOM kill is reported as one", async () => {
  const d = driver();
  const cfg = task(
    { image: SHELL_IMAGE, command: "/bin/sh", args: ["-c", 'a=x; while :; do a="$a$a"; done'] },
    { resources: { cpuShares: 100, memoryMB: 16, memoryMaxMB: 0, cores: 0, reservedCores: [] } },
  );
  const h = await d.start(cfg);
  const res = await d.wait(h);
  assert.equal(res.oomKilled, true, JSON.stringify(res));
  assert.equal(res.exitCode, 137);
});

test("stats: the Engine's counters of a busy container grow; its memory is measured", async () => {
  const d = driver();
  const cfg = task({ image: SHELL_IMAGE, command: "/bin/sh", args: ["-c", "while :; do :; done"] });
  const h = await d.start(cfg);
  try {
    const first = await d.stats(h);
    await new Promise((r) => setTimeout(r, 500));
    const usage = taskUsageFrom(first, await d.stats(h), 1000).ResourceUsage;
    // A busy loop: a good share of a core even on a loaded machine.
    assert.ok(usage.CpuStats.Percent > 20, JSON.stringify(usage.CpuStats));
    assert.ok(usage.MemoryStats.Usage > 0 && usage.MemoryStats.Measured.includes("Usage"));
  } finally {
    await d.stop(h, 1_000);
  }
});

test("exec runs in the container's cgroups: the same as its main process's, held to its memory limit", async () => {
  const d = driver();
  const cfg = task(
    { image: SHELL_IMAGE, command: "/bin/sh", args: ["-c", "while :; do sleep 0.2; done"] },
    { resources: { cpuShares: 100, memoryMB: 32, memoryMaxMB: 0, cores: 0, reservedCores: [] } },
  );
  const h = await d.start(cfg);
  const run = async (command: string[]) => {
    const proc = await d.exec(h, command, { tty: false, height: 0, width: 0 });
    let out = "";
    proc.stdout.on("data", (c: Buffer) => (out += c.toString()));
    proc.stdin.end();
    return { code: await proc.exited, out };
  };
  const main = await run(["/bin/cat", "/proc/1/cgroup"]);
  const own = await run(["/bin/cat", "/proc/self/cgroup"]);
  assert.equal(main.code, 0);
  assert.ok(main.out.length > 0);
  assert.equal(own.out, main.out, "the exec's cgroups are the container's");
  // Doubles a string to 128 MiB (bounded: a regression cannot eat the machine), past 32 MiB.
  const hog = await run([
    "/bin/sh",
    "-c",
    'a=x; i=0; while [ $i -lt 27 ]; do a="$a$a"; i=$((i+1)); done; echo survived',
  ]);
  assert.deepEqual(hog, { code: 137, out: "" }, "the exec was OOM-killed");
  await d.stop(h, 0);
  await d.wait(h);
});

test("recover: a second driver re-attaches to the same container and follows its logs", async () => {
  const first = driver();
  const cfg = task({
    image: SHELL_IMAGE,
    command: "/bin/sh",
    args: ["-c", "echo one; while [ ! -e /local/go ]; do sleep 0.2; done; echo two; exit 7"],
  });
  const h = await first.start(cfg);
  await eventually("the first line", async () =>
    fs.readFileSync(cfg.stdoutPath, "utf8") === "one\n" ? true : undefined,
  );
  first.detach();
  const stored = structuredClone(h);
  const second = driver();
  assert.equal(await second.recover(stored), true);
  assert.equal(stored.pid, h.pid, "the same process");
  assert.deepEqual(await dockerd.containers(), [String(h.state.containerId)], "no second container");
  fs.writeFileSync(path.join(cfg.taskDir, "local", "go"), "");
  const res = await second.wait(stored);
  assert.equal(res.exitCode, 7);
  assert.equal(fs.readFileSync(cfg.stdoutPath, "utf8"), "one\ntwo\n", "no line lost or written twice");
});

test("recover: a container created but never started is removed and reported notStarted", async () => {
  const cfg = task({ image: SHELL_IMAGE, command: "/bin/sh", args: ["-c", "exit 0"] });
  // What an agent killed between create (handle persisted) and start leaves behind.
  const id = (
    await dockerd.docker(["create", "--network", "none", SHELL_IMAGE, "/bin/sh", "-c", "exit 0"])
  ).trim();
  const handle: TaskHandle = {
    driver: "docker",
    pid: 0,
    startedAt: Date.now(),
    state: { containerId: id, killSignal: "SIGTERM", stdoutPath: cfg.stdoutPath, stderrPath: cfg.stderrPath },
  };
  const d = driver();
  assert.equal(await d.recover(handle), false);
  assert.equal((await d.wait(handle)).notStarted, true);
  assert.deepEqual(await dockerd.containers(), []);
  // A beforeRun that fails: start() removes the container it made and rejects with that error.
  await assert.rejects(
    d.start(cfg, () => {
      throw new Error("persisting failed");
    }),
    /persisting failed/,
  );
  assert.deepEqual(await dockerd.containers(), []);
});

test("privileged: refused unless allowed; where Docker cannot grant it, the fallback and its event", async () => {
  const cfg = task({
    image: SHELL_IMAGE,
    command: "/bin/sh",
    args: ["-c", "cat /proc/self/status"],
    privileged: true,
  });
  await assert.rejects(driver().start(cfg), /privileged mode is disabled/);
  const events: string[] = [];
  const d = driver({ allowPrivileged: true });
  const h = await d.start({ ...cfg, emitEvent: (_t, m) => events.push(m) });
  const res = await d.wait(h);
  assert.equal(res.exitCode, 0, fs.readFileSync(cfg.stderrPath, "utf8"));
  const capEff = /CapEff:\s*([0-9a-f]+)/.exec(fs.readFileSync(cfg.stdoutPath, "utf8"))?.[1];
  const own = /CapBnd:\s*([0-9a-f]+)/.exec(fs.readFileSync("/proc/self/status", "utf8"))?.[1];
  const full =
    BigInt(`0x${own}`) ===
    (1n << BigInt(Number(fs.readFileSync("/proc/sys/kernel/cap_last_cap", "utf8")) + 1)) - 1n;
  if (full) return; // a host that grants Privileged: nothing to fall back from
  assert.ok(
    events.some((m) => /cannot grant privileged/.test(m)),
    `events: ${JSON.stringify(events)}`,
  );
  assert.ok(capEff && (BigInt(`0x${capEff}`) & (1n << 21n)) !== 0n, "CAP_SYS_ADMIN granted");
});

test("an image that is not on the node and cannot be pulled: an error naming it", async () => {
  const cfg = task({ image: "berth-test/absent:1", image_pull_timeout: "20s" });
  const events: string[] = [];
  await assert.rejects(
    driver().start({ ...cfg, emitEvent: (t, m) => events.push(`${t}: ${m}`) }),
    /Failed to pull `berth-test\/absent:1`/,
  );
  assert.ok(events.includes("Driver: Downloading image"));
});
