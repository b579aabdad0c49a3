/**
 * The csimanager: follows the dynamic plugin registry, keeps one PluginInstance per registered
 * (role, plugin) and reports their fingerprints as the node's CSIControllerPlugins /
 * CSINodePlugins through `onFingerprint` whenever they change. It is also where the volume manager
 * and the ClientCSI handlers get a plugin's connection.
 *
 * Connections follow the plugin (connection.ts): the clients handed out route every call to the
 * instance registered for the plugin at that moment. A plugin that deregisters (its supervisor's
 * probes failed, or its task stopped) has its connection dropped, so calls waiting on a hung plugin
 * fail at once and retry; one that registers again gets a new instance with a fresh connection.
 */
import { BerthError } from "../../structs/errors.js";
import type { CSIInfo } from "../../structs/plugin.js";
import type { Logger } from "../../internal/log.js";
import type { CsiClient, CsiControllerCapabilities, CsiNodeCapabilities } from "../../csi/types.js";
import type { PluginRole, RegisteredPlugin } from "../dynamicplugins/types.js";
import type { RegistryListener } from "../dynamicplugins/registry.js";
import { PluginInstance } from "./instance.js";
import { followingClient, type PluginConnection } from "./connection.js";
import { DEFAULT_CALL_TIMEOUT_MS } from "../../csi/call_deadlines.js";
import type { CsiCallOptions } from "../../csi/types.js";
import { throwIfAborted } from "../../internal/abort.js";

/** The registry as the manager reads it. */
export interface PluginSource {
  list(role: PluginRole): RegisteredPlugin[];
  subscribe(listener: RegistryListener): () => void;
}

/** `pluginId` names the plugin the connection is for (metrics label its calls with it). */
export type CsiClientFactory = (socketPath: string, pluginId?: string) => CsiClient;

export interface CsiManagerConfig {
  registry: PluginSource;
  clientFactory: CsiClientFactory;
  log: Logger;
  /** Re-fingerprint period; 30 s by default. */
  fingerprintIntervalMs?: number;
  /** Deadline of each fingerprint call; 10 s by default. */
  callTimeoutMs?: number;
  onFingerprint: (controllers: Record<string, CSIInfo>, nodes: Record<string, CSIInfo>) => void;
}

/** A node plugin connection with the capabilities its last fingerprint reported. */
export interface NodePluginHandle {
  client: CsiClient;
  capabilities: CsiNodeCapabilities;
}

/** The volume manager's view of the csimanager. */
export interface NodePluginSource {
  nodePlugin(pluginId: string, signal?: AbortSignal): Promise<NodePluginHandle>;
}

export class CsiManager implements NodePluginSource {
  private readonly instances = new Map<string, PluginInstance>();
  private readonly stopping = new Set<Promise<void>>();
  private unsubscribe: (() => void) | undefined;
  private lastReported = "";
  /** Calls waiting for an instance of a plugin that is not registered, by instance key. */
  private readonly waiters = new Map<string, Set<() => void>>();
  private stopped = false;

  constructor(private readonly cfg: CsiManagerConfig) {}

  /** Starts an instance for every plugin already registered, then follows the registry. */
  start(): void {
    if (this.unsubscribe) return;
    this.unsubscribe = this.cfg.registry.subscribe((ev) => {
      if (ev.type === "register") this.add(ev.plugin);
      else this.remove(ev.plugin);
    });
    for (const role of ["csi-controller", "csi-node"] as const) {
      for (const p of this.cfg.registry.list(role)) this.add(p);
    }
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.stopped = true;
    this.wake();
    const all = [...this.instances.values()];
    this.instances.clear();
    await Promise.all([...all.map((i) => i.stop()), ...this.stopping]);
  }

  /** Every instance's current fingerprint, by plugin ID. */
  fingerprints(): { controllers: Record<string, CSIInfo>; nodes: Record<string, CSIInfo> } {
    const controllers: Record<string, CSIInfo> = {};
    const nodes: Record<string, CSIInfo> = {};
    for (const inst of this.instances.values()) {
      const info = inst.fingerprint?.info;
      if (!info) continue;
      if (inst.plugin.role === "csi-controller") controllers[inst.plugin.pluginId] = { ...info };
      else nodes[inst.plugin.pluginId] = { ...info };
    }
    return { controllers, nodes };
  }

  /** Re-fingerprints every instance now (e.g. before a node registers). */
  async refreshAll(): Promise<void> {
    await Promise.all([...this.instances.values()].map((i) => i.refresh()));
  }

  /** A client of a healthy controller instance of the plugin, if there is one (it follows the plugin). */
  controllerClient(pluginId: string): CsiClient | undefined {
    const inst = this.instances.get(key("csi-controller", pluginId));
    return inst?.fingerprint?.info.Healthy ? this.following("csi-controller", pluginId, inst) : undefined;
  }

  controllerCapabilities(pluginId: string): CsiControllerCapabilities | undefined {
    return (
      this.instances.get(key("csi-controller", pluginId))?.fingerprint?.controllerCapabilities ?? undefined
    );
  }

