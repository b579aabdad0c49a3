/**
 * Wake-ups for work that waits on a node plugin (issue 8 item 10): a release between retries is
 * retried as soon as its plugin registers again (its supervisor found it healthy: started,
 * restarted or recovered from a hang), instead of waiting out up to a minute of backoff. Used as
 * retryWithBackoff's `wake`.
 */
import type { RegistryListener } from "../dynamicplugins/registry.js";

export interface WakeRegistry {
  subscribe(listener: RegistryListener): () => void;
}

/**
 * Resolves when node plugin `pluginId` registers, or when `over` aborts (the sleep it could cut
 * short is over); leaves no subscription behind.
 */
export function nodePluginRegistered(
  registry: WakeRegistry,
  pluginId: string,
  over: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    const finish = () => {
      unsubscribe();
      over.removeEventListener("abort", finish);
      resolve();
    };
    const unsubscribe = registry.subscribe((ev) => {
      if (ev.type === "register" && ev.plugin.role === "csi-node" && ev.plugin.pluginId === pluginId)
        finish();
    });
    over.addEventListener("abort", finish, { once: true });
  });
}
