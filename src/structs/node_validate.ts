/**
 * The node drain and eligibility request bodies (Nomad's NodeUpdateDrainRequest and
 * NodeUpdateEligibilityRequest), and what a node agent reports about itself (Node.Register,
 * Node.UpdateFingerprint) → typed values. Pure; every refusal names its field.
 */
import type { CSIControllerInfo, CSIInfo, CSINodeInfo } from "./csi_terms.js";
import { validationError } from "./errors.js";
import { checkId } from "./ids.js";
import {
  asObject,
  oneOf,
  optArray,
  optBool,
  optNumber,
  optObject,
  optOneOf,
  optString,
  optStringMap,
} from "./json_check.js";
import {
  ELIGIBILITIES,
  type ClientHostVolumeConfig,
  type DrainSpec,
  type DriverInfo,
  type Node,
  type SchedulingEligibility,
} from "./node.js";

export interface DrainRequest {
  /** null cancels the drain. */
  DrainSpec: DrainSpec | null;
  /** With a null DrainSpec: make the node eligible again. */
  MarkEligible: boolean;
  Meta: Record<string, string>;
}

export function validateDrainRequest(input: unknown): DrainRequest {
  const body = asObject("body", input);
  const spec = optObject("DrainSpec", body.DrainSpec);
  const MarkEligible = optBool("MarkEligible", body.MarkEligible, false);
  const Meta = optStringMap("Meta", body.Meta);
  if (!spec) return { DrainSpec: null, MarkEligible, Meta };
  const deadline = spec.Deadline ?? 0;
  // Nomad's Deadline is a Go time.Duration (int64 nanoseconds, about ±292 years); past that the
  // force deadline is no date at all (a 1e300 deadline answered 500 "Invalid time value").
  if (typeof deadline !== "number" || !Number.isInteger(deadline) || Math.abs(deadline) >= 2 ** 63) {
    throw validationError(
      "DrainSpec.Deadline",
      "must be an integer number of nanoseconds below 2^63, about 292 years (0: no deadline, -1: force now)",
    );
  }
  return {
    DrainSpec: {
      Deadline: deadline,
      IgnoreSystemJobs: optBool("DrainSpec.IgnoreSystemJobs", spec.IgnoreSystemJobs, false),
    },
    MarkEligible,
    Meta,
  };
}

export function validateEligibilityRequest(input: unknown): SchedulingEligibility {
  const body = asObject("body", input);
  return oneOf("Eligibility", body.Eligibility, ELIGIBILITIES, "scheduling eligibility");
}

/**
 * The fields of a node a node agent reports (Node.Register), checked on the way in: everything the
 * scheduler, the feasibility checks, the plugin derivation, the drainer and the CLI read is typed
 * and bounded here, so one odd peer can never store a record that breaks placement for every job.
 * Server-owned fields (Status, StatusDescription, StatusUpdatedAt, the drain, the indexes) are not
 * taken from the agent at all; unknown fields are dropped, not stored. Every refusal names its
 * field under `Node.` and nothing is written.
 */
export type ReportedNode = Pick<
  Node,
  | "ID"
  | "Name"
  | "Datacenter"
  | "NodeClass"
  | "SchedulingEligibility"
  | "Drivers"
  | "CSIControllerPlugins"
  | "CSINodePlugins"
  | "HostVolumes"
  | "Attributes"
  | "Meta"
  | "NodeResources"
  | "ReservedResources"
>;

export function validateReportedNode(input: unknown): ReportedNode {
  const n = asObject("Node", input);
  const ID = checkId("Node.ID", n.ID);
  const Datacenter = optString("Node.Datacenter", n.Datacenter, "");
  // Nomad refuses a registration without a datacenter: placement filters nodes by it.
  if (Datacenter === "") throw validationError("Node.Datacenter", "is required");
  if (n.Drivers === undefined || n.Drivers === null) throw validationError("Node.Drivers", "is required");
  return {
    ID,
    Name: optString("Node.Name", n.Name, ID),
    Datacenter,
    NodeClass: optString("Node.NodeClass", n.NodeClass, ""),
    SchedulingEligibility: optOneOf(
      "Node.SchedulingEligibility",
      n.SchedulingEligibility,
      ELIGIBILITIES,
      "scheduling eligibility",
      "eligible",
    ),
    Drivers: drivers("Node.Drivers", n.Drivers),
    CSIControllerPlugins: csiPlugins("Node.CSIControllerPlugins", n.CSIControllerPlugins),
    CSINodePlugins: csiPlugins("Node.CSINodePlugins", n.CSINodePlugins),
    HostVolumes: hostVolumes("Node.HostVolumes", n.HostVolumes),
    Attributes: optStringMap("Node.Attributes", n.Attributes),
    Meta: optStringMap("Node.Meta", n.Meta),
    ...nodeResources(n.NodeResources, n.ReservedResources),
  };
}

