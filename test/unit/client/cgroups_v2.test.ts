/**
 * The cgroup v2 writer and the host detection against a temp directory tree (the writer only
 * writes files; this host mounts v1, whose real cgroups the integration tests exercise).
 */
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import path from "node:path";
import { describe, it } from "node:test";
import { detectCgroups } from "../../../src/client/drivers/shared/cgroups/detect.js";
import { cgroupLimits, taskResources } from "../../../src/client/drivers/shared/cgroups/limits.js";
import { CgroupManager, cgroupFromState } from "../../../src/client/drivers/shared/cgroups/manager.js";
import { V2Cgroup } from "../../../src/client/drivers/shared/cgroups/v2.js";
import { tempDir } from "../../helpers/temp_dir.js";

const MIB = 1024 * 1024;

async function v2Tree(): Promise<{ root: string; procCgroup: string }> {
  const root = tempDir("berth-cg2-");
  const agent = path.join(root, "system.slice", "berth.service");
  await fs.mkdir(agent, { recursive: true });
  await fs.writeFile(path.join(root, "cgroup.controllers"), "cpuset cpu io memory pids\n");
  await fs.writeFile(path.join(agent, "cgroup.controllers"), "cpuset cpu memory pids\n");
  await fs.writeFile(path.join(agent, "cgroup.subtree_control"), "");
  await fs.writeFile(path.join(agent, "cpuset.cpus.effective"), "0-3\n");
  const procCgroup = path.join(root, "proc-self-cgroup");
  await fs.writeFile(procCgroup, "0::/system.slice/berth.service\n");
  return { root, procCgroup };
}

const read = (p: string) => fs.readFile(p, "utf8");

