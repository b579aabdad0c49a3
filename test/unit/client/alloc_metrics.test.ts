/**
 * The published allocation metrics (client/alloc_metrics.ts) from a fake stats source: Nomad's
 * gauge names and labels; memory fields only when measured or not 0; CPU rates from the second
 * sample on (percent from the counters' growth, ticks from one core's MHz); reservations in bytes
 * and MHz; a stopped task's series gone at the next tick, a failing or hung read leaving out only
 * its task; the loop never overlaps a slow tick, and stop() ends it and clears every series. Host
 * metrics (host_metrics.ts): CPU percents and /proc/meminfo parsed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { AllocMetricsPublisher, type SampledTask } from "../../../src/client/alloc_metrics.js";
import type { TaskUsageSample } from "../../../src/client/drivers/driver.js";
import { cpuPercents, HostMetrics, parseMeminfo } from "../../../src/client/host_metrics.js";
import { nullLogger } from "../../../src/internal/log.js";
import { Telemetry } from "../../../src/internal/metrics/telemetry.js";
import { emptyUsage } from "../../../src/structs/resource_usage.js";

const MiB = 1024 * 1024;

function sample(atMs: number, cpuMs: number, rss: number): TaskUsageSample {
  return {
    atNs: atMs * 1e6,
    memory: { ...emptyUsage().MemoryStats, RSS: rss, Measured: ["RSS"] },
    cpu: {
      totalNs: cpuMs * 1e6,
      userNs: cpuMs * 1e6,
      systemNs: 0,
      throttledPeriods: 0,
      throttledTimeNs: 0,
      measured: ["User Mode", "Percent"],
    },
  };
}

function task(alloc: string, name: string, read: () => Promise<TaskUsageSample>): SampledTask {
  return {
    labels: { job: "web", task_group: "g", alloc_id: alloc, task: name, namespace: "default" },
    memoryMB: 256,
    memoryMaxMB: 0,
    cpuMhz: 500,
    read,
  };
}

/** The Prometheus lines of `t` that start with `prefix`. */
async function lines(t: Telemetry, prefix: string): Promise<string[]> {
  return (await t.prometheus()).split("\n").filter((l) => l.startsWith(prefix));
}

test("a running task's gauges: Nomad's names and labels, CPU from the second sample on", async () => {
  const t = new Telemetry({ disableHostname: true, collectionIntervalMs: 0 });
  // 1 s apart, 0.5 s of CPU: 50 % of one core; at 2000 MHz a core that is 1000 MHz.
  const samples = [sample(1000, 100, 10 * MiB), sample(2000, 600, 12 * MiB)];
  let running = [task("a1", "t", async () => samples.shift()!)];
  const p = new AllocMetricsPublisher({
    telemetry: t,
    intervalMs: 1000,
    tasks: () => running,
    coreMhz: () => 2000,
    log: nullLogger,
  });
  const ac = new AbortController();
  const labels = 'job="web",task_group="g",alloc_id="a1",task="t",namespace="default"';

  await p.tick(ac.signal);
  assert.deepEqual(await lines(t, "berth_client_allocs_"), [
    `berth_client_allocs_memory_rss{${labels}} 10485760`,
    `berth_client_allocs_memory_allocated{${labels}} 268435456`,
    `berth_client_allocs_cpu_allocated{${labels}} 500`,
  ]);

  await p.tick(ac.signal);
  const second = await lines(t, "berth_client_allocs_");
  for (const l of [
    `berth_client_allocs_memory_rss{${labels}} 12582912`,
    `berth_client_allocs_cpu_total_percent{${labels}} 50`,
    `berth_client_allocs_cpu_user{${labels}} 50`,
    `berth_client_allocs_cpu_system{${labels}} 0`,
    `berth_client_allocs_cpu_total_ticks{${labels}} 1000`,
    `berth_client_allocs_cpu_throttled_periods{${labels}} 0`,
  ]) {
    assert.ok(second.includes(l), `${l} in:\n${second.join("\n")}`);
  }
  assert.ok(!second.some((l) => l.includes("memory_cache")), "an unmeasured 0 is not published");
  assert.ok(!second.some((l) => l.includes("max_allocated")), "no memory_max: no series");

  running = [];
  await p.tick(ac.signal);
  assert.deepEqual(await lines(t, "berth_client_allocs_"), [], "the stopped task's series are gone");
});

