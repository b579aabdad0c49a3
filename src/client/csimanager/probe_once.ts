/** One Probe through a short-lived connection, for the plugin supervisor's health checks. */
import { createCsiClient } from "../../csi/client.js";
import { waitForProbe } from "../../csi/capabilities.js";
import type { Logger } from "../../internal/log.js";

/** True when the plugin at `socketPath` answered a Probe as ready within 5 s. */
export async function probeOnce(socketPath: string, signal: AbortSignal, log: Logger): Promise<boolean> {
  const client = createCsiClient(socketPath, { log: log.child("probe") });
  try {
    await waitForProbe(client, { signal, timeoutMs: 5000, intervalMs: 5000 });
    return true;
  } catch {
    return false;
  } finally {
    client.close();
  }
}
