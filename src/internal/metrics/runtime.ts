/**
 * The agent process's own health, as Nomad publishes its Go runtime's (`nomad.runtime.*`): memory
 * (`alloc_bytes`: the V8 heap in use, Nomad's name for Go's; `heap_total_bytes`; `sys_bytes`: the
 * resident set; `external_bytes`: buffers outside the heap), `total_gc_runs` and
 * `total_gc_pause_ns` (Nomad's names; Node reports each collection as it happens), the event loop's
 * delay (`event_loop_delay_max_ms` and `_p99_ms` since the last collection: what Go's
 * `num_goroutines` tells of a Go agent, how busy the one thread is), `active_handles`, `open_fds`
 * and the CPU seconds spent (`cpu_user_seconds`, `cpu_system_seconds`). Gauges, filled at scrape
 * time (Telemetry.collect), in both the JSON and the Prometheus answer of /v1/metrics.
 */
import fs from "node:fs";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import type { Telemetry } from "./telemetry.js";

/** Starts measuring; returns the function that stops it (the agent's stop calls it). */
export function collectRuntimeMetrics(t: Telemetry): () => void {
  const gauge = (name: string, help: string) => t.gauge(["runtime", name], help, []);
  const allocBytes = gauge("alloc_bytes", "Bytes of the V8 heap in use.");
  const heapTotal = gauge("heap_total_bytes", "Bytes of the V8 heap reserved.");
  const sysBytes = gauge("sys_bytes", "Resident set size of the agent process, bytes.");
  const external = gauge("external_bytes", "Bytes held outside the V8 heap (buffers).");
  const gcRuns = gauge("total_gc_runs", "Garbage collections since the agent started.");
  const gcPause = gauge("total_gc_pause_ns", "Time spent in garbage collection since start, ns.");
  const delayMax = gauge("event_loop_delay_max_ms", "Longest event-loop delay since the last collection.");
  const delayP99 = gauge(
    "event_loop_delay_p99_ms",
    "99th percentile event-loop delay since the last collection.",
  );
  const handles = gauge("active_handles", "Active handles and requests (sockets, timers, files).");
  const fds = gauge("open_fds", "Open file descriptors of the agent process.");
  const cpuUser = gauge("cpu_user_seconds", "User CPU time of the agent process.");
  const cpuSystem = gauge("cpu_system_seconds", "System CPU time of the agent process.");

  let runs = 0;
  let pauseNs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      runs += 1;
      pauseNs += Math.round(entry.duration * 1e6);
    }
  });
  gc.observe({ entryTypes: ["gc"] });
  const delay = monitorEventLoopDelay({ resolution: 20 });
  delay.enable();

  const stopCollecting = t.collect(() => {
    const mem = process.memoryUsage();
    allocBytes.set({}, mem.heapUsed);
    heapTotal.set({}, mem.heapTotal);
    sysBytes.set({}, mem.rss);
    external.set({}, mem.external);
    gcRuns.set({}, runs);
    gcPause.set({}, pauseNs);
    if (delay.count > 0) {
      delayMax.set({}, delay.max / 1e6);
      delayP99.set({}, delay.percentile(99) / 1e6);
    }
    delay.reset();
    handles.set({}, process.getActiveResourcesInfo().length);
    fds.set({}, openFds());
    const cpu = process.cpuUsage();
    cpuUser.set({}, cpu.user / 1e6);
    cpuSystem.set({}, cpu.system / 1e6);
  });
  return () => {
    stopCollecting();
    gc.disconnect();
    delay.disable();
  };
}

/** The number of entries of /proc/self/fd (NaN where there is no /proc: the gauge is then not set). */
function openFds(): number {
  try {
    return fs.readdirSync("/proc/self/fd").length;
  } catch {
    return Number.NaN;
  }
}
