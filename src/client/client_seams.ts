/**
 * Seams of the node agent (client.ts) for the node simulator (src/nodesim/): what a real agent
 * builds itself — its alloc runners' task runners, its CSI connections, its mount checks, its
 * drivers, its state DB file — a simulated node replaces, so thousands of nodes can run in one
 * process through the real registration, heartbeat, alloc sync, csimanager, volume manager and
 * csi_hook code. A real agent passes none of them and behaves exactly as without this file.
 */
import type { DriverInfo } from "../structs/node.js";
import type { fingerprintNode } from "./node_identity.js";
import type { AllocRunnerLike } from "./alloc_sync.js";
import type { AllocRunnerConfig } from "./allocrunner/alloc_runner_config.js";
import type { CsiClientFactory } from "./csimanager/manager.js";
import type { RegisteredPlugin } from "./dynamicplugins/types.js";

/** Everything the agent gives its default AllocRunner except how tasks are run. */
export type AllocRunnerParts = Omit<AllocRunnerConfig, "newTaskRunner">;

export interface ClientSeams {
  /** Builds each alloc's runner (default: an AllocRunner whose tasks run through the drivers). */
  allocRunnerFactory?: (parts: AllocRunnerParts) => AllocRunnerLike;
  /** Connects to a plugin's socket (default: gRPC over the unix socket, csi/client.ts). */
  csiClientFactory?: CsiClientFactory;
  /** Whether a host path holds a mount (default: the host's mountinfo). */
  isMountPoint?: (hostPath: string) => Promise<boolean>;
  /**
   * The node's drivers as fingerprinted; when set, the agent runs no driver of its own (exec and
   * raw_exec are not fingerprinted), so only a custom alloc runner can run tasks.
   */
  driverInfo?: Record<string, DriverInfo>;
  /**
   * Fingerprints the host (default: node_identity.ts's fingerprintNode, which reads /proc, the CPUs
   * and the data dir's file system). The simulator's nodes share one host, so it fingerprints it
   * once and hands every node the same answer.
   */
  fingerprint?: typeof fingerprintNode;
  /** Keep the client state DB in memory instead of `<data_dir>/client/state.db`. */
  inMemoryState?: boolean;
  /**
   * Registered in the dynamic plugin registry when the agent starts, as a plugin supervisor would
   * once its task answered a Probe (the simulator's plugins run in-process, not as tasks).
   */
  plugins?: RegisteredPlugin[];
  /** Told after every successful Node.Register (each connection registers). */
  onRegistered?: () => void;
  /** Told after every successful Node.Heartbeat. */
  onHeartbeat?: () => void;
  /**
   * The local address the agent dials its server from (default: the OS picks). The simulator gives
   * each of its nodes its own loopback address, as separate hosts have their own addresses.
   */
  localAddress?: string;
}
