/**
 * One simulated node: a real node agent (client/client.ts) with the simulator's seams — its alloc
 * runners are real AllocRunners whose tasks are SimTaskRunners, its CSI plugin is a SimCsiPlugin
 * registered as a monolith (node and controller) from the start, its state DB is in memory, and
 * it fingerprints only the `mock_driver` driver. Registration with its own node secret,
 * heartbeats, alloc sync, alloc updates, plugin fingerprints, claims, stage/publish and releases
 * all run through the agent's own code over its own connection to the server.
 */
import path from "node:path";
import { Client } from "../client/client.js";
import { AllocRunner } from "../client/allocrunner/alloc_runner.js";
import type { AllocRunnerParts, ClientSeams } from "../client/client_seams.js";
import type { RegisteredPlugin } from "../client/dynamicplugins/types.js";
import type { Logger } from "../internal/log.js";
import type { ClientTls } from "../internal/tls.js";
import { SimCsiPlugin, type SimCsiBehaviour, type SimCsiStats } from "./sim_csi.js";
import { SimTaskRunner } from "./sim_task.js";

/** The driver every simulated node reports; jobs for simulated nodes use it (as Nomad's nodesim). */
export const SIM_DRIVER = "mock_driver";

export interface SimNodeOptions {
  /** The node's name (Node.Name); also names its directory under the simulator's data dir. */
  name: string;
  dataDir: string;
  servers: string[];
  tls?: ClientTls;
  /** The address it dials the server from (source_addr.ts); undefined: the OS picks. */
  localAddress: string | undefined;
  datacenter: string;
  /** The simulated plugin's ID; null: the node runs no plugin. */
  pluginId: string | null;
  csi: SimCsiBehaviour;
  stats: SimCsiStats;
  log: Logger;
  /** Told on each successful registration of this node. */
  onRegistered: () => void;
  /** Told on each successful heartbeat of this node. */
  onHeartbeat: () => void;
  /** Fingerprints the host (the simulator takes one fingerprint for all its nodes). */
  fingerprint?: ClientSeams["fingerprint"];
}

export class SimNode {
  readonly client: Client;
  readonly plugin: SimCsiPlugin | null;
  private readonly dataDir: string;

  constructor(opts: SimNodeOptions) {
    this.dataDir = path.join(opts.dataDir, opts.name);
    this.plugin = opts.pluginId
      ? new SimCsiPlugin(opts.pluginId, `ext-${opts.name}`, opts.csi, opts.stats)
      : null;
    const plugin = this.plugin;
    const plugins: RegisteredPlugin[] = plugin
      ? (["csi-controller", "csi-node"] as const).map((role) => ({
          role,
          pluginId: plugin.pluginId,
          allocId: "nodesim",
          taskName: "nodesim",
          socketPath: path.join(this.dataDir, "plugin", "csi.sock"),
          // Host and plugin views are the same directory: the plugin runs in this process.
          hostDir: path.join(this.dataDir, "plugin"),
          mountDir: path.join(this.dataDir, "plugin"),
          stagePublishBaseDir: path.join(this.dataDir, "plugin"),
          registeredAt: Date.now(),
        }))
      : [];
    this.client = new Client({
      dataDir: this.dataDir,
      servers: opts.servers,
      nodeName: opts.name,
      datacenter: opts.datacenter,
      meta: { nodesim: "true" },
      log: opts.log.child(opts.name),
      tls: opts.tls,
      seams: {
        allocRunnerFactory: (parts) => simAllocRunner(parts),
        csiClientFactory: plugin ? (socket: string) => plugin.client(socket) : undefined,
        isMountPoint: async (hostPath) => plugin?.isMounted(hostPath) ?? false,
        driverInfo: {
          [SIM_DRIVER]: { Detected: true, Healthy: true, HealthDescription: "Healthy", SupportsMounts: true },
        },
        inMemoryState: true,
        fingerprint: opts.fingerprint,
        plugins,
        onRegistered: opts.onRegistered,
        onHeartbeat: opts.onHeartbeat,
        localAddress: opts.localAddress || undefined,
      },
    });
  }

  get nodeId(): string {
    return this.client.nodeId;
  }

  start(): Promise<void> {
    return this.client.start();
  }

  /**
   * Leaves the cluster as an agent that exits: its allocs are stopped and their volumes released
   * first when `drain` is true (the -dev exit path), else left as they are for the server to reap.
   */
  async stop(drain: boolean): Promise<void> {
    if (drain) await this.client.stopAllAllocs();
    await this.client.shutdown();
  }
}

/**
 * A real AllocRunner whose tasks are simulated. Plugin directories are not handed over: the
 * simulated plugin's directory is no plugin task's, so nothing must tear it down.
 */
function simAllocRunner(parts: AllocRunnerParts): AllocRunner {
  const { pluginDirs: _unused, ...rest } = parts;
  return new AllocRunner({
    ...rest,
    newTaskRunner: ({ task, hookResources, onStateChange, restoredState, initialEvents }) =>
      new SimTaskRunner(parts.alloc, task, hookResources, onStateChange, restoredState, initialEvents),
  });
}
