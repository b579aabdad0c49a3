/**
 * The agent's config file(s) (`berth agent -config FILE|DIR`), in Nomad's agent configuration
 * language: HCL 1 or its JSON form (a document starting with `{`), read with berth's HCL 1 reader
 * as Nomad reads it with hashicorp/hcl v1. The shape is Nomad's (command/agent/config.go):
 *
 *   name       = "node-1"           # the node's name (as -node-name)
 *   region     = "global"           # berth runs the one region Nomad defaults to
 *   datacenter = "dc1"              # Node.Datacenter
 *   data_dir   = "/var/lib/berth"   # absolute, as Nomad requires (as -data-dir)
 *   bind_addr  = "127.0.0.1"        # the HTTP API's address unless addresses.http says otherwise
 *   log_level  = "INFO"             # TRACE, DEBUG, INFO, WARN or ERROR, any case (as -log-level)
 *   ports     { http = 4646  rpc = 4647 }                 # config_network.ts
 *   addresses { http = "127.0.0.1" }
 *   advertise { http = "10.0.0.5"  rpc = "10.0.0.5" }
 *   server { enabled = true  bootstrap_expect = 3 }      # as -server; config_server.ts
 *   server { etcd { endpoints, prefix } }  # state in etcd (config_etcd.ts)
 *   client { enabled = true  servers = ["10.0.0.5"] … }  # as -client; config_client.ts
 *   plugin "raw_exec" { config { enabled = true } }   # config_plugins.ts
 *   limits { … }                    # config_limits.ts
 *   tls { http = true  rpc = true  ca_file = "…" … }  # mutual TLS (config_tls.ts)
 *   acl { enabled = true }          # ACL tokens and policies (config_acl.ts)
 *   http_api_response_headers { "Access-Control-Allow-Origin" = "https://ui.example" }  # config_http.ts
 *   telemetry { prometheus_metrics = true }                  # config_telemetry.ts
 *
 * A Nomad config starts berth unchanged: a key Nomad knows and berth does not use (`consul`,
 * `vault`, `ui`, `server { raft_protocol }`, `client { cni_path }`, …) is dropped with a warning
 * naming it, its place and why (config_triage.ts, nomad_config_keys.ts; `warnings`, which the
 * agent logs at start); a key neither knows is refused with its place, as Nomad refuses it; a
 * value berth reads is checked and a bad one refused naming the key. A directory given to -config is read as Nomad reads
 * one: its *.hcl and *.json files (not editor temp files) in name order. Later files win over
 * earlier ones (maps and host volumes merge, `servers` append); the command-line flags win over
 * the files (options.ts).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { Body, SpecError } from "../api/specs/body.js";
import { BerthError } from "../structs/errors.js";
import type { ReservedSetting, ResourceOverrides } from "../client/fingerprint/resources.js";
import { parseClient, type HostVolumeSetting } from "./config_client.js";
import { parseLimits, type LimitsSetting } from "./config_limits.js";
import type { EtcdFileSetting } from "./config_etcd.js";
import { NETWORK_KEYS, parseNetwork, type NetworkSetting } from "./config_network.js";
import { parseServer } from "./config_server.js";
import { parseTls, type TlsSetting } from "./config_tls.js";
import { parseAcl, type AclSetting } from "./config_acl.js";
import type { IntroSettings } from "../server/rpc/node_intro.js";
import { mergeHttpApi, parseHttpApiResponseHeaders, type HttpApiSetting } from "./config_http.js";
import { parsePlugins, type PluginSettings } from "./config_plugins.js";
import { agentConfigValue } from "./config_shape.js";
import { parseTelemetry, type TelemetrySetting } from "./config_telemetry.js";

export { checkHostVolumeName, resolveHostVolumes, type HostVolumeSetting } from "./config_client.js";

export type ConfigLogLevel = "debug" | "info" | "warn" | "error";

/** The merged settings of the config files; an optional field is present only when a file sets it. */
export interface AgentFileConfig extends NetworkSetting {
  hostVolumes: HostVolumeSetting[];
  meta: Record<string, string>;
  /** `name`: the node's name. */
  nodeName?: string;
  region?: string;
  datacenter?: string;
  dataDir?: string;
  logLevel?: ConfigLogLevel;
  /** `server { enabled }` (true in any file enables it, as Nomad merges it). */
  serverEnabled?: boolean;
  /** `server { bootstrap_expect }` (read and checked; berth waits for no peers, config_server.ts). */
  bootstrapExpect?: number;
  /** `client { enabled }`, merged the same way. */
  clientEnabled?: boolean;
  /** `client { servers }`, appended file after file. */
  servers?: string[];
  nodeClass?: string;
  /** `client { options }`, merged key by key. */
  options?: Record<string, string>;
  /** `client { csi_volume_stats_interval }` in ms. */
  csiVolumeStatsIntervalMs?: number;
  /** `client { csi_unmount_escalate_after }` in ms (0: never). */
  csiUnmountEscalateAfterMs?: number;
  /** `plugin` blocks, a later file's block replacing an earlier one of the same driver. */
  plugins?: PluginSettings;
  /** Present when some file has a `limits` block. */
  limits?: LimitsSetting;
  /** `server { etcd { endpoints, prefix } }` (config_etcd.ts); later files win per setting. */
  etcd?: EtcdFileSetting;
  /** `server { failover_heartbeat_ttl }` in ms. */
  failoverHeartbeatTtlMs?: number;
  /** `server { client_introduction { … } }` (config_intro.ts); later files win per setting. */
  clientIntroduction?: Partial<IntroSettings>;
  /** client `reserved { cpu, memory, disk }` (Nomad's names); later files win per field. */
  reserved?: ReservedSetting;
  /** client `cpu_total_compute`, `memory_total_mb`, `disk_total_mb`. */
  resourceOverrides?: ResourceOverrides;
  /** Present when some file has a `tls` block (config_tls.ts); later files win per field. */
  tls?: TlsSetting;
  /** Present when some file has an `acl` block; later files win per setting. */
  acl?: AclSetting;
  /** `http_api_response_headers` and the browser origin it allows (config_http.ts). */
  httpApi?: HttpApiSetting;
  /** Present when some file has a `telemetry` block; later files win per setting. */
  telemetry?: TelemetrySetting;
  /** The keys accepted but not used, one line each with its file and place (logged at start). */
  warnings?: string[];
}

