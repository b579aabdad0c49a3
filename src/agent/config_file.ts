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
 *   ports     { http = 4646 }
 *   addresses { http = "127.0.0.1" }
 *   server { enabled = true }       # as -server
 *   server { etcd { endpoints, prefix } }  # state in etcd (config_etcd.ts)
 *   client { enabled = true  … }    # as -client; config_client.ts
 *   plugin "raw_exec" { config { enabled = true } }   # config_plugins.ts
 *   limits { … }                    # config_limits.ts
 *   tls { http = true  rpc = true  ca_file = "…" … }  # mutual TLS (config_tls.ts)
 *   acl { enabled = true }          # ACL tokens and policies (config_acl.ts)
 *   http_api_response_headers { "Access-Control-Allow-Origin" = "https://ui.example" }  # config_http.ts
 *   telemetry { prometheus_metrics = true }                  # config_telemetry.ts
 *
 * berth's agent RPC rides the HTTP port (/v1/agent/rpc), so Nomad's `rpc`/`serf` ports and
 * addresses have nothing to set and are refused by name, like every other key berth does not
 * honour: a setting is never silently ignored. A directory given to -config is read as Nomad reads
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
import { parseEtcdBlock, type EtcdFileSetting } from "./config_etcd.js";
import { parseTls, type TlsSetting } from "./config_tls.js";
import { parseAcl, type AclSetting } from "./config_acl.js";
import { parseClientIntroduction } from "./config_intro.js";
import type { IntroSettings } from "../server/rpc/node_intro.js";
import { mergeHttpApi, parseHttpApiResponseHeaders, type HttpApiSetting } from "./config_http.js";
import { parsePlugins, type PluginSettings } from "./config_plugins.js";
import { agentConfigValue } from "./config_shape.js";
import { parseTelemetry, type TelemetrySetting } from "./config_telemetry.js";

export { checkHostVolumeName, resolveHostVolumes, type HostVolumeSetting } from "./config_client.js";

export type ConfigLogLevel = "debug" | "info" | "warn" | "error";

/** The merged settings of the config files; an optional field is present only when a file sets it. */
export interface AgentFileConfig {
  hostVolumes: HostVolumeSetting[];
  meta: Record<string, string>;
  /** `name`: the node's name. */
  nodeName?: string;
  region?: string;
  datacenter?: string;
  dataDir?: string;
  bindAddr?: string;
  /** `ports { http }`. */
  httpPort?: number;
  /** `addresses { http }`. */
  httpAddress?: string;
  logLevel?: ConfigLogLevel;
  /** `server { enabled }` (true in any file enables it, as Nomad merges it). */
  serverEnabled?: boolean;
  /** `client { enabled }`, merged the same way. */
  clientEnabled?: boolean;
  /** `client { servers }`, appended file after file. */
  servers?: string[];
  nodeClass?: string;
  /** `client { options }`, merged key by key. */
  options?: Record<string, string>;
  /** `client { csi_volume_stats_interval }` in ms. */
  csiVolumeStatsIntervalMs?: number;
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
    "bindAddr",
    "httpPort",
    "httpAddress",
    "logLevel",
    "nodeClass",
    "csiVolumeStatsIntervalMs",
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
    return fromBody(Body.of(file, "", agentConfigValue(file, text)));
  } catch (err) {
    if (err instanceof SpecError) throw new BerthError("ERR_VALIDATION", `-config: ${err.message}`);
    throw err;
  }
}

function fromBody(top: Body): AgentFileConfig {
  const out: AgentFileConfig = { hostVolumes: [], meta: {} };
  const strings = [
    ["name", "nodeName"],
    ["region", "region"],
    ["datacenter", "datacenter"],
    ["data_dir", "dataDir"],
    ["bind_addr", "bindAddr"],
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
  const ports = top.block("ports");
  if (ports) {
    const http = ports.integer("http");
    if (http !== undefined) out.httpPort = checkPort(ports, http);
    refuseRpcSerf(ports, "port");
    ports.finish();
  }
  const addresses = top.block("addresses");
  if (addresses) {
    const http = addresses.string("http");
    if (http !== undefined) out.httpAddress = checkHost(addresses, "http", http);
    refuseRpcSerf(addresses, "address");
    addresses.finish();
  }
  const server = top.block("server");
  if (server) {
    const enabled = server.bool("enabled");
    if (enabled !== undefined) out.serverEnabled = enabled;
    const expect = server.integer("bootstrap_expect");
    if (expect !== undefined && expect !== 1) {
      throw server.error(`bootstrap_expect = ${expect}: berth's server runs alone, so only 1 is honoured`);
    }
    const etcd = server.block("etcd");
    if (etcd) out.etcd = parseEtcdBlock(etcd);
    const failoverNs = server.duration("failover_heartbeat_ttl");
    if (failoverNs !== undefined) {
      if (failoverNs < 1e6) throw server.error("failover_heartbeat_ttl must be at least 1ms");
      out.failoverHeartbeatTtlMs = Math.round(failoverNs / 1e6);
    }
    const intro = server.block("client_introduction");
    if (intro) out.clientIntroduction = parseClientIntroduction(intro);
    server.finish();
  }
  const client = top.block("client");
  if (client) {
    const c = parseClient(client);
    out.hostVolumes = c.hostVolumes;
    out.meta = c.meta;
    if (c.enabled !== undefined) out.clientEnabled = c.enabled;
    if (c.servers) out.servers = c.servers;
    if (c.nodeClass !== undefined) out.nodeClass = c.nodeClass;
    if (c.options) out.options = c.options;
    if (c.csiVolumeStatsIntervalMs !== undefined) out.csiVolumeStatsIntervalMs = c.csiVolumeStatsIntervalMs;
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

type TopString = "name" | "region" | "datacenter" | "data_dir" | "bind_addr";

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
    case "bind_addr":
      return checkHost(top, "bind_addr", v);
    case "name":
      if (v === "" || /[\0\n\r]/.test(v))
        throw top.error(`name ${JSON.stringify(v)} is empty or has a NUL or newline`);
      return v;
  }
}

/**
 * One IP or host name to listen on. Nomad also takes go-sockaddr templates and several
 * space-separated addresses; berth listens on one address and evaluates no template.
 */
function checkHost(b: Body, key: string, v: string): string {
  if (v.includes("{{")) throw b.error(`${key}: go-sockaddr templates are not supported; write the address`);
  if (/\s/.test(v.trim())) throw b.error(`${key}: berth listens on one address, got ${JSON.stringify(v)}`);
  const host = v.trim();
  if (!/^[A-Za-z0-9.-]+$/.test(host))
    throw b.error(`${key}: ${JSON.stringify(v)} is not an IPv4 address or host name`);
  return host;
}

function checkPort(b: Body, port: number): number {
  if (port < 0 || port > 65535) throw b.error(`http must be a port between 0 and 65535, got ${port}`);
  return port;
}

function refuseRpcSerf(b: Body, what: string): void {
  for (const key of ["rpc", "serf"]) {
    if (b.has(key)) {
      throw b.error(
        `${key}: berth has no separate ${key.toUpperCase()} ${what}; agents reach the server's RPC through the HTTP port`,
      );
    }
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