  /**
   * The node instance of a plugin, waiting for its first fingerprint when it has just registered.
   * Fails with ERR_CSI_PLUGIN_UNAVAILABLE (a retryable code) when it is absent or could not be
   * fingerprinted. Health is not required: releasing a volume must still be attempted.
   */
  async nodePlugin(pluginId: string, signal?: AbortSignal): Promise<NodePluginHandle> {
    const inst = this.instances.get(key("csi-node", pluginId));
    if (!inst) {
      throw new BerthError(
        "ERR_CSI_PLUGIN_UNAVAILABLE",
        `CSI node plugin ${JSON.stringify(pluginId)} is not running on this node`,
      );
    }
    const fp = await inst.firstFingerprint(signal);
    if (!fp?.nodeCapabilities) {
      throw new BerthError(
        "ERR_CSI_PLUGIN_UNAVAILABLE",
        `CSI node plugin ${JSON.stringify(pluginId)} could not be fingerprinted: ${fp?.info.HealthDescription ?? "stopped"}`,
      );
    }
    return { client: this.following("csi-node", pluginId, inst), capabilities: fp.nodeCapabilities };
  }

  /**
   * A client whose calls go to the connection of whichever instance of the plugin is registered
   * when each call starts. With none registered, a call waits for one within its own deadline.
   */
  private following(role: PluginRole, pluginId: string, inst: PluginInstance): CsiClient {
    return followingClient(inst.client.endpoint, (opts) => this.connectionOf(role, pluginId, opts));
  }

  private async connectionOf(
    role: PluginRole,
    pluginId: string,
    opts: CsiCallOptions | undefined,
  ): Promise<PluginConnection> {
    const k = key(role, pluginId);
    const deadline = Date.now() + (opts?.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS);
    for (;;) {
      const inst = this.instances.get(k);
      if (inst) return inst.connection;
      throwIfAborted(opts?.signal);
      const left = deadline - Date.now();
      if (this.stopped || left <= 0) {
        throw new BerthError(
          "ERR_CSI_PLUGIN_UNAVAILABLE",
          `CSI ${role === "csi-node" ? "node" : "controller"} plugin ${JSON.stringify(pluginId)} is not running on this node`,
        );
      }
      await this.untilAdded(k, left, opts?.signal);
    }
  }

  /** Resolves when an instance is added under `k`, after `ms`, or when `signal` aborts. */
  private untilAdded(k: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiters.get(k);
      if (!set) this.waiters.set(k, (set = new Set()));
      const waiters = set;
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiters.get(k) === waiters) this.waiters.delete(k);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
      waiters.add(done);
    });
  }

  /** Wakes the calls waiting for an instance under `k` (every key when omitted). */
  private wake(k?: string): void {
    const sets = k === undefined ? [...this.waiters.values()] : [this.waiters.get(k)];
    for (const set of sets) for (const done of [...(set ?? [])]) done();
  }

  private add(plugin: RegisteredPlugin): void {
    const k = key(plugin.role, plugin.pluginId);
    const old = this.instances.get(k);
    // The same plugin task registering again (its supervisor re-registers a plugin restored after
    // an agent restart, or one that recovered): the instance already talks to it. Replacing it
    // would close the connection under calls in flight (a NodePublish of a restored alloc).
    // It gets a fresh connection all the same (the plugin may have been restarted on the same
    // socket), while calls in flight on the old one finish there.
    if (old && sameEndpoint(old.plugin, plugin)) {
      old.reconnect("plugin registered again", false);
      return;
    }
    if (old) this.track(old.stop("plugin replaced by a new instance"));
    const connect = () => this.cfg.clientFactory(plugin.socketPath, plugin.pluginId);
    const inst = new PluginInstance(plugin, connect, {
      intervalMs: this.cfg.fingerprintIntervalMs ?? 30_000,
      callTimeoutMs: this.cfg.callTimeoutMs ?? 10_000,
      log: this.cfg.log.child(plugin.pluginId),
      onChange: () => {
        if (this.instances.get(k) === inst) this.report();
      },
    });
    this.instances.set(k, inst);
    inst.start();
    this.wake(k);
  }

  private remove(plugin: RegisteredPlugin): void {
    const k = key(plugin.role, plugin.pluginId);
    const inst = this.instances.get(k);
    if (!inst || inst.plugin.allocId !== plugin.allocId) return;
    this.instances.delete(k);
    // A normal stop (the plugin task stopped, or its supervisor found it unhealthy), not an error.
    this.cfg.log.info("plugin deregistered; connection dropped", {
      plugin: plugin.pluginId,
      role: plugin.role,
    });
    this.track(inst.stop("plugin deregistered"));
    this.report();
  }

  private report(): void {
    const { controllers, nodes } = this.fingerprints();
    const strip = (m: Record<string, CSIInfo>) =>
      Object.fromEntries(Object.entries(m).map(([id, i]) => [id, { ...i, UpdateTime: 0 }]));
    const digest = JSON.stringify([strip(controllers), strip(nodes)]);
    if (digest === this.lastReported) return;
    this.lastReported = digest;
    try {
      this.cfg.onFingerprint(controllers, nodes);
    } catch (err) {
      this.cfg.log.error("onFingerprint failed", { error: err });
    }
  }

  private track(p: Promise<void>): void {
    const tracked = p.catch((err: unknown) =>
      this.cfg.log.warn("stopping plugin instance failed", { error: err }),
    );
    this.stopping.add(tracked);
    void tracked.finally(() => this.stopping.delete(tracked));
  }
}

function sameEndpoint(a: RegisteredPlugin, b: RegisteredPlugin): boolean {
  return (
    a.allocId === b.allocId &&
    a.socketPath === b.socketPath &&
    a.hostDir === b.hostDir &&
    a.stagePublishBaseDir === b.stagePublishBaseDir
  );
}

function key(role: PluginRole, pluginId: string): string {
  return `${role}\u0000${pluginId}`;
}
