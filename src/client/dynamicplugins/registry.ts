/**
 * The dynamic plugin registry: which CSI plugin instances run on this node, by role. The plugin
 * supervisor hook registers and deregisters; the csimanager and the csi_hook read and subscribe.
 * Every change is persisted to the client state DB before subscribers hear of it, so a restarted
 * agent starts from the same registry (the supervisor re-registers live plugins anyway).
 *
 * An entry restored from the DB is unconfirmed until its supervisor registers it again (its task
 * was recovered and answered a Probe): waiters do not take it, so after an agent restart an alloc
 * waits for its plugin's recovery instead of getting the socket of a plugin that died meanwhile.
 */
import { BerthError } from "../../structs/errors.js";
import { abortError } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import type { PluginRegistrar, PluginRole, RegisteredPlugin } from "./types.js";

export type RegistryEvent =
  { type: "register"; plugin: RegisteredPlugin } | { type: "deregister"; plugin: RegisteredPlugin };

export type RegistryListener = (event: RegistryEvent) => void;

/** The part of the state DB the registry needs. */
export interface PluginStore {
  putDynamicPlugin(plugin: RegisteredPlugin): void;
  listDynamicPlugins(): RegisteredPlugin[];
  deleteDynamicPlugin(role: PluginRole, pluginId: string): void;
}

export interface WaitForPluginOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export class PluginRegistry implements PluginRegistrar {
  private readonly plugins = new Map<string, RegisteredPlugin>();
  private readonly listeners = new Set<RegistryListener>();
  /** Keys registered by this agent's supervisors (not merely restored from the DB). */
  private readonly confirmed = new Set<string>();

  constructor(
    private readonly store: PluginStore,
    private readonly log: Logger,
  ) {
    for (const p of store.listDynamicPlugins()) this.plugins.set(key(p.role, p.pluginId), p);
  }

  register(plugin: RegisteredPlugin): void {
    this.store.putDynamicPlugin(plugin);
    this.plugins.set(key(plugin.role, plugin.pluginId), { ...plugin });
    this.confirmed.add(key(plugin.role, plugin.pluginId));
    this.log.info("plugin registered", { role: plugin.role, plugin: plugin.pluginId, alloc: plugin.allocId });
    this.emit({ type: "register", plugin: { ...plugin } });
  }

  deregister(role: PluginRole, pluginId: string, allocId: string): void {
    const current = this.plugins.get(key(role, pluginId));
    if (!current || current.allocId !== allocId) return;
    this.store.deleteDynamicPlugin(role, pluginId);
    this.plugins.delete(key(role, pluginId));
    this.confirmed.delete(key(role, pluginId));
    this.log.info("plugin deregistered", { role, plugin: pluginId, alloc: allocId });
    this.emit({ type: "deregister", plugin: { ...current } });
  }

  list(role: PluginRole): RegisteredPlugin[] {
    return [...this.plugins.values()].filter((p) => p.role === role).map((p) => ({ ...p }));
  }

  get(role: PluginRole, pluginId: string): RegisteredPlugin | undefined {
    const p = this.plugins.get(key(role, pluginId));
    return p && { ...p };
  }

  /** Calls `listener` for every later change; returns the unsubscribe function. */
  subscribe(listener: RegistryListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Resolves with the plugin as soon as it is registered (at once when it already is, by this
   * agent: a restored entry waits for its re-registration). Rejects with
   * ERR_CSI_PLUGIN_UNAVAILABLE naming the plugin after `timeoutMs`, or with the abort reason.
   */
  waitForPlugin(
    role: PluginRole,
    pluginId: string,
    opts: WaitForPluginOptions = {},
  ): Promise<RegisteredPlugin> {
    const present = this.get(role, pluginId);
    if (present && this.confirmed.has(key(role, pluginId))) return Promise.resolve(present);
    if (opts.signal?.aborted) return Promise.reject(abortError(opts.signal));
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        unsubscribe();
        if (timer) clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
      };
      const onAbort = () => {
        done();
        reject(abortError(opts.signal));
      };
      const unsubscribe = this.subscribe((ev) => {
        if (ev.type === "register" && ev.plugin.role === role && ev.plugin.pluginId === pluginId) {
          done();
          resolve(ev.plugin);
        }
      });
      if (opts.timeoutMs !== undefined) {
        const ms = opts.timeoutMs;
        timer = setTimeout(() => {
          done();
          reject(
            new BerthError(
              "ERR_CSI_PLUGIN_UNAVAILABLE",
              `CSI plugin ${JSON.stringify(pluginId)} (${role}) did not register on this node within ${ms}ms`,
            ),
          );
        }, ms);
      }
      opts.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private emit(event: RegistryEvent): void {
    for (const l of [...this.listeners]) {
      try {
        l(event);
      } catch (err) {
        this.log.error("plugin registry listener failed", { error: err });
      }
    }
  }
}

function key(role: PluginRole, pluginId: string): string {
  return `${role}\u0000${pluginId}`;
}
