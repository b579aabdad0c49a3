/** Command-line flags of `berth csi-hostpath`. */
import { socketPathOf } from "../proto.js";
import { expansionModeOf, type ExpansionMode } from "./expansion_mode.js";
import { capacityFlag, type HostpathCapacity } from "./capacity_flags.js";

/**
 * Which CSI services the process serves: monolith = Identity+Controller+Node; controller =
 * Identity+Controller (node calls answer UNIMPLEMENTED); node = Identity+Node (no CONTROLLER_SERVICE
 * advertised, controller calls answer UNIMPLEMENTED). Controller and node processes of one plugin
 * share a --state-dir (emulated shared storage).
 */
export const HOSTPATH_MODES = ["monolith", "controller", "node"] as const;
export type HostpathMode = (typeof HOSTPATH_MODES)[number];

export interface HostpathConfig {
  /** Absolute socket path. */
  socketPath: string;
  nodeId: string;
  stateDir: string;
  maxVolumes: number;
  topology: Record<string, string>;
  /** A file that gets one JSON line per RPC (method, volume, node, outcome; never secrets). */
  callLog: string | null;
  /** A JSON file of injected faults, re-read when it changes (faults.ts); null: none. */
  faults?: string | null;
  mode: HostpathMode;
  /**
   * Advertise PUBLISH_UNPUBLISH_VOLUME: ControllerPublish records attachments per (volume, node)
   * under the state dir and NodeStage requires the publish_context it returned.
   */
  attachRequired: boolean;
  /**
   * Answer capacity_bytes 0 ("unknown", which CSI allows) from CreateVolume, ListVolumes and
   * Controller/NodeExpandVolume, as plugins for storage without a size do. The recorded size is kept.
   */
  reportCapacityZero?: boolean;
  /** --expansion, --modify-volume, --volume-mount-group (modify_features.ts); absent: online, off, off. */
  expansion?: ExpansionMode;
  modifyVolume?: boolean;
  volumeMountGroup?: boolean;
  /** GetCapacity's totals per segment (capacity.ts); absent or empty: the state dir's free space. */
  capacity?: HostpathCapacity;
  /** Advertise SINGLE_NODE_MULTI_WRITER and accept CSI 1.5's two single-node modes (access_modes.ts). */
  singleNodeMultiWriter?: boolean;
}

export const HOSTPATH_USAGE = `usage: berth csi-hostpath --node-id=ID --state-dir=DIR [--endpoint=unix:///path/csi.sock]
       [--max-volumes=N] [--topology-key=value ...] [--call-log=FILE]
       [--mode=monolith|controller|node] [--attach-required] [--faults=FILE]
       [--report-capacity-zero] [--expansion=online|offline|none] [--modify-volume]
       [--volume-mount-group] [--capacity=BYTES] [--capacity-KEY=VALUE=BYTES ...]
       [--single-node-multi-writer]
  --endpoint      the gRPC socket (default: $CSI_ENDPOINT)
  --node-id       this node's id, reported by NodeGetInfo (required unless --mode=controller)
  --mode          the services served: monolith (default), controller or node
  --attach-required  advertise PUBLISH_UNPUBLISH_VOLUME; NodeStage needs ControllerPublish's context
  --state-dir     where volumes live: <state-dir>/volumes/<id> (required)
  --max-volumes   volumes per node (default 1024)
  --topology-K=V  a topology segment (default berth.io/hostname=<node id>)
  --call-log      append one JSON line per RPC to this file (for conformance and ordering checks)
  --faults        a JSON file of method → {code|hangMs|answerAfterMs|noop, times, skip}: injected
                  failures, hangs, held-back answers and no-ops, re-read whenever it changes (for
                  fault-injection tests)
  --report-capacity-zero  answer capacity_bytes 0 (unknown) for every volume, as storage without a
                  size does
  --expansion     the VolumeExpansion capability: online (default), offline (refuses to expand a
                  volume in use) or none (no expansion at all)
  --modify-volume advertise MODIFY_VOLUME (ControllerModifyVolume records mutable_parameters)
  --volume-mount-group  advertise VOLUME_MOUNT_GROUP (NodePublish applies volume_mount_group)
  --capacity      GetCapacity answers BYTES minus the sizes of the segment's volumes, and
                  CreateVolume refuses a volume that does not fit (default: the free space)
  --capacity-K=V=BYTES  the same for the segments with K=V (give every instance the same flags)
  --single-node-multi-writer  advertise SINGLE_NODE_MULTI_WRITER (controller and node) and accept
                  the SINGLE_NODE_SINGLE_WRITER and SINGLE_NODE_MULTI_WRITER access modes`;

