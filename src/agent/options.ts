/**
 * `berth agent` flags, Nomad-style (single dash, `-flag=value` or `-flag value`), merged over the
 * agent config files (config_file.ts) into the options the server and client take. Parsing and
 * merging are pure so they are testable without starting anything.
 */
import { parseArgs } from "node:util";
import { BerthError } from "../structs/errors.js";
import {
  LOG_LEVELS,
  checkHostVolumeName,
  parseLogLevel,
  readAgentConfigFiles,
  type AgentFileConfig,
  type HostVolumeSetting,
} from "./config_file.js";
import { resolveDrivers, type DriverSettings } from "./config_plugins.js";
import { resolveEtcd } from "./config_etcd.js";
import { resolveListeners } from "./listen_options.js";
import { AGENT_USAGE } from "./agent_usage.js";
import type { EtcdSettings } from "../server/state/open_store.js";

export interface AgentOptions {
  dev: boolean;
  server: boolean;
  client: boolean;
  /** Null in -dev without -data-dir: a temp dir is made and removed at exit. */
  dataDir: string | null;
  /** HOST:PORT the agent's HTTP API listens on (a server's, or a client-only agent's). */
  httpAddr: string;
  /**
   * HOST:PORT where the server also takes node agents (Nomad's RPC port, 4647); null: only the HTTP
   * listener (listen_options.ts says when).
   */
  rpcAddr: string | null;
  /** What the server tells its peers to dial (`advertise`, host:port each); absent: its listeners. */
  advertise: { http?: string; rpc?: string };
  /**
   * Whether httpAddr was configured (-http-addr, or `addresses`/`ports`/`bind_addr` in a file)
   * rather than the default: a client-only agent that cannot bind a configured address fails, one
   * that cannot bind the default goes on without its API (agent.ts).
   */
  httpAddrGiven: boolean;
  /** Server addresses a -client agent dials (http://HOST:PORT). */
  servers: string[];
  nodeName: string | null;
  /** Client: `-client-intro-token` (client/intro_token.ts); null: the environment or the token file. */
  clientIntroToken: string | null;
  /** Node.Datacenter (Nomad's default "dc1"). */
  datacenter: string;
  /** Node.NodeClass ("" when unset). */
  nodeClass: string;
  logLevel: "debug" | "info" | "warn" | "error";
  /** How long an alloc waits for its CSI node plugin to register before failing (ms); null: default. */
  csiPluginWaitMs: number | null;
  /** How long a refused volume claim is retried (ms); null: default. */
  csiClaimRetryMs: number | null;
  /** Deadline of each node CSI call (NodeStage, NodePublish, …) in ms; null: default (5 min). */
  csiCallTimeoutMs: number | null;
  /** How often published volumes' NodeGetVolumeStats is polled (ms); null: default (60 s). */
  csiVolumeStatsIntervalMs: number | null;
  /** How long a release's node unmount may hang before berth detaches it lazily (ms; 0: never); null: default. */
  csiUnmountEscalateAfterMs: number | null;
  /** Server: how long a node may miss heartbeats before it is marked down (ms); null: default. */
  heartbeatTtlMs: number | null;
  /**
   * Server: the grace every node gets when a server becomes the leader (or starts alone) before it
   * may be marked down (ms; Nomad's failover_heartbeat_ttl); null: default (5 min).
   */
  failoverHeartbeatTtlMs: number | null;
  /** Server: how often the leader polls controllers' ControllerGetVolume condition (ms); null: default. */
  csiControllerConditionIntervalMs: number | null;
  /** Server: how often the leader reconciles claims with providers' attachments (ms); null: default (5 min). */
  csiAttachmentReconcileIntervalMs?: number | null;
  /** Server: the attachment reconciler only reports (records, logs, counts) what it would correct. */
  csiAttachmentReconcileDryRun?: boolean;
  /** Server: how often the leader asks controllers GetCapacity per topology segment (ms); null: default. */
  csiCapacityIntervalMs: number | null;
  /** Agent config files or directories (-config, repeatable), read in order before the rest. */
  configFiles: string[];
  /** The config files' host volumes, then the -host-volume flags (a later name wins). */
  hostVolumes: HostVolumeSetting[];
  /** Node metadata (Node.Meta): the config files' `client { meta }` under the -meta flags. */
  meta: Record<string, string>;
  /** The task drivers' settings (raw_exec off unless configured, or -dev). */
  drivers: DriverSettings;
  /** The merged config files, for the blocks handed on as they are (limits, reserved, …). */
  fileConfig: AgentFileConfig;
  /** Server: keep the state in etcd (-etcd-endpoints / server { etcd }); null: SQLite. */
  etcd: EtcdSettings | null;
}

