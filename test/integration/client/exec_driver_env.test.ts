/**
 * The exec task environment as Nomad's exec driver gives it: /sys is a read-only sysfs, /dev the
 * minimal device set (the host's for a privileged task, i.e. a CSI plugin), /proc, and the host's
 * resolv.conf and hosts. Real namespaces and mounts; nothing may stay mounted.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import type { TaskHandle, TaskStartConfig } from "../../../src/client/drivers/driver.js";
import { ExecDriver } from "../../../src/client/drivers/exec/exec_driver.js";
import { type DriverFixture, makeFixture, withTimeout } from "./driver_fixtures.js";

const MINIMAL_DEV = [
  "fd",
  "full",
  "null",
  "ptmx",
  "pts",
  "random",
  "shm",
  "stderr",
  "stdin",
  "stdout",
  "tty",
  "urandom",
  "zero",
];

describe("exec driver: the task environment", () => {
  let fx: DriverFixture;
  const driver = new ExecDriver({ pollMs: 50 });
  const started: TaskHandle[] = [];

  /** Runs `script` in a task to completion; returns its stdout (asserting exit 0). */
  const runScript = async (script: string, extra: Partial<TaskStartConfig> = {}): Promise<string> => {
    await fs.rm(path.join(fx.allocDir.taskLogsDir("web"), "web.stdout.0"), { force: true });
    const h = await driver.start(fx.cfg("/bin/sh", ["-c", script], extra));
    started.push(h);
    const res = await withTimeout(driver.wait(h), 20_000, "task exit");
    const out = await fx.readStdout();
    assert.deepEqual(res, { exitCode: 0, signal: null }, `script failed: ${script}\n${out}`);
    return out;
  };

  before(async () => {
    fx = await makeFixture("berth-exec-env-");
  });

  after(async () => {
    for (const h of started) await driver.stop(h, 100).catch(() => undefined);
    const left = await mountsUnder(fx.base);
    await fx.cleanup();
    assert.deepEqual(left, [], "nothing may stay mounted under the test dir");
  });

  it("/sys is a read-only sysfs with the host's devices", async () => {
    const out = await runScript(
      "stat -f -c %T /sys; awk '$5 == \"/sys\" { print $6 }' /proc/self/mountinfo; ls /sys/dev/block | wc -l; if touch /sys/x 2>/dev/null; then echo writable; fi",
    );
    const [fsType, opts, blockCount, writable] = out.trim().split("\n");
    assert.equal(fsType, "sysfs");
    assert.match(opts ?? "", /^ro,/);
    assert.equal(Number(blockCount), (await fs.readdir("/sys/dev/block")).length);
    assert.equal(writable, undefined);
  });

  it("an ordinary task gets the minimal /dev: working null, urandom, shm and a private pts", async () => {
    const out = await runScript(
      "ls /dev | sort | tr '\\n' ' '; echo; echo x > /dev/null && head -c 4 /dev/urandom | wc -c && echo s > /dev/shm/s && cat /dev/shm/s && ls /dev/pts | tr '\\n' ' '",
    );
    const [listing, urandom, shm, pts] = out.split("\n");
    assert.deepEqual(listing!.trim().split(" "), MINIMAL_DEV);
    assert.equal(urandom!.trim(), "4");
    assert.equal(shm, "s");
    assert.equal(pts!.trim(), "ptmx", "a fresh devpts instance, none of the host's terminals");
  });

  it("a privileged task (a CSI plugin) gets the host's /dev, and lsblk works", async () => {
    const hostOnly = ["loop-control", "kmsg", "console", "mem"].find((d) => existsSync(`/dev/${d}`));
    assert.ok(hostOnly, "the host has a device outside the minimal set");
    const lsblk = existsSync("/usr/bin/lsblk") || existsSync("/bin/lsblk");
    const script = `test -e /dev/${hostOnly} && echo present; ${lsblk ? "lsblk -d -n -o NAME | sort" : ""}`;
    const out = await runScript(script, { privileged: true });
    const [present, ...names] = out.trim().split("\n");
    assert.equal(present, "present");
    if (lsblk) {
      const host = execFileSync("lsblk", ["-d", "-n", "-o", "NAME"], { encoding: "utf8" });
      assert.deepEqual(names, host.trim().split("\n").sort());
    }
  });

  it("/etc/resolv.conf, /etc/hosts and /proc are the host's", async () => {
    const out = await runScript(
      "cat /etc/resolv.conf; echo ---; cat /etc/hosts; echo ---; test -r /proc/self/status && echo proc",
    );
    const [resolv, hosts, proc] = out.split("---\n");
    assert.equal(
      resolv,
      readFileSync("/etc/resolv.conf", "utf8") +
        (readFileSync("/etc/resolv.conf", "utf8").endsWith("\n") ? "" : "\n"),
    );
    assert.equal(
      hosts,
      readFileSync("/etc/hosts", "utf8") + (readFileSync("/etc/hosts", "utf8").endsWith("\n") ? "" : "\n"),
    );
    assert.equal(proc, "proc\n");
  });

  it("the job's LD_PRELOAD reaches the task only, never a root helper (unshare, sh, chroot)", async (t) => {
    if (!existsSync("/usr/bin/gcc")) return t.skip("no C compiler to build the preload");
    // A preload that records the uid of every process that loads it, at a host path the task's
    // chroot cannot see: only a root helper on the host can load it.
    const dir = await fs.mkdtemp(path.join(fx.base, "preload-"));
    const marks = path.join(dir, "marks");
    const src = path.join(dir, "mark.c");
    await fs.writeFile(
      src,
      `#include <fcntl.h>\n#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void mark(void) { int fd = open("${marks}", O_WRONLY | O_APPEND | O_CREAT, 0666); if (fd >= 0) { dprintf(fd, "%d\\n", (int)getuid()); close(fd); } }\n`,
    );
    const so = path.join(dir, "mark.so");
    execFileSync("gcc", ["-shared", "-fPIC", "-o", so, src]);
    const out = await runScript('echo "p=$LD_PRELOAD t=$TZDIR"', { env: { LD_PRELOAD: so, TZDIR: "/tz" } });
    assert.equal(out, `p=${so} t=/tz\n`, "the task still gets them");
    const loaded = existsSync(marks) ? readFileSync(marks, "utf8").split("\n").filter(Boolean) : [];
    assert.deepEqual(loaded, [], "no process outside the task's root loaded the job's preload");
  });
});
