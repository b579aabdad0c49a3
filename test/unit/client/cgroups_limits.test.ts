import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatCpuList, parseCpuList } from "../../../src/client/drivers/shared/cgroups/cgroup_fs.js";
import {
  cgroupLimits,
  cpuSharesToWeight,
  taskResources,
} from "../../../src/client/drivers/shared/cgroups/limits.js";
import { terminatedEvent } from "../../../src/client/drivers/exit_event.js";
import { parseKillSignal } from "../../../src/structs/kill_signal.js";

const MIB = 1024 * 1024;

describe("task resources → cgroup limits", () => {
  it("fills Nomad's defaults (100 MHz, 300 MiB) for a task without resources", () => {
    assert.deepEqual(taskResources(undefined), {
      cpuShares: 100,
      memoryMB: 300,
      memoryMaxMB: 0,
      cores: 0,
      reservedCores: [],
    });
    assert.deepEqual(taskResources({ CPU: 0, MemoryMB: 0 }).memoryMB, 300);
  });

  it("prefers what the scheduler allocated (shares, reserved cores) over the task's stanza", () => {
    const r = taskResources(
      { CPU: 500, MemoryMB: 128, Cores: 1 },
      { Cpu: { CpuShares: 2400, ReservedCores: [2, 3] }, Memory: { MemoryMB: 256, MemoryMaxMB: 512 } },
    );
    assert.deepEqual(r, {
      cpuShares: 2400,
      memoryMB: 256,
      memoryMaxMB: 512,
      cores: 2,
      reservedCores: [2, 3],
    });
  });

  it("memory is the hard limit; with memory_max that is the hard one and memory the soft one", () => {
    const plain = cgroupLimits(taskResources({ CPU: 250, MemoryMB: 64 }));
    assert.equal(plain.memoryHardBytes, 64 * MIB);
    assert.equal(plain.memorySoftBytes, 0);
    assert.equal(plain.cpuShares, 250);
    const over = cgroupLimits(taskResources({ MemoryMB: 64, MemoryMaxMB: 256 }));
    assert.equal(over.memoryHardBytes, 256 * MIB);
    assert.equal(over.memorySoftBytes, 64 * MIB);
    const unlimited = cgroupLimits(taskResources({ MemoryMB: 64, MemoryMaxMB: -1 }));
    assert.equal(unlimited.memoryHardBytes, null);
    assert.equal(unlimited.memorySoftBytes, 64 * MIB);
  });

  it("clamps cpu.shares to the kernel's range", () => {
    assert.equal(cgroupLimits({ ...taskResources({ CPU: 1 }) }).cpuShares, 2);
    assert.equal(cgroupLimits({ ...taskResources({ CPU: 1_000_000 }) }).cpuShares, 262_144);
  });

  it("converts shares to v2 weight as opencontainers/cgroups does (ends and defaults fixed)", () => {
    assert.equal(cpuSharesToWeight(0), 0);
    assert.equal(cpuSharesToWeight(2), 1);
    assert.equal(cpuSharesToWeight(3), 2);
    assert.equal(cpuSharesToWeight(262_143), 10_000);
    assert.equal(cpuSharesToWeight(1024), 100);
    assert.equal(cpuSharesToWeight(262_144), 10_000);
    // Monotonic in between, and Nomad's default task (100 MHz) gets a small but non-zero weight.
    assert.equal(cpuSharesToWeight(100), 17);
    assert.ok(cpuSharesToWeight(500) < cpuSharesToWeight(1000));
  });

  it("parses and formats cpuset lists", () => {
    assert.deepEqual(parseCpuList("0-2,5,7-8\n"), [0, 1, 2, 5, 7, 8]);
    assert.deepEqual(parseCpuList(""), []);
    assert.equal(formatCpuList([3, 1]), "1,3");
    assert.throws(() => parseCpuList("a-b"), /bad cpu list "a-b"/);
  });
});

describe("kill_signal names", () => {
  it("defaults to SIGTERM and accepts names case-insensitively, with or without SIG", () => {
    assert.equal(parseKillSignal(undefined), "SIGTERM");
    assert.equal(parseKillSignal(""), "SIGTERM");
    assert.equal(parseKillSignal("SIGINT"), "SIGINT");
    assert.equal(parseKillSignal("hup"), "SIGHUP");
    assert.equal(parseKillSignal("sigusr1"), "SIGUSR1");
  });

  it("refuses unknown and non-terminating signals, naming the value", () => {
    assert.throws(() => parseKillSignal("SIGFOO"), /unknown kill signal "SIGFOO"; expected one of SIGHUP, /);
    assert.throws(() => parseKillSignal("SIGSTOP"), /unknown kill signal "SIGSTOP"/);
    assert.throws(() => parseKillSignal("9"), /unknown kill signal "9"/);
  });
});

describe("Terminated event", () => {
  it("says OOM Killed as Nomad does when the cgroup recorded an OOM kill", () => {
    const ev = terminatedEvent({ exitCode: 137, signal: "SIGKILL", oomKilled: true });
    assert.equal(ev.message, 'Exit Code: 137, Signal: SIGKILL, Exit Message: "OOM Killed"');
    assert.deepEqual(ev.details, {
      exit_code: "137",
      signal: "SIGKILL",
      oom_killed: "true",
      exit_message: "OOM Killed",
    });
  });

  it("says oom_killed false otherwise and keeps a driver's error as the exit message", () => {
    const ev = terminatedEvent({ exitCode: 1, signal: null });
    assert.equal(ev.message, "Exit Code: 1");
    assert.deepEqual(ev.details, { exit_code: "1", signal: "", oom_killed: "false" });
    const lost = terminatedEvent({ exitCode: -1, signal: null, error: "gone" });
    assert.equal(lost.details.exit_message, "gone");
  });
});
