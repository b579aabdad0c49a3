/**
 * The csimanager: follows the dynamic plugin registry, keeps one PluginInstance per registered
 * (role, plugin) and reports their fingerprints as the node's CSIControllerPlugins /
 * CSINodePlugins through `onFingerprint` whenever they change. It is also where the volume manager
 * and the ClientCSI handlers get a plugin's connection.
 */
import { BerthError } from "../../structs/errors.js";
import type { CSIInfo } from "../../structs/plugin.js";
import type { Logger } from "../../internal/log.js";
import type { CsiClient, CsiControllerCapabilities, CsiNodeCapabilities } from "../../csi/types.js";
import type { PluginRole, RegisteredPlugin } from "../dynamicplugins/types.js";
import type { RegistryListener } from "../dynamicplugins/registry.js";
import { PluginInstance } from "./instance.js";

/** The registry as the manager reads it. */
export interface PluginSource {
  list(role: PluginRole): RegisteredPlugin[];
  subscribe(listener: RegistryListener): () => void;
}

export type CsiClientFactory = (socketPath: string) => CsiClient;

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

  /** The connection of a healthy controller instance of the plugin, if there is one. */
  controllerClient(pluginId: string): CsiClient | undefined {
    const inst = this.instances.get(key("csi-controller", pluginId));
    return inst?.fingerprint?.info.Healthy ? inst.client : undefined;
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
    return { client: inst.client, capabilities: fp.nodeCapabilities };
  }

  private add(plugin: RegisteredPlugin): void {
    const k = key(plugin.role, plugin.pluginId);
    const old = this.instances.get(k);
    // The same plugin task registering again (its supervisor re-registers a plugin restored after
    // an agent restart, or one that recovered): the instance already talks to it. Replacing it
    // would close the connection under calls in flight (a NodePublish of a restored alloc).
    if (old && sameEndpoint(old.plugin, plugin)) return;
    if (old) this.track(old.stop());
    const inst = new PluginInstance(plugin, this.cfg.clientFactory(plugin.socketPath), {
      intervalMs: this.cfg.fingerprintIntervalMs ?? 30_000,
      callTimeoutMs: this.cfg.callTimeoutMs ?? 10_000,
      log: this.cfg.log.child(plugin.pluginId),
      onChange: () => {
        if (this.instances.get(k) === inst) this.report();
      },
    });
    this.instances.set(k, inst);
    inst.start();
  }

  private remove(plugin: RegisteredPlugin): void {
    const k = key(plugin.role, plugin.pluginId);
    const inst = this.instances.get(k);
    if (!inst || inst.plugin.allocId !== plugin.allocId) return;
    this.instances.delete(k);
    this.track(inst.stop());
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