/** The flags as typed; a flag not given is undefined (false for the role switches). */
export interface AgentFlags {
  dev: boolean;
  server: boolean;
  client: boolean;
  servers?: string;
  dataDir?: string;
  httpAddr?: string;
  nodeName?: string;
  clientIntroToken?: string;
  datacenter?: string;
  nodeClass?: string;
  logLevel?: string;
  csiPluginWait?: string;
  csiClaimRetry?: string;
  csiCallTimeout?: string;
  csiVolumeStatsInterval?: string;
  csiUnmountEscalateAfter?: string;
  heartbeatTtl?: string;
  failoverHeartbeatTtl?: string;
  csiControllerConditionInterval?: string;
  csiAttachmentReconcileInterval?: string;
  csiAttachmentReconcileDryRun?: boolean;
  csiCapacityInterval?: string;
  etcdEndpoints?: string;
  configFiles: string[];
  hostVolumes: HostVolumeSetting[];
  meta: Record<string, string>;
}

/** `-flag` → `--flag` so util.parseArgs reads Nomad-style flags; a bare `-` or `--` stays. */
export function normaliseFlags(argv: string[]): string[] {
  return argv.map((a) => (/^-[a-zA-Z]/.test(a) ? "-" + a : a));
}

export function parseAgentFlags(argv: string[]): AgentFlags {
  let values;
  try {
    ({ values } = parseArgs({
      args: normaliseFlags(argv),
      options: {
        dev: { type: "boolean", default: false },
        server: { type: "boolean", default: false },
        client: { type: "boolean", default: false },
        servers: { type: "string" },
        "data-dir": { type: "string" },
        "http-addr": { type: "string" },
        "node-name": { type: "string" },
        "client-intro-token": { type: "string" },
        dc: { type: "string" },
        "node-class": { type: "string" },
        "log-level": { type: "string" },
        "csi-plugin-wait": { type: "string" },
        "csi-claim-retry": { type: "string" },
        "csi-call-timeout": { type: "string" },
        "csi-volume-stats-interval": { type: "string" },
        "csi-unmount-escalate-after": { type: "string" },
        "heartbeat-ttl": { type: "string" },
        "failover-heartbeat-ttl": { type: "string" },
        "csi-controller-condition-interval": { type: "string" },
        "csi-attachment-reconcile-interval": { type: "string" },
        "csi-attachment-reconcile-dry-run": { type: "boolean", default: false },
        "csi-capacity-interval": { type: "string" },
        "etcd-endpoints": { type: "string" },
        config: { type: "string", multiple: true },
        "host-volume": { type: "string", multiple: true },
        meta: { type: "string", multiple: true },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    // parseArgs names flags in their normalised `--flag` form; show them as the operator typed them.
    const message = (err as Error).message.replace(/'--([^']+)'/g, "'-$1'");
    throw new BerthError("ERR_VALIDATION", `${message}\n\n${AGENT_USAGE}`);
  }
  const flags: AgentFlags = {
    dev: values.dev,
    server: values.server,
    client: values.client,
    configFiles: values.config ?? [],
    hostVolumes: (values["host-volume"] ?? []).map(hostVolumeFlag),
    meta: Object.fromEntries((values.meta ?? []).map(metaFlag)),
    csiAttachmentReconcileDryRun: values["csi-attachment-reconcile-dry-run"],
  };
  const strings = [
    ["servers", "servers"],
    ["data-dir", "dataDir"],
    ["http-addr", "httpAddr"],
    ["node-name", "nodeName"],
    ["client-intro-token", "clientIntroToken"],
    ["dc", "datacenter"],
    ["node-class", "nodeClass"],
    ["log-level", "logLevel"],
    ["csi-plugin-wait", "csiPluginWait"],
    ["csi-claim-retry", "csiClaimRetry"],
    ["csi-call-timeout", "csiCallTimeout"],
    ["csi-volume-stats-interval", "csiVolumeStatsInterval"],
    ["csi-unmount-escalate-after", "csiUnmountEscalateAfter"],
    ["heartbeat-ttl", "heartbeatTtl"],
    ["failover-heartbeat-ttl", "failoverHeartbeatTtl"],
    ["csi-controller-condition-interval", "csiControllerConditionInterval"],
    ["csi-attachment-reconcile-interval", "csiAttachmentReconcileInterval"],
    ["csi-capacity-interval", "csiCapacityInterval"],
    ["etcd-endpoints", "etcdEndpoints"],
  ] as const;
  for (const [flag, field] of strings) {
    const v = values[flag];
    if (v !== undefined) flags[field] = v;
  }
  return flags;
}

/** Flags only, no config file read (the config files' settings are all absent). */
export function parseAgentArgs(argv: string[]): AgentOptions {
  return resolveAgentOptions(parseAgentFlags(argv), { hostVolumes: [], meta: {} });
}

/** The flags, then the config files they name, merged: the options the agent runs with. */
export async function loadAgentOptions(argv: string[]): Promise<AgentOptions> {
  const flags = parseAgentFlags(argv);
  return resolveAgentOptions(flags, await readAgentConfigFiles(flags.configFiles));
}

/** Nomad's order: -dev's defaults, then the config files, then the flags, each winning over the last. */
export function resolveAgentOptions(flags: AgentFlags, file: AgentFileConfig): AgentOptions {
  const dev = flags.dev;
  const server = dev || flags.server || file.serverEnabled === true;
  const client = dev || flags.client || file.clientEnabled === true;
  if (!server && !client) {
    throw new BerthError(
      "ERR_VALIDATION",
      `one of -dev, -server or -client is required (or server/client { enabled = true } in a -config file)\n\n${AGENT_USAGE}`,
    );
  }
  const dataDir = flags.dataDir ?? file.dataDir ?? null;
  if (!dev && dataDir === null) {
    throw new BerthError(
      "ERR_VALIDATION",
      "-data-dir is required unless -dev is given (or data_dir in a -config file)",
    );
  }
  const { httpAddr, rpcAddr, advertise, servers } = resolveListeners(flags, file, server);
  if (client && !server && servers.length === 0) {
    throw new BerthError(
      "ERR_VALIDATION",
      "-client without -server needs -servers=ADDR (or client { servers = [...] } in a -config file)",
    );
  }
  let logLevel: AgentOptions["logLevel"] = file.logLevel ?? "info";
  if (flags.logLevel !== undefined) {
    const level = parseLogLevel(flags.logLevel);
    if (!level) {
      throw new BerthError(
        "ERR_VALIDATION",
        `-log-level: unknown level ${JSON.stringify(flags.logLevel)} (want ${LOG_LEVELS})`,
      );
    }
    logLevel = level;
  }
  const datacenter = flags.datacenter ?? file.datacenter ?? "dc1";
  if (datacenter === "" || /[\0*]/.test(datacenter)) {
    throw new BerthError("ERR_VALIDATION", `-dc: ${JSON.stringify(datacenter)} is empty or has '*' or NUL`);
  }
  const meta = { ...file.meta, ...flags.meta };
  // Nomad's IsValidConfig: a meta key must be a dotted name, as \${meta.KEY} reads it.
  const badKey = Object.keys(meta).find((k) => !/^[^.]+(\.[^.]+)*$/.test(k));
  if (client && badKey !== undefined) {
    throw new BerthError("ERR_VALIDATION", `meta: key ${JSON.stringify(badKey)} is not a dotted name`);
  }
  return {
    dev,
    server,
    client,
    dataDir,
    httpAddr,
    rpcAddr,
    advertise,
    httpAddrGiven:
      flags.httpAddr !== undefined ||
      file.httpAddress !== undefined ||
      file.bindAddr !== undefined ||
      file.httpPort !== undefined,
    servers,
    nodeName: flags.nodeName ?? file.nodeName ?? null,
    clientIntroToken: flags.clientIntroToken ?? null,
    datacenter,
    nodeClass: flags.nodeClass ?? file.nodeClass ?? "",
    logLevel,
    csiPluginWaitMs: durationFlag("csi-plugin-wait", flags.csiPluginWait),
    csiClaimRetryMs: durationFlag("csi-claim-retry", flags.csiClaimRetry),
    csiCallTimeoutMs: durationFlag("csi-call-timeout", flags.csiCallTimeout),
    csiVolumeStatsIntervalMs:
      durationFlag("csi-volume-stats-interval", flags.csiVolumeStatsInterval) ??
      file.csiVolumeStatsIntervalMs ??
      null,
    csiUnmountEscalateAfterMs:
      (flags.csiUnmountEscalateAfter === "0"
        ? 0
        : durationFlag("csi-unmount-escalate-after", flags.csiUnmountEscalateAfter)) ??
      file.csiUnmountEscalateAfterMs ??
      null,
    heartbeatTtlMs: durationFlag("heartbeat-ttl", flags.heartbeatTtl),
    failoverHeartbeatTtlMs:
      durationFlag("failover-heartbeat-ttl", flags.failoverHeartbeatTtl) ??
      file.failoverHeartbeatTtlMs ??
      null,
    csiControllerConditionIntervalMs: durationFlag(
      "csi-controller-condition-interval",
      flags.csiControllerConditionInterval,
    ),
    csiAttachmentReconcileIntervalMs: durationFlag(
      "csi-attachment-reconcile-interval",
      flags.csiAttachmentReconcileInterval,
    ),
    csiAttachmentReconcileDryRun: flags.csiAttachmentReconcileDryRun === true,
    csiCapacityIntervalMs: durationFlag("csi-capacity-interval", flags.csiCapacityInterval),
    configFiles: flags.configFiles,
    hostVolumes: [...file.hostVolumes, ...flags.hostVolumes],
    meta,
    drivers: resolveDrivers(dev, file.options, file.plugins),
    fileConfig: file,
    etcd: resolveEtcd(flags.etcdEndpoints, file.etcd, server) ?? null,
  };
}

/** `NAME:PATH[:ro|:rw]`; PATH itself may not contain ':' (use a config file for such a path). */
export function hostVolumeFlag(value: string): HostVolumeSetting {
  const parts = value.split(":");
  const bad = (why: string) =>
    new BerthError("ERR_VALIDATION", `-host-volume: ${JSON.stringify(value)} ${why} (want NAME:PATH[:ro])`);
  if (parts.length < 2 || parts.length > 3) throw bad("is not NAME:PATH[:ro]");
  const [name, p, mode] = parts as [string, string, string | undefined];
  if (p === "") throw bad("has an empty PATH");
  if (mode !== undefined && mode !== "ro" && mode !== "rw") throw bad(`has mode ${JSON.stringify(mode)}`);
  return { name: checkHostVolumeName("-host-volume", name), path: p, readOnly: mode === "ro" };
}

function metaFlag(value: string): [string, string] {
  const eq = value.indexOf("=");
  if (eq <= 0) throw new BerthError("ERR_VALIDATION", `-meta: ${JSON.stringify(value)} is not KEY=VALUE`);
  return [value.slice(0, eq), value.slice(eq + 1)];
}

const FLAG_UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A flag's `<integer><ms|s|m|h>` duration in ms; null when the flag is absent. */
function durationFlag(name: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  const m = /^(\d+)(ms|s|m|h)$/.exec(value.trim());
  if (!m)
    throw new BerthError("ERR_VALIDATION", `-${name}: ${JSON.stringify(value)} is not a duration like 30s`);
  const ms = Number(m[1]) * FLAG_UNIT_MS[m[2]!]!;
  // A zero wait or TTL would fail every claim at once or mark every node down at once.
  if (ms === 0) throw new BerthError("ERR_VALIDATION", `-${name}: must be longer than zero`);
  return ms;
}