describe("cgroup v2 writer", () => {
  it("detects v2 and places berth below the agent's own cgroup", async () => {
    const { root, procCgroup } = await v2Tree();
    const host = await detectCgroups({ root, procCgroup, anyUser: true });
    assert.deepEqual(host, { mode: "v2", base: path.join(root, "system.slice", "berth.service") });
  });

  it("writes memory.max, memory.low, memory.swap.max, cpu.weight and enables the controllers", async () => {
    const { root, procCgroup } = await v2Tree();
    const mgr = new CgroupManager({ parent: "berth", detect: { root, procCgroup, anyUser: true } });
    const agent = path.join(root, "system.slice", "berth.service");
    // The kernel creates memory.swap.max with the cgroup; a plain tree needs it made first.
    await fs.mkdir(path.join(agent, "berth", "a1.web.scope"), { recursive: true });
    await fs.writeFile(path.join(agent, "berth", "a1.web.scope", "memory.swap.max"), "max\n");
    const limits = cgroupLimits(taskResources({ CPU: 1024, MemoryMB: 64, MemoryMaxMB: 128 }));
    const cg = await mgr.create("a1", "web", limits);
    assert.ok(cg instanceof V2Cgroup);
    const dir = path.join(agent, "berth", "a1.web.scope");
    assert.equal(cg.dir, dir);
    assert.equal(await read(path.join(dir, "memory.max")), String(128 * MIB));
    assert.equal(await read(path.join(dir, "memory.low")), String(64 * MIB));
    assert.equal(await read(path.join(dir, "memory.swap.max")), "0");
    assert.equal(await read(path.join(dir, "cpu.weight")), "100");
    await assert.rejects(read(path.join(dir, "cpuset.cpus")), { code: "ENOENT" });
    assert.equal(await read(path.join(agent, "cgroup.subtree_control")), "+memory +cpu");
    assert.equal(await read(path.join(agent, "berth", "cgroup.subtree_control")), "+memory +cpu");
    await cg.addPid(4242);
    assert.equal(await read(path.join(dir, "cgroup.procs")), "4242");
  });

  it("writes memory.max = max without a hard limit, and memory.low 0 without a soft one", async () => {
    const { root } = await v2Tree();
    const base = path.join(root, "system.slice", "berth.service");
    const unlimited = await V2Cgroup.create(
      base,
      "p",
      "a.t",
      cgroupLimits(taskResources({ MemoryMB: 32, MemoryMaxMB: -1 })),
      null,
    );
    assert.equal(await read(path.join(unlimited.dir, "memory.max")), "max");
    assert.equal(await read(path.join(unlimited.dir, "memory.low")), String(32 * MIB));
    const hard = await V2Cgroup.create(base, "p", "b.t", cgroupLimits(taskResources({ MemoryMB: 32 })), null);
    assert.equal(await read(path.join(hard.dir, "memory.max")), String(32 * MIB));
    assert.equal(await read(path.join(hard.dir, "memory.low")), "0");
  });

  it("pins a task with cores to free cores of the agent's cpuset, never one another task holds", async () => {
    const { root, procCgroup } = await v2Tree();
    const mgr = new CgroupManager({ parent: "berth", detect: { root, procCgroup, anyUser: true } });
    const agent = path.join(root, "system.slice", "berth.service");
    const two = cgroupLimits(taskResources({ Cores: 2, MemoryMB: 16 }));
    const [a, b] = await Promise.all([mgr.create("a1", "x", two), mgr.create("a2", "y", two)]);
    const cpusA = await read(path.join((a as V2Cgroup).dir, "cpuset.cpus"));
    const cpusB = await read(path.join((b as V2Cgroup).dir, "cpuset.cpus"));
    assert.deepEqual([cpusA, cpusB].sort(), ["0,1", "2,3"]);
    assert.equal(await read(path.join(agent, "cgroup.subtree_control")), "+memory +cpu +cpuset");
    await assert.rejects(
      mgr.create("a3", "z", two),
      /task needs 2 cores but only 0 of the agent's cpuset \(0,1,2,3\) are free/,
    );
    const reserved = cgroupLimits(
      taskResources(
        { Cores: 1 },
        { Cpu: { CpuShares: 1000, ReservedCores: [7] }, Memory: { MemoryMB: 16, MemoryMaxMB: 0 } },
      ),
    );
    await assert.rejects(
      mgr.create("a4", "w", reserved),
      /reserved cores 7 are not in the agent's cpuset \(0,1,2,3\)/,
    );
  });

  it("reads the OOM kill counter of memory.events", async () => {
    const { root } = await v2Tree();
    const dir = path.join(root, "x.scope");
    await fs.mkdir(dir);
    const cg = new V2Cgroup(dir);
    await fs.writeFile(path.join(dir, "memory.events"), "low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\n");
    assert.equal(await cg.oomKilled(), false);
    await fs.writeFile(path.join(dir, "memory.events"), "low 0\nhigh 0\nmax 9\noom 2\noom_kill 1\n");
    assert.equal(await cg.oomKilled(), true);
  });

  it("is found again from the state a task handle records", async () => {
    const cg = cgroupFromState(new V2Cgroup("/sys/fs/cgroup/x/berth/a.t.scope").state);
    assert.ok(cg instanceof V2Cgroup);
    assert.equal(cg.dir, "/sys/fs/cgroup/x/berth/a.t.scope");
    assert.equal(cgroupFromState(""), null);
    assert.equal(cgroupFromState("{not json"), null);
    assert.equal(cgroupFromState(JSON.stringify({ mode: "v2", dir: "relative/x" })), null);
  });
});

describe("cgroup host detection", () => {
  it("takes v1 controllers from mountinfo, relative to each mount's root (containers)", async () => {
    const root = tempDir("berth-cg1-");
    const procCgroup = path.join(root, "cgroup");
    const mountinfo = path.join(root, "mountinfo");
    await fs.writeFile(
      procCgroup,
      "12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc/inner\n3:cpuset:/\n1:name=systemd:/\n0::/\n",
    );
    await fs.writeFile(
      mountinfo,
      [
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
        "32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct",
        "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset",
        "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
      ].join("\n"),
    );
    const host = await detectCgroups({ root, procCgroup, mountinfo, anyUser: true });
    assert.deepEqual(host, {
      mode: "v1",
      bases: {
        memory: "/sys/fs/cgroup/memory/inner",
        cpu: "/sys/fs/cgroup/cpu,cpuacct",
        cpuset: "/sys/fs/cgroup/cpuset",
      },
    });
  });

  it("is off without a memory controller", async () => {
    const root = tempDir("berth-cg0-");
    const host = await detectCgroups({
      root,
      procCgroup: path.join(root, "none"),
      mountinfo: path.join(root, "none"),
      anyUser: true,
    });
    assert.deepEqual(host, { mode: "off", reason: "no cgroup memory controller is mounted" });
  });
});