/** Reads and merges the config files (or directories) in order. */
export async function readAgentConfigFiles(paths: string[]): Promise<AgentFileConfig> {
  const out: AgentFileConfig = { hostVolumes: [], meta: {} };
  for (const p of paths) {
    for (const file of await configFilesAt(p)) {
      const cfg = await parseAgentConfig(file, await fs.readFile(file, "utf8"));
      mergeInto(out, cfg);
    }
  }
  return out;
}

/** Later settings win; maps merge key by key; host volumes and servers accumulate. */
function mergeInto(out: AgentFileConfig, cfg: AgentFileConfig): void {
  const scalars = [
    "nodeName",
    "region",
    "datacenter",
    "dataDir",
    ...NETWORK_KEYS,
    "logLevel",
    "bootstrapExpect",
    "nodeClass",
    "csiVolumeStatsIntervalMs",
    "csiUnmountEscalateAfterMs",
    "failoverHeartbeatTtlMs",
  ] as const;
  for (const key of scalars) if (cfg[key] !== undefined) Object.assign(out, { [key]: cfg[key] });
  if (cfg.serverEnabled) out.serverEnabled = true;
  if (cfg.clientEnabled) out.clientEnabled = true;
  if (cfg.servers) out.servers = [...(out.servers ?? []), ...cfg.servers];
  out.hostVolumes.push(...cfg.hostVolumes);
  Object.assign(out.meta, cfg.meta);
  if (cfg.options) out.options = { ...out.options, ...cfg.options };
  if (cfg.plugins) out.plugins = { ...out.plugins, ...cfg.plugins };
  if (cfg.limits) out.limits = { ...out.limits, ...cfg.limits };
  if (cfg.etcd) out.etcd = { ...out.etcd, ...cfg.etcd };
  if (cfg.reserved) out.reserved = { ...out.reserved, ...cfg.reserved };
  if (cfg.resourceOverrides) out.resourceOverrides = { ...out.resourceOverrides, ...cfg.resourceOverrides };
  if (cfg.tls) out.tls = { ...out.tls, ...cfg.tls };
  if (cfg.acl) out.acl = { ...out.acl, ...cfg.acl };
  if (cfg.clientIntroduction)
    out.clientIntroduction = { ...out.clientIntroduction, ...cfg.clientIntroduction };
  if (cfg.httpApi) out.httpApi = mergeHttpApi(out.httpApi, cfg.httpApi);
  if (cfg.telemetry) out.telemetry = { ...out.telemetry, ...cfg.telemetry };
  if (cfg.warnings) out.warnings = [...(out.warnings ?? []), ...cfg.warnings];
}

/** Nomad's isTemporaryFile: editor leftovers in a config dir are skipped. */
function isTemporaryFile(name: string): boolean {
  return name.endsWith("~") || name.startsWith(".#") || (name.startsWith("#") && name.endsWith("#"));
}

async function configFilesAt(p: string): Promise<string[]> {
  const st = await fs.stat(p).catch((err: NodeJS.ErrnoException) => {
    throw new BerthError(
      "ERR_VALIDATION",
      `-config: cannot read ${JSON.stringify(p)}: ${err.code ?? err.message}`,
    );
  });
  if (!st.isDirectory()) return [p];
  const entries = await fs.readdir(p, { withFileTypes: true });
  return entries
    .filter((e) => !e.isDirectory() && (e.name.endsWith(".hcl") || e.name.endsWith(".json")))
    .filter((e) => !isTemporaryFile(e.name))
    .map((e) => e.name)
    .sort()
    .map((n) => path.join(p, n));
}

