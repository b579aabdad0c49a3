import assert from "node:assert/strict";
import fs from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import type { TaskHandle } from "../../../src/client/drivers/driver.js";
import { ExecDriver } from "../../../src/client/drivers/exec/exec_driver.js";
import { berthRoot } from "../../../src/client/drivers/shared/launch.js";
import { type DriverFixture, makeFixture, run, waitForFile, withTimeout } from "./driver_fixtures.js";

describe("exec driver (real namespaces and mounts)", () => {
  let fx: DriverFixture;
  const driver = new ExecDriver({ pollMs: 50 });
  const started: TaskHandle[] = [];

  const start = async (...a: Parameters<DriverFixture["cfg"]>) => {
    const h = await driver.start(fx.cfg(...a));
    started.push(h);
    return h;
  };

  before(async () => {
    fx = await makeFixture("berth-exec-");
  });

  after(async () => {
    for (const h of started) await driver.stop(h, 100).catch(() => undefined);
    const left = await mountsUnder(fx.base);
    await fx.cleanup();
    assert.deepEqual(left, [], "nothing may stay mounted under the test dir");
  });

  it("fingerprints as healthy with mount support when root", async () => {
    const info = await driver.fingerprint();
    assert.equal(info.SupportsMounts, true);
    assert.equal(info.Healthy, true, info.HealthDescription);
    assert.equal(driver.capabilities().supportsMounts, true);
  });

  it("runs chrooted in the task dir with env and args, /alloc shared, logs to files", async () => {
    const h = await start("/bin/sh", [
      "-c",
      'echo hi > /local/out; echo "$FOO $1" > /local/env; echo shared > /alloc/s; test -d /usr/bin && echo "$PATH"',
      "sh",
      "arg1",
    ]);
    const res = await withTimeout(driver.wait(h), 10_000, "task exit");
    assert.deepEqual(res, { exitCode: 0, signal: null });
    const local = fx.allocDir.taskLocalDir("web");
    assert.equal(await fs.readFile(path.join(local, "out"), "utf8"), "hi\n");
    assert.equal(await fs.readFile(path.join(local, "env"), "utf8"), "bar arg1\n");
    assert.equal(await fs.readFile(path.join(fx.allocDir.sharedDir, "s"), "utf8"), "shared\n");
    assert.match(await fx.readStdout(), new RegExp(`^${berthRoot()}/bin:/usr/local/sbin`));
    assert.deepEqual(await mountsUnder(fx.base), []);
  });

  it("sees berth's launcher and node on PATH", async () => {
    const h = await start("/bin/sh", ["-c", "command -v berth > /local/berth && node -e 'process.exit(7)'"]);
    assert.equal((await withTimeout(driver.wait(h), 10_000, "task exit")).exitCode, 7);
    const where = await fs.readFile(path.join(fx.allocDir.taskLocalDir("web"), "berth"), "utf8");
    assert.equal(where.trim(), path.join(berthRoot(), "bin", "berth"));
  });

  it("reports exit codes", async () => {
    const h = await start("/bin/sh", ["-c", "exit 3"]);
    assert.deepEqual(await withTimeout(driver.wait(h), 10_000, "task exit"), { exitCode: 3, signal: null });
  });

  it("binds a volume at its destination (read-write) and refuses writes through a read-only one", async () => {
    const vol = path.join(fx.base, "vol");
    const roVol = path.join(fx.base, "rovol");
    await fs.mkdir(vol);
    await fs.mkdir(roVol);
    await fs.writeFile(path.join(vol, "in"), "from host\n");
    const h = await start(
      "/bin/sh",
      [
        "-c",
        "cat /data/in > /local/seen; echo from task > /data/out; touch /ro/x 2>/dev/null && exit 9; exit 0",
      ],
      {
        mounts: [
          { hostPath: vol, taskPath: "/data", readOnly: false, propagation: "private" },
          { hostPath: roVol, taskPath: "/srv/ro", readOnly: true, propagation: "private" },
          { hostPath: roVol, taskPath: "/ro", readOnly: true, propagation: "host-to-task" },
        ],
        // As root, so that only the read-only bind (not a file mode) can refuse the write to /ro.
        user: "root",
      },
    );
    assert.deepEqual(await withTimeout(driver.wait(h), 10_000, "task exit"), { exitCode: 0, signal: null });
    assert.equal(
      await fs.readFile(path.join(fx.allocDir.taskLocalDir("web"), "seen"), "utf8"),
      "from host\n",
    );
    assert.equal(await fs.readFile(path.join(vol, "out"), "utf8"), "from task\n");
    await assert.rejects(fs.access(path.join(roVol, "x")));
    assert.deepEqual(await mountsUnder(fx.base), []);
  });

  it("propagates mounts to the host only under a bidirectional mount", async () => {
    const plug = path.join(fx.base, "plugin");
    const vol = path.join(fx.base, "vol2");
    await fs.mkdir(plug);
    await fs.mkdir(vol);
    await run("mount", ["--bind", plug, plug]);
    try {
      await run("mount", ["--make-shared", plug]);
      const ready = path.join(fx.allocDir.taskLocalDir("web"), "ready");
      const script = [
        "mkdir -p /csi/staging /local/m /data/m",
        "mount -t tmpfs t1 /csi/staging && echo staged > /csi/staging/f",
        "mount -t tmpfs t2 /local/m",
        "mount -t tmpfs t3 /data/m",
        "touch /local/ready",
        "exec sleep 30",
      ].join(" && ");
      const h = await start("/bin/sh", ["-c", script], {
        mounts: [
          { hostPath: plug, taskPath: "/csi", readOnly: false, propagation: "bidirectional" },
          { hostPath: vol, taskPath: "/data", readOnly: false, propagation: "private" },
        ],
        // A task that mounts is a CSI plugin, privileged: it keeps the agent's user.
        privileged: true,
      });
      await waitForFile(ready);
      assert.deepEqual(await mountsUnder(plug), [path.join(plug, "staging"), plug]);
      assert.equal(await fs.readFile(path.join(plug, "staging", "f"), "utf8"), "staged\n");
      assert.deepEqual(await mountsUnder(fx.allocDir.root), [], "task-private mounts stay in the task");
      assert.deepEqual(await mountsUnder(vol), []);
      await withTimeout(driver.stop(h, 2000), 10_000, "stop");
      assert.deepEqual(await mountsUnder(fx.allocDir.root), []);
      assert.deepEqual(
        await mountsUnder(plug),
        [path.join(plug, "staging"), plug],
        "plugin mounts outlive it",
      );
    } finally {
      await run("umount", ["-R", plug]);
    }
  });

  it("stops with SIGTERM, and SIGKILL after the timeout", async () => {
    const ready = path.join(fx.allocDir.taskLocalDir("web"), "ready2");
    const polite = await start("/bin/sh", ["-c", "touch /local/ready2; exec sleep 30"]);
    await waitForFile(ready);
    await withTimeout(driver.stop(polite, 5000), 4000, "stop by SIGTERM");
    assert.deepEqual(await driver.wait(polite), { exitCode: 143, signal: "SIGTERM" });

    const ready3 = path.join(fx.allocDir.taskLocalDir("web"), "ready3");
    const stubborn = await start("/bin/sh", ["-c", "trap '' TERM; touch /local/ready3; sleep 30; sleep 30"]);
    await waitForFile(ready3);
    const t0 = Date.now();
    await withTimeout(driver.stop(stubborn, 300), 5000, "stop by SIGKILL");
    assert.ok(Date.now() - t0 >= 250, "waited for the kill timeout");
    assert.deepEqual(await driver.wait(stubborn), { exitCode: 137, signal: "SIGKILL" });
  });

  it("recovers a running task from its handle in a new driver instance, and not a recycled pid", async () => {
    const ready = path.join(fx.allocDir.taskLocalDir("web"), "ready4");
    const h = await start("/bin/sh", ["-c", "touch /local/ready4; exec sleep 30"]);
    await waitForFile(ready);
    const restarted = new ExecDriver({ pollMs: 50 });
    const persisted = JSON.parse(JSON.stringify(h)) as TaskHandle;
    assert.equal(await restarted.recover(persisted), true);
    assert.equal(
      await restarted.recover({ ...persisted, state: { ...persisted.state, startTime: "1" } }),
      false,
    );
    const waited = restarted.wait(persisted);
    await withTimeout(restarted.stop(persisted, 5000), 6000, "stop recovered");
    assert.deepEqual(await withTimeout(waited, 5000, "wait recovered"), { exitCode: 143, signal: "SIGTERM" });
    assert.equal(await restarted.recover(persisted), false);
  });

  it("fails start clearly on a bad destination, a missing source, or a symlinked destination", async () => {
    await assert.rejects(
      driver.start(
        fx.cfg("/bin/true", [], {
          mounts: [{ hostPath: fx.base, taskPath: "/a/../etc", readOnly: false, propagation: "private" }],
        }),
      ),
      { code: "ERR_VALIDATION", message: /mount destination "\/a\/\.\.\/etc" must not contain/ },
    );
    await assert.rejects(
      driver.start(
        fx.cfg("/bin/true", [], {
          mounts: [
            { hostPath: path.join(fx.base, "nope"), taskPath: "/x", readOnly: false, propagation: "private" },
          ],
        }),
      ),
      { code: "ERR_DRIVER", message: /does not exist/ },
    );
    const evil = path.join(fx.allocDir.taskLocalDir("web"), "evil");
    const victim = path.join(fx.base, "victim");
    await fs.mkdir(victim);
    await fs.symlink(victim, evil);
    await assert.rejects(
      driver.start(
        fx.cfg("/bin/true", [], {
          mounts: [{ hostPath: fx.base, taskPath: "/local/evil/x", readOnly: false, propagation: "private" }],
        }),
      ),
      {
        code: "ERR_DRIVER",
        message: /setup failed: mount destination \/local\/evil\/x resolves through a symlink/,
      },
    );
    assert.deepEqual(await fs.readdir(victim), []);
    assert.deepEqual(await mountsUnder(fx.base), []);
  });
});
