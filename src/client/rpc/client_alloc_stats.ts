/**
 * ClientAlloc.Stats (`/v1/client/allocation/:id/stats`, `alloc status -stats`): what an alloc's
 * running tasks use now, from their drivers (TaskDriver.stats), in Nomad's shapes.
 *
 * Nomad's client samples every task each second to have rates ready; berth samples only when
 * asked: a task with no recent sample is sampled twice FIRST_SAMPLE_GAP_MS apart (the answer waits
 * that long once), later asks reuse the previous answer's sample as the rate's start. Samples older
 * than STALE_MS are dropped, so the map holds only tasks someone watches. A task whose driver
 * cannot tell (or that stopped while being read) is absent from `Tasks`.
 */
import { sleep } from "../../internal/abort.js";
import { notFound } from "../../structs/errors.js";
import { allocUsageOf, type TaskResourceUsage } from "../../structs/resource_usage.js";
import type { TaskDriver, TaskUsageSample } from "../drivers/driver.js";
import { nowNs } from "../drivers/shared/host_usage.js";
import { hostCoreMhz } from "../fingerprint/resources.js";
import type { AllocAccess, ClientAllocPeer } from "./alloc_peer.js";
import { taskUsageFrom } from "./usage_rates.js";

export const FIRST_SAMPLE_GAP_MS = 250;
/** A rate over less than this is noise: the task is sampled afresh. */
const MIN_SPAN_MS = 100;
const STALE_MS = 60_000;

export class UsageSampler {
  private readonly last = new Map<string, TaskUsageSample>();
  private mhz: number | null = null;

  constructor(private readonly coreMhz: () => number = hostCoreMhz) {}

  /** `key`'s usage now, `read` being its driver's sample. */
  async usage(
    key: string,
    read: () => Promise<TaskUsageSample>,
    signal: AbortSignal,
  ): Promise<TaskResourceUsage> {
    this.mhz ??= this.coreMhz();
    let prev = this.last.get(key);
    let cur = await read();
    const spanMs = prev ? (cur.atNs - prev.atNs) / 1e6 : 0;
    if (!prev || spanMs < MIN_SPAN_MS || spanMs > STALE_MS) {
      prev = cur;
      await sleep(FIRST_SAMPLE_GAP_MS, signal);
      cur = await read();
    }
    this.last.set(key, cur);
    this.forgetBefore(cur.atNs - STALE_MS * 1e6);
    return taskUsageFrom(prev, cur, this.mhz);
  }

  private forgetBefore(ns: number): void {
    for (const [k, s] of this.last) if (s.atNs < ns) this.last.delete(k);
  }
}

export function registerAllocStatsHandler(
  peer: ClientAllocPeer,
  allocs: (id: string) => AllocAccess | undefined,
  driverOf: ((name: string) => TaskDriver | undefined) | undefined,
  sampler = new UsageSampler(),
): void {
  peer.handle("ClientAlloc.Stats", async (req, signal) => {
    const a = allocs(req.AllocID);
    if (!a) throw notFound("allocation", req.AllocID);
    if (req.Task && !a.task(req.Task)) throw notFound(`task in allocation ${req.AllocID}:`, req.Task);
    const names = req.Task ? [req.Task] : a.taskNames();
    const tasks: Record<string, TaskResourceUsage> = {};
    await Promise.all(
      names.map(async (name) => {
        const handle = a.task(name)?.runningHandle?.();
        const driver = handle ? driverOf?.(handle.driver) : undefined;
        if (!handle || !driver?.stats) return;
        try {
          tasks[name] = await sampler.usage(`${req.AllocID}/${name}`, () => driver.stats!(handle), signal);
        } catch (err) {
          if (signal.aborted) throw err;
          // Stopped while being read: absent, as a task that is not running.
        }
      }),
    );
    return allocUsageOf(tasks, nowNs());
  });
}
