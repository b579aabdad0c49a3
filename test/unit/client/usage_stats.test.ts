/**
 * Alloc stats' pure parts: rates from two samples (usage_rates.ts), the alloc's rollup, the
 * Engine's stats answer as a sample, /proc/<pid>/stat parsing and the process tree, the cgroup
 * readers over control files as the kernel writes them (v1 and v2), and `alloc status -stats`'s
 * tables.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { verboseUsageLines } from "../../../src/cli/commands/alloc_resources.js";
import { engineStatsToSample } from "../../../src/client/drivers/docker/stats.js";
import type { TaskUsageSample } from "../../../src/client/drivers/driver.js";
import { v1Usage, v2Usage } from "../../../src/client/drivers/shared/cgroups/usage.js";
import { parseProcStat, processTree, sumProcs } from "../../../src/client/drivers/shared/proc_usage.js";
import { taskUsageFrom } from "../../../src/client/rpc/usage_rates.js";
import { allocUsageOf } from "../../../src/structs/resource_usage.js";

function sample(atMs: number, totalMs: number, userMs: number, systemMs: number): TaskUsageSample {
  return {
    atNs: atMs * 1e6,
    memory: {
      RSS: 10,
      Cache: 0,
      Swap: 0,
      Usage: 20,
      MaxUsage: 0,
      KernelUsage: 0,
      KernelMaxUsage: 0,
      Measured: ["RSS", "Usage"],
    },
    cpu: {
      totalNs: totalMs * 1e6,
      userNs: userMs * 1e6,
      systemNs: systemMs * 1e6,
      throttledPeriods: 3,
      throttledTimeNs: 7,
      measured: ["Percent", "User Mode", "System Mode"],
    },
  };
}

test("rates: CPU time over wall time in percent of one core, MHz from it; none without an earlier sample", () => {
  const u = taskUsageFrom(sample(1000, 500, 400, 100), sample(2000, 2000, 1600, 400), 2000);
  assert.equal(u.ResourceUsage.CpuStats.Percent, 150);
  assert.equal(u.ResourceUsage.CpuStats.UserMode, 120);
  assert.equal(u.ResourceUsage.CpuStats.SystemMode, 30);
  assert.equal(u.ResourceUsage.CpuStats.TotalTicks, 3000);
  assert.equal(u.ResourceUsage.CpuStats.ThrottledPeriods, 3);
  assert.equal(u.ResourceUsage.MemoryStats.Usage, 20);
  assert.equal(u.Timestamp, 2000 * 1e6);
  assert.equal(
    taskUsageFrom(undefined, sample(2000, 2000, 1600, 400), 2000).ResourceUsage.CpuStats.Percent,
    0,
  );
  // Counters that went back (a restart, processes that exited): 0, never negative.
  assert.equal(
    taskUsageFrom(sample(1000, 5000, 4000, 1000), sample(2000, 100, 80, 20), 2000).ResourceUsage.CpuStats
      .Percent,
    0,
  );
});

test("the alloc's usage is its tasks' summed, Measured their union", () => {
  const a = taskUsageFrom(sample(0, 0, 0, 0), sample(1000, 500, 500, 0), 1000);
  const b = taskUsageFrom(sample(0, 0, 0, 0), sample(1000, 250, 0, 250), 1000);
  b.ResourceUsage.MemoryStats.Measured = ["Cache"];
  const all = allocUsageOf({ a, b }, 5);
  assert.equal(all.ResourceUsage.CpuStats.Percent, 75);
  assert.equal(all.ResourceUsage.MemoryStats.RSS, 20);
  assert.deepEqual(all.ResourceUsage.MemoryStats.Measured.sort(), ["Cache", "RSS", "Usage"]);
  assert.equal(all.Timestamp, 1000 * 1e6);
  assert.equal(allocUsageOf({}, 5).Timestamp, 5, "no task: now");
});

test("the Engine's stats: v1 names (rss, cache, max_usage) and v2 names (anon, file, no max)", () => {
  const v1 = engineStatsToSample(
    {
      memory_stats: { usage: 900, max_usage: 1000, stats: { rss: 300, cache: 500, swap: 0 } },
      cpu_stats: {
        cpu_usage: { total_usage: 7, usage_in_usermode: 5, usage_in_kernelmode: 2 },
        throttling_data: { throttled_periods: 1, throttled_time: 9 },
      },
    },
    42,
  );
  assert.deepEqual(
    [v1.memory.RSS, v1.memory.Cache, v1.memory.Usage, v1.memory.MaxUsage],
    [300, 500, 900, 1000],
  );
  assert.ok(v1.memory.Measured.includes("Max Usage"));
  assert.deepEqual([v1.cpu.totalNs, v1.cpu.userNs, v1.cpu.systemNs, v1.cpu.throttledTimeNs], [7, 5, 2, 9]);
  const v2 = engineStatsToSample({ memory_stats: { usage: 900, stats: { anon: 300, file: 600 } } }, 42);
  assert.deepEqual([v2.memory.RSS, v2.memory.Cache, v2.memory.MaxUsage], [300, 600, 0]);
  assert.ok(!v2.memory.Measured.includes("Max Usage"));
});

test("/proc/<pid>/stat: fields after the last ')' (a command name may hold both spaces and ')')", () => {
  const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
  const parsed = parseProcStat(`123 (we ird) name) ${fields.join(" ")}\n`);
  assert.deepEqual(parsed, { utime: 14, stime: 15 });
  assert.equal(parseProcStat("garbage"), null);
});

test("the process tree of a pid holds its descendants; their CPU time and RSS are summed", async () => {
  const child = spawn("/bin/sh", ["-c", "sleep 30 & wait"], { stdio: "ignore" });
  try {
    let tree: number[] = [];
    for (let i = 0; i < 50 && tree.length < 3; i++) {
      await new Promise((r) => setTimeout(r, 50));
      tree = await processTree(process.pid);
    }
    assert.ok(tree.includes(process.pid) && tree.includes(child.pid!), String(tree));
    assert.ok(tree.length >= 3, "the shell's sleep too");
    const sum = await sumProcs([process.pid], true);
    assert.ok(sum.userNs > 0 && sum.rssBytes > 1 << 20, JSON.stringify(sum));
  } finally {
    child.kill("SIGKILL");
  }
});

test("cgroup readers: v2 and v1 control files; a file the kernel lacks is left out of Measured", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-usage-"));
  try {
    const v2 = path.join(dir, "v2");
    fs.mkdirSync(v2);
    fs.writeFileSync(path.join(v2, "memory.current"), "4096\n");
    fs.writeFileSync(path.join(v2, "memory.stat"), "anon 1024\nfile 2048\nkernel 12\n");
    fs.writeFileSync(
      path.join(v2, "cpu.stat"),
      "usage_usec 3\nuser_usec 2\nsystem_usec 1\nnr_throttled 4\nthrottled_usec 5\n",
    );
    fs.writeFileSync(path.join(v2, "cgroup.procs"), "11\n12\n");
    const u2 = await v2Usage(v2);
    assert.deepEqual([u2.memory.RSS, u2.memory.Cache, u2.memory.Usage], [1024, 2048, 4096]);
    assert.deepEqual(u2.memory.Measured, ["RSS", "Cache", "Usage"]);
    assert.deepEqual([u2.cpu?.totalNs, u2.cpu?.userNs, u2.cpu?.throttledTimeNs], [3000, 2000, 5000]);
    assert.deepEqual(u2.pids, [11, 12]);
    const mem = path.join(dir, "mem");
    const cpu = path.join(dir, "cpu");
    fs.mkdirSync(mem);
    fs.mkdirSync(cpu);
    fs.writeFileSync(path.join(mem, "memory.usage_in_bytes"), "8192\n");
    fs.writeFileSync(path.join(mem, "memory.max_usage_in_bytes"), "9000\n");
    fs.writeFileSync(path.join(mem, "memory.stat"), "cache 100\nrss 200\nswap 0\n");
    fs.writeFileSync(path.join(cpu, "cpu.stat"), "nr_periods 9\nnr_throttled 2\nthrottled_time 77\n");
    const u1 = await v1Usage({ memory: mem, cpu });
    assert.deepEqual(
      [u1.memory.RSS, u1.memory.Cache, u1.memory.Usage, u1.memory.MaxUsage],
      [200, 100, 8192, 9000],
    );
    assert.ok(!u1.memory.Measured.includes("Kernel Usage"));
    assert.equal(u1.cpu, null, "v1 without cpuacct: CPU from the processes");
    assert.deepEqual(u1.throttle, { periods: 2, timeNs: 77, measured: true });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("alloc status -stats: the measured fields only, sorted, as Nomad prints them", () => {
  const u = taskUsageFrom(sample(1000, 500, 400, 100), sample(2000, 1000, 800, 200), 2000).ResourceUsage;
  assert.deepEqual(verboseUsageLines(u), [
    "Memory Stats",
    "RSS   Usage",
    "10 B  20 B",
    "",
    "CPU Stats",
    "Percent  System Mode  User Mode",
    "50.00%   10.00%       40.00%",
  ]);
});