test("a read that fails or hangs leaves out only its task", async () => {
  const t = new Telemetry({ disableHostname: true, collectionIntervalMs: 0 });
  const p = new AllocMetricsPublisher({
    telemetry: t,
    intervalMs: 1000,
    readTimeoutMs: 50,
    tasks: () => [
      task("a1", "ok", async () => sample(1000, 1, MiB)),
      task("a2", "gone", () => Promise.reject(new Error("no such process"))),
      task("a3", "hung", () => new Promise<TaskUsageSample>(() => undefined)),
    ],
    coreMhz: () => 1000,
    log: nullLogger,
  });
  await p.tick(new AbortController().signal);
  const rss = await lines(t, "berth_client_allocs_memory_rss");
  assert.deepEqual(rss, [
    'berth_client_allocs_memory_rss{job="web",task_group="g",alloc_id="a1",task="ok",namespace="default"} 1048576',
  ]);
});

test("the loop: ticks never overlap, stop() ends it and clears every series", async () => {
  const t = new Telemetry({ disableHostname: true, collectionIntervalMs: 0 });
  let calls = 0;
  let release: () => void = () => undefined;
  const slow = new Promise<void>((r) => (release = r));
  const p = new AllocMetricsPublisher({
    telemetry: t,
    intervalMs: 10,
    readTimeoutMs: 60_000,
    tasks: () => {
      calls++;
      return [
        task("a1", "t", async () => {
          if (calls === 1) await slow;
          return sample(Date.now(), 1, MiB);
        }),
      ];
    },
    coreMhz: () => 1000,
    log: nullLogger,
  });
  p.start();
  try {
    // Twenty intervals pass while the first tick's read hangs: no second tick starts.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(calls, 1, "one tick in flight, none started beside it");
    release();
    const deadline = Date.now() + 10_000;
    while (calls < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.ok(calls >= 3, "the loop goes on once the slow tick ends");
    assert.equal((await lines(t, "berth_client_allocs_memory_rss")).length, 1);
  } finally {
    release();
    await p.stop();
  }
  const after = calls;
  assert.deepEqual(await lines(t, "berth_client_allocs_"), [], "stop() removed the series");
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(calls, after, "no tick after stop()");
});

test("host metrics: CPU percents between two readings, /proc/meminfo parsed", async () => {
  const a = { user: 100, nice: 0, sys: 50, idle: 850, irq: 0 };
  const b = { user: 400, nice: 100, sys: 150, idle: 1350, irq: 0 };
  assert.deepEqual(cpuPercents(a, b), { total: 50, user: 40, system: 10, idle: 50 });
  assert.equal(cpuPercents(a, a), null, "no time passed: no rate");
  const mem = parseMeminfo("MemTotal:       1000 kB\nMemFree:         200 kB\nMemAvailable:    600 kB\n");
  assert.deepEqual(mem, { total: 1024000, available: 614400, used: 409600, free: 204800 });
  assert.equal(parseMeminfo("nonsense"), null);

  const t = new Telemetry({ disableHostname: true, collectionIntervalMs: 0 });
  const readings = [[{ times: a, speed: 2000 }], [{ times: b, speed: 2000 }]];
  const host = new HostMetrics(t, () => ({ node_id: "n1", datacenter: "dc1", node_class: "" }), {
    cpus: () => readings.shift() ?? [],
    meminfo: async () => "MemTotal: 1000 kB\nMemFree: 200 kB\nMemAvailable: 600 kB\n",
  });
  const ac = new AbortController();
  await host.tick(ac.signal);
  assert.deepEqual(await lines(t, "berth_client_host_cpu"), [], "one reading: no CPU rate yet");
  await host.tick(ac.signal);
  const node = 'node_id="n1",datacenter="dc1",node_class="none"';
  const got = await lines(t, "berth_client_host_");
  for (const l of [
    `berth_client_host_memory_total{${node}} 1024000`,
    `berth_client_host_memory_used{${node}} 409600`,
    `berth_client_host_cpu_total_percent{${node},cpu="cpu0"} 50`,
    `berth_client_host_cpu_total_ticks{${node},cpu="cpu0"} 1000`,
  ]) {
    assert.ok(got.includes(l), `${l} in:\n${got.join("\n")}`);
  }
  host.clear();
  assert.deepEqual(await lines(t, "berth_client_host_"), []);
});
