/** `berth nodesim` flags: parsed and checked here, so a bad one stops the simulator before it dials. */
import fs from "node:fs";
import { parseArgs } from "node:util";
import { parseGoDurationMs } from "../structs/acl_records.js";
import { serverCertName, type ClientTls } from "../internal/tls.js";
import type { NodeSimOptions } from "./nodesim.js";

export const NODESIM_USAGE = `Usage: berth nodesim -count=N -servers=ADDR [options]

  Runs N simulated node agents in one process against a real server: each registers with its own
  node secret, heartbeats, syncs its allocs, claims, stages, publishes and releases CSI volumes
  through the node agent's own code, and reports a simulated CSI plugin (node and controller).
  Tasks run no process (driver "mock_driver": a batch task completes after config run_for, default
  at once; a service task runs until stopped); nothing is mounted.

  -count=N               simulated nodes (required)
  -servers=ADDR[,..]     server HTTP address the nodes dial (required), e.g. http://127.0.0.1:4646
  -plugin=ID             CSI plugin every node runs as a monolith (default sim-csi; "" for none)
  -node-latency=DUR      latency of each node volume call, NodeStage/Publish/Unpublish/Unstage
                         (e.g. 5ms; default 0)
  -controller-latency=DUR latency of each controller volume call, ControllerPublish/Unpublish,
                         CreateVolume, DeleteVolume (default 0)
  -error-rate=F          probability in [0,1] that a volume call fails with UNAVAILABLE (retried;
                         default 0)
  -max-volumes=N         the plugin's max volumes per node (default 0: no limit)
  -name-prefix=P         node names are P-0 … P-(N-1) (default sim)
  -dc=NAME               the nodes' datacenter (default dc1)
  -data-dir=DIR          the nodes' identities and alloc dirs (default: a temp dir removed at exit;
                         with a DIR, a second run keeps the same node IDs)
  -start-concurrency=N   nodes starting at once, each until it registered (default 64)
  -drain-on-exit         on SIGINT/SIGTERM, stop every alloc and release its volumes first
  -log-level=LEVEL       debug, info, warn or error (default warn)
  -ca-file=FILE          TLS: the CA the server's certificate must chain to (agent tls.ca_file)
  -cert-file=FILE        TLS: the nodes' client certificate (agent tls.cert_file), with -key-file
  -key-file=FILE         TLS: its key (agent tls.key_file)
  -verify-server-hostname
                         TLS: the server's certificate must name server.global.nomad

Nodes authenticate with their node secrets as real agents do; ACL tokens are not used by agents.
Against a server on this host's IPv4 loopback (e.g. http://127.0.0.1:4646) each node dials from
its own loopback address (127.2.0.1, 127.2.0.2, ...), as separate hosts would, so a server with
the default limits { rpc_max_conns_per_client = 100 } takes any number of them. Against a server
elsewhere, its per-address limit must allow N connections from this host.`;

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface NodeSimCli {
  sim: Omit<NodeSimOptions, "log">;
  drainOnExit: boolean;
  logLevel: LogLevel;
}

function fail(msg: string): never {
  throw new Error(msg);
}

function durationMs(flag: string, v: string | undefined): number {
  if (v === undefined) return 0;
  const ms = /^\d+$/.test(v) ? Number(v) : parseGoDurationMs(v);
  if (ms === undefined || ms < 0)
    fail(`-${flag}: want a duration such as 5ms or 1s, got ${JSON.stringify(v)}`);
  return ms;
}

function wholeNumber(flag: string, v: string | undefined, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < min) fail(`-${flag}: want a whole number ≥ ${min}, got ${JSON.stringify(v)}`);
  return n;
}

function tlsOf(v: Record<string, string | boolean | undefined>): ClientTls | undefined {
  const [ca, cert, key] = [v["ca-file"], v["cert-file"], v["key-file"]] as (string | undefined)[];
  if (!ca && !cert && !key && !v["verify-server-hostname"]) return undefined;
  if (Boolean(cert) !== Boolean(key)) fail("-cert-file and -key-file go together");
  const read = (flag: string, file: string) => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      fail(`-${flag}: cannot read ${file}: ${(err as Error).message}`);
    }
  };
  return {
    ca: ca ? read("ca-file", ca) : undefined,
    ...(cert && key ? { cert: read("cert-file", cert), key: read("key-file", key) } : {}),
    serverName: v["verify-server-hostname"] ? serverCertName() : undefined,
    minVersion: "TLSv1.2",
  };
}

/** The simulator's flags (Nomad-style single dash on the command line). */
const NODESIM_OPTIONS = {
  count: { type: "string" },
  servers: { type: "string" },
  plugin: { type: "string" },
  "node-latency": { type: "string" },
  "controller-latency": { type: "string" },
  "error-rate": { type: "string" },
  "max-volumes": { type: "string" },
  "name-prefix": { type: "string" },
  dc: { type: "string" },
  "data-dir": { type: "string" },
  "start-concurrency": { type: "string" },
  "drain-on-exit": { type: "boolean" },
  "log-level": { type: "string" },
  "ca-file": { type: "string" },
  "cert-file": { type: "string" },
  "key-file": { type: "string" },
  "verify-server-hostname": { type: "boolean" },
} as const;

/** -servers: comma-separated addresses, http:// when no scheme is given. */
function serversOf(list: string | undefined): string[] {
  return (list ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => (/^https?:\/\//.test(s) ? s : `http://${s}`));
}

export function parseNodeSimArgs(argv: string[]): NodeSimCli {
  const { values: v, positionals } = parseArgs({
    // Nomad-style single-dash flags.
    args: argv.map((a) => (/^-[a-zA-Z]/.test(a) ? "-" + a : a)),
    options: NODESIM_OPTIONS,
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 0) fail(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (v.count === undefined) fail("-count is required: how many nodes to simulate");
  const servers = serversOf(v.servers);
  if (servers.length === 0)
    fail("-servers is required: the server's HTTP address, e.g. http://127.0.0.1:4646");
  const errorRate = Number(v["error-rate"] ?? "0");
  if (!Number.isFinite(errorRate) || errorRate < 0 || errorRate > 1) {
    fail(`-error-rate: want a probability between 0 and 1, got ${JSON.stringify(v["error-rate"])}`);
  }
  const prefix = v["name-prefix"] ?? "sim";
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(prefix)) {
    fail(`-name-prefix: letters, digits, '_', '.' and '-' only, got ${JSON.stringify(prefix)}`);
  }
  const level = v["log-level"] ?? "warn";
  if (!["debug", "info", "warn", "error"].includes(level)) {
    fail(`-log-level: want debug, info, warn or error, got ${JSON.stringify(level)}`);
  }
  const tls = tlsOf(v);
  return {
    sim: {
      count: wholeNumber("count", v.count, 0, 1),
      servers,
      tls,
      pluginId: v.plugin === undefined ? "sim-csi" : v.plugin || null,
      csi: {
        nodeLatencyMs: durationMs("node-latency", v["node-latency"]),
        controllerLatencyMs: durationMs("controller-latency", v["controller-latency"]),
        errorRate,
        maxVolumesPerNode: wholeNumber("max-volumes", v["max-volumes"], 0, 0),
      },
      namePrefix: prefix,
      dataDir: v["data-dir"] ?? null,
      datacenter: v.dc ?? "dc1",
      startConcurrency: wholeNumber("start-concurrency", v["start-concurrency"], 64, 1),
    },
    drainOnExit: v["drain-on-exit"] ?? false,
    logLevel: level as LogLevel,
  };
}