/** Parses `--flag=value` and `--flag value`. Throws an Error with a one-line reason on bad input. */
export function parseHostpathFlags(argv: string[], env: NodeJS.ProcessEnv = process.env): HostpathConfig {
  let endpoint = env.CSI_ENDPOINT ?? "";
  let nodeId = "";
  let stateDir = "";
  let maxVolumes = 1024;
  const topology: Record<string, string> = {};
  let callLog: string | null = null;
  let faults: string | null = null;
  let mode: HostpathMode = "monolith";
  let attachRequired = false;
  let reportCapacityZero = false;
  const features: Pick<HostpathConfig, "expansion" | "modifyVolume" | "volumeMountGroup"> = {};
  const capacity: HostpathCapacity = { total: null, segments: [] };
  let singleNodeMultiWriter = false;
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
    else if (name === "faults") faults = value();
    else if (name === "attach-required") attachRequired = boolFlag(name, eq, arg);
    else if (name === "report-capacity-zero") reportCapacityZero = boolFlag(name, eq, arg);
    else if (name === "expansion") features.expansion = expansionModeOf(value());
    else if (name === "modify-volume") features.modifyVolume = boolFlag(name, eq, arg);
    else if (name === "volume-mount-group") features.volumeMountGroup = boolFlag(name, eq, arg);
    else if (capacityFlag(capacity, name, value)) continue;
    else if (name === "single-node-multi-writer") singleNodeMultiWriter = boolFlag(name, eq, arg);
    else if (name === "mode") mode = modeOf(value());
    else if (name === "max-volumes") maxVolumes = maxVolumesOf(value());
    else if (name.startsWith("topology-")) {
      const key = name.slice("topology-".length);
      if (!key) throw new Error("--topology-KEY=VALUE needs a key");
      topology[key] = value();
    } else throw new Error(`unknown flag --${name}`);
  }
  if (!endpoint) throw new Error("--endpoint (or CSI_ENDPOINT) is required");
  if (!nodeId && mode !== "controller") throw new Error("--node-id is required");
  if (!stateDir) throw new Error("--state-dir is required");
  if (Object.keys(topology).length === 0 && nodeId) topology["berth.io/hostname"] = nodeId;
  return {
    socketPath: socketPathOf(endpoint),
    nodeId,
    stateDir,
    maxVolumes,
    topology,
    callLog,
    faults,
    mode,
    attachRequired,
    reportCapacityZero,
    ...features,
    capacity,
    singleNodeMultiWriter,
  };
}

/** --mode's value: one of HOSTPATH_MODES. */
function modeOf(v: string): HostpathMode {
  if (!(HOSTPATH_MODES as readonly string[]).includes(v))
    throw new Error(`--mode: expected one of ${HOSTPATH_MODES.join(", ")}, got ${JSON.stringify(v)}`);
  return v as HostpathMode;
}

/** --max-volumes' value: an integer ≥ 1. */
function maxVolumesOf(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--max-volumes: bad number ${v}`);
  return n;
}

/** A boolean flag: bare, or =true/=false (never consumes the next argument). */
function boolFlag(name: string, eq: number, arg: string): boolean {
  const v = eq === -1 ? "true" : arg.slice(eq + 1);
  if (v !== "true" && v !== "false") throw new Error(`--${name}: expected true or false, got ${v}`);
  return v === "true";
}