/** One file's settings. JSON is told by content, as hcl v1 tells it (a document starting with `{`). */
export async function parseAgentConfig(file: string, text: string): Promise<AgentFileConfig> {
  try {
    const warnings: string[] = [];
    const out = fromBody(Body.of(file, "", agentConfigValue(file, text, warnings)), warnings);
    if (warnings.length > 0) out.warnings = warnings;
    return out;
  } catch (err) {
    if (err instanceof SpecError) throw new BerthError("ERR_VALIDATION", `-config: ${err.message}`);
    throw err;
  }
}

function fromBody(top: Body, warnings: string[]): AgentFileConfig {
  const out: AgentFileConfig = { hostVolumes: [], meta: {}, ...parseNetwork(top) };
  const strings = [
    ["name", "nodeName"],
    ["region", "region"],
    ["datacenter", "datacenter"],
    ["data_dir", "dataDir"],
  ] as const;
  for (const [key, field] of strings) {
    const v = top.string(key);
    if (v !== undefined) out[field] = checkTopString(top, key, v);
  }
  const logLevel = top.string("log_level");
  if (logLevel !== undefined) {
    const level = parseLogLevel(logLevel);
    if (!level) throw top.error(`log_level: unknown level ${JSON.stringify(logLevel)} (want ${LOG_LEVELS})`);
    out.logLevel = level;
  }
  const server = top.block("server");
  if (server) {
    const srv = parseServer(server, warnings);
    if (srv.enabled !== undefined) out.serverEnabled = srv.enabled;
    if (srv.bootstrapExpect !== undefined) out.bootstrapExpect = srv.bootstrapExpect;
    if (srv.etcd) out.etcd = srv.etcd;
    if (srv.failoverHeartbeatTtlMs !== undefined) out.failoverHeartbeatTtlMs = srv.failoverHeartbeatTtlMs;
    if (srv.clientIntroduction) out.clientIntroduction = srv.clientIntroduction;
  }
  const client = top.block("client");
  if (client) {
    const c = parseClient(client, warnings);
    out.hostVolumes = c.hostVolumes;
    out.meta = c.meta;
    if (c.enabled !== undefined) out.clientEnabled = c.enabled;
    if (c.servers) out.servers = c.servers;
    if (c.nodeClass !== undefined) out.nodeClass = c.nodeClass;
    if (c.options) out.options = c.options;
    if (c.csiVolumeStatsIntervalMs !== undefined) out.csiVolumeStatsIntervalMs = c.csiVolumeStatsIntervalMs;
    if (c.csiUnmountEscalateAfterMs !== undefined)
      out.csiUnmountEscalateAfterMs = c.csiUnmountEscalateAfterMs;
    if (c.reserved) out.reserved = c.reserved;
    if (c.resourceOverrides) out.resourceOverrides = c.resourceOverrides;
  }
  const plugins = parsePlugins(top);
  if (plugins) out.plugins = plugins;
  const limits = top.block("limits");
  if (limits) out.limits = parseLimits(limits);
  const tls = top.block("tls");
  if (tls) out.tls = parseTls(tls);
  const acl = top.block("acl");
  if (acl) out.acl = parseAcl(acl);
  const httpApi = parseHttpApiResponseHeaders(top);
  if (httpApi) out.httpApi = httpApi;
  const telemetry = top.block("telemetry");
  if (telemetry) out.telemetry = parseTelemetry(telemetry);
  top.finish();
  return out;
}

type TopString = "name" | "region" | "datacenter" | "data_dir";

function checkTopString(top: Body, key: TopString, v: string): string {
  switch (key) {
    case "region":
      if (v !== "global")
        throw top.error(`region ${JSON.stringify(v)}: berth runs a single region, "global"`);
      return v;
    case "datacenter":
      // Nomad's IsValidConfig: a job's datacenters may be "*", so a node's may not.
      if (v === "" || /[\0*]/.test(v))
        throw top.error(`datacenter ${JSON.stringify(v)} is empty or has '*' or NUL`);
      return v;
    case "data_dir":
      if (!path.isAbsolute(v)) throw top.error(`data_dir must be an absolute path, got ${JSON.stringify(v)}`);
      return v;
    case "name":
      if (v === "" || /[\0\n\r]/.test(v))
        throw top.error(`name ${JSON.stringify(v)} is empty or has a NUL or newline`);
      return v;
  }
}

export const LOG_LEVELS = "TRACE, DEBUG, INFO, WARN or ERROR";

/** Nomad's levels (TRACE, DEBUG, INFO, WARN, ERROR, any case) → berth's; TRACE logs as DEBUG. */
export function parseLogLevel(v: string): ConfigLogLevel | undefined {
  const level = v.toLowerCase();
  if (level === "trace") return "debug";
  if (level === "debug" || level === "info" || level === "warn" || level === "error") return level;
  return undefined;
}
