/** Command-line flags of `berth csi-hostpath`. */
import { socketPathOf } from "../proto.js";

export interface HostpathConfig {
  /** Absolute socket path. */
  socketPath: string;
  nodeId: string;
  stateDir: string;
  maxVolumes: number;
  topology: Record<string, string>;
  /** A file that gets one JSON line per RPC (method, volume, node, outcome; never secrets). */
  callLog: string | null;
}

export const HOSTPATH_USAGE = `usage: berth csi-hostpath --node-id=ID --state-dir=DIR [--endpoint=unix:///path/csi.sock]
       [--max-volumes=N] [--topology-key=value ...] [--call-log=FILE]
  --endpoint      the gRPC socket (default: $CSI_ENDPOINT)
  --node-id       this node's id, reported by NodeGetInfo (required)
  --state-dir     where volumes live: <state-dir>/volumes/<id> (required)
  --max-volumes   volumes per node (default 1024)
  --topology-K=V  a topology segment (default berth.io/hostname=<node id>)
  --call-log      append one JSON line per RPC to this file (for conformance and ordering checks)`;

/** Parses `--flag=value` and `--flag value`. Throws an Error with a one-line reason on bad input. */
export function parseHostpathFlags(argv: string[], env: NodeJS.ProcessEnv = process.env): HostpathConfig {
  let endpoint = env.CSI_ENDPOINT ?? "";
  let nodeId = "";
  let stateDir = "";
  let maxVolumes = 1024;
  const topology: Record<string, string> = {};
  let callLog: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) throw new Error(`unexpected argument ${JSON.stringify(arg)}`);
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const value = (): string => {
      if (eq !== -1) return arg.slice(eq + 1);
      const next = argv[++i];
      if (next === undefined) throw new Error(`--${name} needs a value`);
      return next;
    };
    if (name === "endpoint") endpoint = value();
    else if (name === "node-id") nodeId = value();
    else if (name === "state-dir") stateDir = value();
    else if (name === "call-log") callLog = value();
    else if (name === "max-volumes") {
      const v = value();
      maxVolumes = Number(v);
      if (!Number.isInteger(maxVolumes) || maxVolumes < 1) throw new Error(`--max-volumes: bad number ${v}`);
    } else if (name.startsWith("topology-")) {
      const key = name.slice("topology-".length);
      if (!key) throw new Error("--topology-KEY=VALUE needs a key");
      topology[key] = value();
    } else throw new Error(`unknown flag --${name}`);
  }
  if (!endpoint) throw new Error("--endpoint (or CSI_ENDPOINT) is required");
  if (!nodeId) throw new Error("--node-id is required");
  if (!stateDir) throw new Error("--state-dir is required");
  if (Object.keys(topology).length === 0) topology["berth.io/hostname"] = nodeId;
  return { socketPath: socketPathOf(endpoint), nodeId, stateDir, maxVolumes, topology, callLog };
}