/** A count of MHz or MiB a node reports: a whole number, 0 or more. */
const amount = (field: string, v: unknown) => optNumber(field, v, 0, { integer: true, min: 0 });

/**
 * Node.NodeResources and Node.ReservedResources as the scheduler bin-packs them: whole, non-negative
 * MHz and MiB. Either may be absent (an agent from before resources existed): such a node is not
 * bin-packed.
 */
function nodeResources(res: unknown, reserved: unknown): Pick<Node, "NodeResources" | "ReservedResources"> {
  const out: Pick<Node, "NodeResources" | "ReservedResources"> = {};
  if (res !== undefined && res !== null) {
    const r = asObject("Node.NodeResources", res);
    const cpu = asObject("Node.NodeResources.Cpu", r.Cpu);
    const cores = optArray("Node.NodeResources.Cpu.ReservableCpuCores", cpu.ReservableCpuCores);
    out.NodeResources = {
      Cpu: {
        CpuShares: amount("Node.NodeResources.Cpu.CpuShares", cpu.CpuShares),
        TotalCpuCores: amount("Node.NodeResources.Cpu.TotalCpuCores", cpu.TotalCpuCores),
        ReservableCpuCores: cores.map((c, i) => amount(`Node.NodeResources.Cpu.ReservableCpuCores[${i}]`, c)),
      },
      Memory: {
        MemoryMB: amount(
          "Node.NodeResources.Memory.MemoryMB",
          asObject("Node.NodeResources.Memory", r.Memory).MemoryMB,
        ),
      },
      Disk: {
        DiskMB: amount(
          "Node.NodeResources.Disk.DiskMB",
          optObject("Node.NodeResources.Disk", r.Disk)?.DiskMB,
        ),
      },
    };
  }
  if (reserved !== undefined && reserved !== null) {
    const r = asObject("Node.ReservedResources", reserved);
    out.ReservedResources = {
      Cpu: {
        CpuShares: amount(
          "Node.ReservedResources.Cpu.CpuShares",
          optObject("Node.ReservedResources.Cpu", r.Cpu)?.CpuShares,
        ),
      },
      Memory: {
        MemoryMB: amount(
          "Node.ReservedResources.Memory.MemoryMB",
          optObject("Node.ReservedResources.Memory", r.Memory)?.MemoryMB,
        ),
      },
      Disk: {
        DiskMB: amount(
          "Node.ReservedResources.Disk.DiskMB",
          optObject("Node.ReservedResources.Disk", r.Disk)?.DiskMB,
        ),
      },
    };
  }
  return out;
}

/**
 * A fingerprint update (Node.UpdateFingerprint): Drivers absent keeps the stored ones; a plugin map
 * absent means the node runs none of that kind (what the agent sends when its last plugin stops).
 */
export function validateFingerprint(input: unknown): {
  NodeID: string;
  Drivers: Record<string, DriverInfo> | undefined;
  CSIControllerPlugins: Record<string, CSIInfo>;
  CSINodePlugins: Record<string, CSIInfo>;
} {
  const req = asObject("body", input);
  return {
    NodeID: checkId("NodeID", req.NodeID),
    Drivers: req.Drivers === undefined || req.Drivers === null ? undefined : drivers("Drivers", req.Drivers),
    CSIControllerPlugins: csiPlugins("CSIControllerPlugins", req.CSIControllerPlugins),
    CSINodePlugins: csiPlugins("CSINodePlugins", req.CSINodePlugins),
  };
}

/**
 * Names a node reports (drivers, host volumes): non-empty, printable, at most 128 characters, and
 * never `__proto__` (as a map key it would replace the map's prototype instead of adding an entry).
 */
function checkName(field: string, key: string): void {
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (key === "" || key.length > 128 || /[\u0000-\u001f\u007f]/.test(key) || key === "__proto__") {
    throw validationError(
      field,
      `${JSON.stringify(key)} is not a valid name (1 to 128 printable characters)`,
    );
  }
}

function drivers(field: string, input: unknown): Record<string, DriverInfo> {
  const obj = asObject(field, input);
  const out: Record<string, DriverInfo> = {};
  for (const [name, v] of Object.entries(obj)) {
    const f = `${field}.${name}`;
    checkName(f, name);
    const d = asObject(f, v);
    out[name] = {
      Detected: optBool(`${f}.Detected`, d.Detected, false),
      Healthy: optBool(`${f}.Healthy`, d.Healthy, false),
      HealthDescription: optString(`${f}.HealthDescription`, d.HealthDescription, ""),
      SupportsMounts: optBool(`${f}.SupportsMounts`, d.SupportsMounts, false),
    };
  }
  return out;
}

