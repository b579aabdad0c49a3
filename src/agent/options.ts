/**
 * `berth agent` flags, Nomad-style (single dash, `-flag=value` or `-flag value`), compiled into
 * the options the server and client take. Parsing is pure so it is testable without starting
 * anything.
 */
import { parseArgs } from "node:util";
import { BerthError } from "../structs/errors.js";
import { checkHostVolumeName, type HostVolumeSetting } from "./config_file.js";

export interface AgentOptions {
  dev: boolean;
  server: boolean;
  client: boolean;
  /** Null in -dev without -data-dir: a temp dir is made and removed at exit. */
  dataDir: string | null;
  /** HOST:PORT the server's HTTP API listens on. */
  httpAddr: string;
  /** Server addresses a -client agent dials (http://HOST:PORT). */
  servers: string[];
  nodeName: string | null;
  logLevel: "debug" | "info" | "warn" | "error";
  /** How long an alloc waits for its CSI node plugin to register before failing (ms); null: default. */
  csiPluginWaitMs: number | null;
  /** How long a refused volume claim is retried (ms); null: default. */
  csiClaimRetryMs: number | null;
  /** Deadline of each node CSI call (NodeStage, NodePublish, …) in ms; null: default (5 min). */
  csiCallTimeoutMs: number | null;
  /** Server: how long a node may miss heartbeats before it is marked down (ms); null: default. */
  heartbeatTtlMs: number | null;
  /** Agent config files or directories (-config, repeatable), read in order at start. */
  configFiles: string[];
  /** -host-volume flags; they win over the config files' host volumes of the same name. */
  hostVolumes: HostVolumeSetting[];
  /** -meta flags: node metadata (Node.Meta), over the config files' `client { meta }`. */
  meta: Record<string, string>;
}

export const AGENT_USAGE = `Usage: berth agent [-dev | -server | -client -servers=ADDR] [options]

  -dev                 server and client in one process, throwaway state (a temp data dir)
  -server              run the server (state, scheduler, HTTP API)
  -client              run a node agent
  -servers=ADDR[,..]   server HTTP addresses a client dials (default: this agent's own in -dev)
  -data-dir=DIR        where state lives (required without -dev)
  -http-addr=HOST:PORT the server's HTTP listen address (default 127.0.0.1:4646)
  -node-name=NAME      the node's name (default: the hostname)
  -log-level=LEVEL     debug, info, warn or error (default info)
  -csi-plugin-wait=DUR how long an alloc waits for its CSI node plugin (e.g. 30s; default 5m)
  -csi-claim-retry=DUR how long a refused volume claim is retried (e.g. 10m; default 24h)
  -csi-call-timeout=DUR deadline of each node CSI call, e.g. NodeStageVolume (default 5m)
  -heartbeat-ttl=DUR   server: how long a node may miss heartbeats before it is down (default 30s)
  -config=FILE|DIR     agent config (HCL or JSON, Nomad's syntax; repeatable): client { host_volume, meta }
                       limits { … }, tls { http, rpc, ca_file, cert_file, key_file, … }
  -host-volume=NAME:PATH[:ro]
                       a client host volume (repeatable); a relative PATH is made inside the data dir
  -meta=KEY=VALUE      node metadata, as \${meta.KEY} and in node status (repeatable)`;

/** `-flag` → `--flag` so util.parseArgs reads Nomad-style flags; a bare `-` or `--` stays. */
export function normaliseFlags(argv: string[]): string[] {
  return argv.map((a) => (/^-[a-zA-Z]/.test(a) ? "-" + a : a));
}

export function parseAgentArgs(argv: string[]): AgentOptions {
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
        "log-level": { type: "string" },
        "csi-plugin-wait": { type: "string" },
        "csi-claim-retry": { type: "string" },
        "csi-call-timeout": { type: "string" },
        "heartbeat-ttl": { type: "string" },
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
  const dev = values.dev;
  const server = dev || values.server;
  const client = dev || values.client;
  if (!server && !client) {
    throw new BerthError("ERR_VALIDATION", `one of -dev, -server or -client is required\n\n${AGENT_USAGE}`);
  }
  const dataDir = values["data-dir"] ?? null;
  if (!dev && dataDir === null) {
    throw new BerthError("ERR_VALIDATION", "-data-dir is required unless -dev is given");
  }
  const httpAddr = values["http-addr"] ?? "127.0.0.1:4646";
  if (!/^[^:\s]+:\d{1,5}$/.test(httpAddr)) {
    throw new BerthError("ERR_VALIDATION", `-http-addr: ${JSON.stringify(httpAddr)} is not HOST:PORT`);
  }
  const servers = (values.servers ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => (/^https?:\/\//.test(s) ? s : `http://${s}`));
  if (client && !server && servers.length === 0) {
    throw new BerthError("ERR_VALIDATION", "-client without -server needs -servers=ADDR");
  }
  const logLevel = values["log-level"] ?? "info";
  if (!["debug", "info", "warn", "error"].includes(logLevel)) {
    throw new BerthError("ERR_VALIDATION", `-log-level: unknown level ${JSON.stringify(logLevel)}`);
  }
  return {
    dev,
    server,
    client,
    dataDir,
    httpAddr,
    servers,
    nodeName: values["node-name"] ?? null,
    logLevel: logLevel as AgentOptions["logLevel"],
    csiPluginWaitMs: durationFlag("csi-plugin-wait", values["csi-plugin-wait"]),
    csiClaimRetryMs: durationFlag("csi-claim-retry", values["csi-claim-retry"]),
    csiCallTimeoutMs: durationFlag("csi-call-timeout", values["csi-call-timeout"]),
    heartbeatTtlMs: durationFlag("heartbeat-ttl", values["heartbeat-ttl"]),
    configFiles: values.config ?? [],
    hostVolumes: (values["host-volume"] ?? []).map(hostVolumeFlag),
    meta: Object.fromEntries((values.meta ?? []).map(metaFlag)),
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
