/** What a node agent is configured with (agent flags and the config file's `client` block). */
import type { Logger } from "../internal/log.js";
import type { ClientTls } from "../internal/tls.js";
import type { ClientHostVolumeConfig } from "../structs/node.js";
import type { TaskUserPolicy } from "../structs/task_user.js";
import type { ClientSeams } from "./client_seams.js";
import type { ClientTelemetry } from "./csi_metrics.js";
import type { ReservedSetting, ResourceOverrides } from "./fingerprint/resources.js";

export interface ClientOptions {
  /** The agent's data dir: alloc dirs, plugin dirs and the client state DB live below it. */
  dataDir: string;
  /** Server HTTP addresses: the agent holds one connection, moving to the next when it fails. */
  servers: string[];
  nodeName: string | null;
  /** `-client-intro-token` (client/intro_token.ts); absent: the environment, then the token file. */
  introToken?: string;
  /** Node.Datacenter (default "dc1"). */
  datacenter?: string;
  /** Node.NodeClass (default ""). */
  nodeClass?: string;
  /**
   * Task driver settings from the agent config. raw_exec runs tasks unisolated as the agent's user,
   * so it is disabled (fingerprinted as not detected) unless `rawExec.enabled`, as Nomad ships it.
   */
  drivers?: {
    rawExec?: { enabled: boolean };
    /** The docker driver's endpoint and what it allows (absent: Nomad's defaults). */
    docker?: { endpoint: string; allowPrivileged: boolean; volumesEnabled: boolean };
    taskUsers?: TaskUserPolicy;
  };
  /** The client config's host volumes, paths already checked (agent/config_file.ts). */
  hostVolumes?: Record<string, ClientHostVolumeConfig>;
  /** Node metadata (Node.Meta). */
  meta?: Record<string, string>;
  /** client `reserved { cpu, memory, disk }`: Node.ReservedResources. */
  reserved?: ReservedSetting;
  /** client `cpu_total_compute`, `memory_total_mb`, `disk_total_mb`. */
  resourceOverrides?: ResourceOverrides;
  log: Logger;
  /** csimanager re-fingerprint period (ms). */
  fingerprintIntervalMs?: number;
  /** How long an alloc's prerun waits for a node plugin to register (csi_hook default: 5 min). */
  pluginWaitTimeoutMs?: number;
  /** How long volume claims are retried (csi_hook default: 24 h). */
  claimRetryDeadlineMs?: number;
  /** Deadline of each node CSI call (volume manager default: 5 min). */
  csiCallTimeoutMs?: number;
  /** How often published volumes' NodeGetVolumeStats is polled (volume_stats.ts default: 60 s). */
  volumeStatsIntervalMs?: number;
  /** How long a release's node unmount may hang before berth detaches it lazily (csi_escalate.ts). */
  csiUnmountEscalateAfterMs?: number;
  /** TLS for the connection to the server (agent config `tls`); absent: plain ws://. */
  tls?: ClientTls;
  /** The node simulator's replacements (client_seams.ts); absent for a real agent. */
  seams?: ClientSeams;
  /** The agent's metrics (shared with its server in -dev); absent: CSI calls are not measured. */
  telemetry?: ClientTelemetry;
}
