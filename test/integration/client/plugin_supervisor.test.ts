import assert from "node:assert/strict";
import fsSync from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { TaskRunner } from "../../../src/client/allocrunner/taskrunner/task_runner.js";
import { pluginLayout } from "../../../src/client/allocrunner/taskrunner/plugin_layout.js";
import type { TaskCSIPluginConfig } from "../../../src/structs/job.js";
import { FakeDriver } from "../../fakes/driver.js";
import { eventTypes, makeTask, runnerConfig, tempDataDir } from "../../builders/task_runner.js";
import { RecordingRegistrar } from "../../fakes/plugin_registrar.js";
import { run } from "./driver_fixtures.js";

const plugin = (over: Partial<TaskCSIPluginConfig> = {}): TaskCSIPluginConfig => ({
  ID: "hostpath",
  Type: "monolith",
  MountDir: "/csi",
  StagePublishBaseDir: "",
  HealthTimeout: 5e9,
  ...over,
});

async function until(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function isSharedMount(dir: string): Promise<boolean> {
  const info = await fs.readFile("/proc/self/mountinfo", "utf8");
  return info.split("\n").some((l) => l.split(" ")[4] === dir && / shared:\d+/.test(l));
}

describe("csi_plugin_supervisor hook", () => {
  let dataDir: string;
  before(async () => {
    dataDir = await tempDataDir("berth-ps-");
  });
  after(async () => {
    const left = await mountsUnder(dataDir);
    for (const m of left) await run("umount", ["-l", m]).catch(() => undefined);
    await fs.rm(dataDir, { recursive: true, force: true });
    assert.deepEqual(left, [], "nothing may stay mounted under the data dir");
  });

  it("shares the plugin dir, waits for a good Probe, registers, tracks health, and cleans up", async () => {
    const driver = new FakeDriver("exec");
    const registrar = new RecordingRegistrar();
    let healthy = false;
    const probes: string[] = [];
    const task = makeTask({ CSIPluginConfig: plugin() });
    const tr = new TaskRunner(
      runnerConfig(dataDir, task, driver, {
        jobType: "service",
        pluginRegistrar: registrar,
        csiPlugin: {
          probe: async (sock) => {
            probes.push(sock);
            return healthy;
          },
          startupPollMs: 10,
          probeIntervalMs: 20,
        },
      }),
    );
    const hostDir = path.join(dataDir, "client", "csi", "monolith", "hostpath");
    const socketDir = pluginLayout(
      dataDir,
      { allocId: "alloc-1", taskName: task.Name },
      plugin(),
      true,
    ).socketDir;
    assert.match(socketDir, /\/client\/csi\/plugins\/[0-9a-f]{16}$/);
    const running = tr.run();
    try {
      await until(() => driver.starts.length === 1 && probes.length >= 2, "probing");
      const s = driver.starts[0]!;
      assert.equal(s.env.CSI_ENDPOINT, "unix:///csi/csi.sock");
      // Nomad's layout: this alloc's socket dir at mount_dir, the shared plugin dir at
      // stage_publish_base_dir (/local/csi when unset).
      assert.deepEqual(s.mounts, [
        { hostPath: socketDir, taskPath: "/csi", readOnly: false, propagation: "private" },
        { hostPath: hostDir, taskPath: "/local/csi", readOnly: false, propagation: "bidirectional" },
      ]);
      assert.equal(await isSharedMount(hostDir), true);
      assert.equal(registrar.live.size, 0, "not registered before a successful Probe");
      assert.equal(probes[0], path.join(socketDir, "csi.sock"));

      healthy = true;
      await until(() => registrar.live.size === 2, "registered");
      const reg = registrar.live.get("csi-node/hostpath")!;
      assert.equal(reg.allocId, "alloc-1");
      assert.equal(reg.stagePublishBaseDir, "/local/csi");
      assert.equal(reg.socketPath, path.join(socketDir, "csi.sock"));
      assert.equal(reg.hostDir, hostDir);
      assert.ok(registrar.live.has("csi-controller/hostpath"));

      healthy = false;
      await until(() => eventTypes(tr.state()).includes("Plugin became unhealthy"), "unhealthy event");
      assert.equal(registrar.live.size, 0, "deregistered while unhealthy");
      healthy = true;
      await until(() => registrar.live.size === 2, "registered again");
    } finally {
      await tr.kill("test done");
      await running;
    }
    assert.equal(registrar.live.size, 0, "deregistered on stop");
    assert.deepEqual(await mountsUnder(hostDir), [], "plugin dir unmounted at the end");
    assert.equal(fsSync.existsSync(socketDir), false, "the task's socket dir is gone");
    const types = eventTypes(tr.state()).filter((t) => t.startsWith("Plugin"));
    assert.deepEqual(types, ["Plugin became healthy", "Plugin became unhealthy", "Plugin became healthy"]);
  });

  it("under a driver without mounts (raw_exec) uses the host dir as the plugin's own view", async () => {
    const driver = new FakeDriver("raw_exec", false);
    const registrar = new RecordingRegistrar();
    const task = makeTask({
      Name: "raw-plugin",
      Driver: "raw_exec",
      CSIPluginConfig: plugin({ ID: "raw", Type: "node", StagePublishBaseDir: "/local/csi" }),
    });
    const probes: string[] = [];
    const tr = new TaskRunner(
      runnerConfig(dataDir, task, driver, {
        jobType: "service",
        pluginRegistrar: registrar,
        csiPlugin: {
          probe: async (sock) => {
            probes.push(sock);
            return true;
          },
          startupPollMs: 10,
        },
      }),
    );
    const hostDir = path.join(dataDir, "client", "csi", "node", "raw");
    const socket = pluginLayout(
      dataDir,
      { allocId: "alloc-1", taskName: task.Name },
      task.CSIPluginConfig!,
      false,
    ).socketPath;
    const running = tr.run();
    try {
      await until(() => registrar.live.size === 1, "registered");
      const s = driver.starts[0]!;
      assert.deepEqual(s.mounts, [], "no bidirectional mount for a driver that cannot mount");
      assert.equal(s.env.CSI_ENDPOINT, `unix://${socket}`);
      assert.equal(probes[0], socket);
      const reg = registrar.live.get("csi-node/raw")!;
      assert.equal(reg.mountDir, hostDir);
      assert.equal(reg.stagePublishBaseDir, hostDir);
      assert.equal(reg.hostDir, hostDir);
      assert.equal((await fs.stat(hostDir)).isDirectory(), true);
      // Shared all the same, so exec tasks using its volumes see them published again.
      assert.ok(await isSharedMount(hostDir), "the host dir is a shared self-bind");
      assert.ok(!eventTypes(tr.state()).includes("Driver Failure"));
    } finally {
      await tr.kill("test done");
      await running;
    }
    assert.equal(registrar.live.size, 0, "deregistered on stop");
    assert.deepEqual(await mountsUnder(hostDir), [], "plugin dir unmounted at the end");
  });

  it("under raw_exec leaves a not-yet-shared plugin dir with volumes mounted below it as it is", async () => {
    const hostDir = path.join(dataDir, "client", "csi", "node", "legacy");
    const target = path.join(hostDir, "per-alloc", "a", "v", "rw");
    const src = path.join(dataDir, "legacy-vol");
    await fs.mkdir(target, { recursive: true });
    await fs.mkdir(src, { recursive: true });
    await run("mount", ["--bind", src, target]);
    const registrar = new RecordingRegistrar();
    const task = makeTask({
      Name: "legacy-plugin",
      Driver: "raw_exec",
      CSIPluginConfig: plugin({ ID: "legacy", Type: "node" }),
    });
    const tr = new TaskRunner(
      runnerConfig(dataDir, task, new FakeDriver("raw_exec", false), {
        jobType: "service",
        pluginRegistrar: registrar,
        csiPlugin: { probe: async () => true, startupPollMs: 10 },
      }),
    );
    const running = tr.run();
    try {
      await until(() => registrar.live.size === 1, "registered");
      assert.deepEqual(await mountsUnder(hostDir), [target], "not bound over the volume mounted below");
      await tr.kill("test done");
      await running;
      assert.deepEqual(await mountsUnder(hostDir), [target], "the volume's mount is the plugin's to undo");
    } finally {
      await tr.kill("test done");
      await running;
      await run("umount", [target]).catch(() => undefined);
    }
  });

  it("restarts the task when the plugin is not healthy within health_timeout", async () => {
    const driver = new FakeDriver("exec");
    const registrar = new RecordingRegistrar();
    const task = makeTask({
      Name: "node-plugin",
      CSIPluginConfig: plugin({ ID: "p2", Type: "node", HealthTimeout: 100e6 }),
      RestartPolicy: { Attempts: 5, Interval: 60e9, Delay: 1e6, Mode: "fail" },
    });
    const tr = new TaskRunner(
      runnerConfig(dataDir, task, driver, {
        jobType: "service",
        pluginRegistrar: registrar,
        csiPlugin: { probe: async () => false, startupPollMs: 10 },
      }),
    );
    const running = tr.run();
    try {
      await until(() => driver.starts.length >= 2, "restarted");
      const signaled = tr.state().Events.find((e) => e.Type === "Restart Signaled");
      assert.equal(signaled?.DisplayMessage, "CSI plugin did not become healthy before timeout of 0.1s");
      assert.deepEqual(
        registrar.calls.filter((c) => c.startsWith("register")),
        [],
        "never registered while unhealthy",
      );
    } finally {
      await tr.kill("test done");
      await running;
    }
    assert.deepEqual(await mountsUnder(path.join(dataDir, "client")), []);
  });
});