function hostVolumes(field: string, input: unknown): Record<string, ClientHostVolumeConfig> {
  const obj = optObject(field, input) ?? {};
  const out: Record<string, ClientHostVolumeConfig> = {};
  for (const [name, v] of Object.entries(obj)) {
    const f = `${field}.${name}`;
    checkName(f, name);
    const h = asObject(f, v);
    const Path = optString(`${f}.Path`, h.Path, "");
    if (!Path.startsWith("/")) {
      throw validationError(`${f}.Path`, `must be an absolute path, got ${JSON.stringify(Path)}`);
    }
    const Name = optString(`${f}.Name`, h.Name, name);
    if (Name !== name) throw validationError(`${f}.Name`, `must be the map key ${JSON.stringify(name)}`);
    out[name] = { Name, Path, ReadOnly: optBool(`${f}.ReadOnly`, h.ReadOnly, false) };
  }
  return out;
}

/** A plugin map keyed by plugin ID; each entry's PluginID, when given, must be its key. */
function csiPlugins(field: string, input: unknown): Record<string, CSIInfo> {
  const obj = optObject(field, input) ?? {};
  const out: Record<string, CSIInfo> = {};
  for (const [id, v] of Object.entries(obj)) {
    checkId(`${field} key`, id);
    checkName(`${field} key`, id);
    out[id] = csiInfo(`${field}.${id}`, id, v);
  }
  return out;
}

function csiInfo(field: string, id: string, input: unknown): CSIInfo {
  const i = asObject(field, input);
  const PluginID = optString(`${field}.PluginID`, i.PluginID, id);
  if (PluginID !== id)
    throw validationError(`${field}.PluginID`, `must be the map key ${JSON.stringify(id)}`);
  const str = (k: string) => optString(`${field}.${k}`, i[k], "");
  const bool = (k: string) => optBool(`${field}.${k}`, i[k], false);
  return {
    PluginID,
    AllocID: str("AllocID"),
    Healthy: bool("Healthy"),
    HealthDescription: str("HealthDescription"),
    UpdateTime: optNumber(`${field}.UpdateTime`, i.UpdateTime, 0, { integer: true, min: 0 }),
    Provider: str("Provider"),
    ProviderVersion: str("ProviderVersion"),
    RequiresControllerPlugin: bool("RequiresControllerPlugin"),
    RequiresTopologies: bool("RequiresTopologies"),
    ControllerInfo: controllerInfo(`${field}.ControllerInfo`, i.ControllerInfo),
    NodeInfo: nodeInfo(`${field}.NodeInfo`, i.NodeInfo),
  };
}

const CONTROLLER_FLAGS = [
  "SupportsCreateDelete",
  "SupportsAttachDetach",
  "SupportsListVolumes",
  "SupportsGetCapacity",
  "SupportsCreateDeleteSnapshot",
  "SupportsListSnapshots",
  "SupportsClone",
  "SupportsReadOnlyAttach",
  "SupportsExpand",
  "SupportsListVolumesAttachedNodes",
  "SupportsCondition",
  "SupportsGet",
] as const satisfies readonly (keyof CSIControllerInfo)[];

function controllerInfo(field: string, input: unknown): CSIControllerInfo | null {
  const c = optObject(field, input);
  if (!c) return null;
  const out = {} as CSIControllerInfo;
  for (const k of CONTROLLER_FLAGS) out[k] = optBool(`${field}.${k}`, c[k], false);
  // berth's optional flags (csi_terms.ts): kept only when true, as the fingerprint sends them.
  for (const k of ["SupportsModify", "SupportsOnlineExpand"] as const) {
    if (optBool(`${field}.${k}`, c[k], false)) out[k] = true;
  }
  return out;
}

/** CSI's max_volumes_per_node is an int64; more than 2^31 volumes on one node is no real limit. */
const MAX_NODE_VOLUMES = 2 ** 31 - 1;

function nodeInfo(field: string, input: unknown): CSINodeInfo | null {
  const n = optObject(field, input);
  if (!n) return null;
  const topo = optObject(`${field}.AccessibleTopology`, n.AccessibleTopology);
  const bool = (k: string) => optBool(`${field}.${k}`, n[k], false);
  return {
    ID: optString(`${field}.ID`, n.ID, ""),
    MaxVolumes: optNumber(`${field}.MaxVolumes`, n.MaxVolumes, 0, {
      integer: true,
      min: 0,
      max: MAX_NODE_VOLUMES,
    }),
    AccessibleTopology: topo
      ? { Segments: optStringMap(`${field}.AccessibleTopology.Segments`, topo.Segments) }
      : null,
    RequiresNodeStageVolume: bool("RequiresNodeStageVolume"),
    SupportsStats: bool("SupportsStats"),
    SupportsExpand: bool("SupportsExpand"),
    SupportsCondition: bool("SupportsCondition"),
  };
}
