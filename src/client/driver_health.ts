/**
 * Drivers fingerprinted again while the agent runs, as Nomad's driver manager does: a Docker daemon
 * that stops makes the docker driver unhealthy (the scheduler then says "missing drivers" for this
 * node), one that starts later makes it healthy, without an agent restart. A change of any
 * driver's Detected/Healthy/HealthDescription is written into `infos` and reported through
 * `onChange` (the client sends the node's fingerprint). Resolves once `signal` aborts.
 */
import { sleep } from "../internal/abort.js";
import type { DriverInfo } from "../structs/node.js";
import type { TaskDriver } from "./drivers/driver.js";

/** Nomad's driver fingerprint period. */
export const DRIVER_FINGERPRINT_INTERVAL_MS = 30_000;

export async function watchDriverHealth(
  drivers: TaskDriver[],
  infos: Record<string, DriverInfo>,
  signal: AbortSignal,
  onChange: () => void,
  intervalMs = DRIVER_FINGERPRINT_INTERVAL_MS,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await sleep(intervalMs, signal);
    } catch {
      return;
    }
    let changed = false;
    for (const d of drivers) {
      const next = await d.fingerprint().catch((err: unknown): DriverInfo => ({
        Detected: false,
        Healthy: false,
        HealthDescription: `fingerprint failed: ${err instanceof Error ? err.message : String(err)}`,
        SupportsMounts: d.capabilities().supportsMounts,
      }));
      const prev = infos[d.name];
      if (
        !prev ||
        prev.Detected !== next.Detected ||
        prev.Healthy !== next.Healthy ||
        prev.HealthDescription !== next.HealthDescription
      ) {
        infos[d.name] = next;
        changed = true;
      }
    }
    if (changed && !signal.aborted) onChange();
  }
}
