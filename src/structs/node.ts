/** Client nodes as registered with the server, and the drain rules that live on them (pure). */
import { validationError } from "./errors.js";
import type { CSIInfo } from "./csi_terms.js";

export type NodeStatus = "initializing" | "ready" | "down" | "disconnected";

export interface DriverInfo {
  Detected: boolean;
  Healthy: boolean;
  HealthDescription: string;
  /** The driver can bind volumes into a task; the scheduler and volume_hook check it. */
  SupportsMounts: boolean;
  /**
   * Node attributes the driver fingerprints, under their full names (docker's
   * `driver.docker.version`, …), as Nomad's DriverInfo.Attributes; set only while it is healthy.
   */
  Attributes?: Record<string, string>;
}

export interface Node {
  ID: string;
  Name: string;
  Datacenter: string;
  NodeClass: string;
  Status: NodeStatus;
  StatusDescription: string;
  SchedulingEligibility: "eligible" | "ineligible";
  Drivers: Record<string, DriverInfo>;
  /** Keyed by plugin ID. */
  CSIControllerPlugins: Record<string, CSIInfo>;
  CSINodePlugins: Record<string, CSIInfo>;
  /**
   * Host volumes from the agent's client config (Nomad's Node.HostVolumes), keyed by name. Optional:
   * records stored before host volumes existed do not carry it; absent means none.
   */
  HostVolumes?: Record<string, ClientHostVolumeConfig>;
  /** Fingerprinted attributes (`${attr.kernel.name}`, …), as Nomad's Node.Attributes. */
  Attributes?: Record<string, string>;
  /** Operator metadata (`client { meta { … } }`, `-meta`), as Nomad's Node.Meta. */
  Meta?: Record<string, string>;
  /**
   * Fingerprinted totals (Nomad's Node.NodeResources): what the scheduler bin-packs against, less
   * ReservedResources. Absent on records stored before resources existed: not bin-packed.
   */
  NodeResources?: NodeResources;
  /** What the agent keeps for itself (client `reserved { cpu, memory }`); absent: nothing. */
  ReservedResources?: NodeReservedResources;
  /**
   * Set while the node drains (Nomad's DrainStrategy); null or absent otherwise. Only the server
   * writes it: a node agent's registration never sets or clears it. Optional because records
   * stored before drains existed, and the node agent's own Node, do not carry it.
   */
  DrainStrategy?: DrainStrategy | null;
  /** The latest drain's outcome (Nomad's LastDrain); absent until the node is first drained. */
  LastDrain?: DrainMetadata | null;
  /** Unix milliseconds of the last heartbeat. */
  StatusUpdatedAt: number;
  /**
   * Unix milliseconds at which the server took this down node's plugin instances off the plugin
   * records, once it had been down longer than the server's bound (HeartbeatMonitor); absent
   * otherwise. Only the server writes it; the node's own fingerprint (CSIControllerPlugins /
   * CSINodePlugins) is kept, and the instances count again as soon as the node is ready.
   */
  CSIPluginsDetachedAt?: number;
  /**
   * SHA-256 (hex) of the node's secret (Nomad's Node.SecretID), bound at its first registration
   * (src/server/rpc/node_auth.ts). Only the server writes it; it never leaves the server (the API
   * answers drop it). Absent on records stored before node secrets existed: the next registration
   * that presents a secret binds it.
   */
  SecretIDHash?: string;
  /**
   * The order `[epoch, seq]` of the last report of the node's agent (Node.Register or
   * Node.UpdateFingerprint) applied to this record; an older one arriving late is refused
   * (structs/node_report.ts). Only the server writes it; the API answers drop it. Absent until an
   * agent that sends one reports.
   */
  ReportOrder?: [number, number];
  CreateIndex: number;
  ModifyIndex: number;
}

/** Nomad's NodeResources, the parts berth fills: CPU in MHz shares, memory and disk in MiB. */
export interface NodeResources {
  Cpu: { CpuShares: number; TotalCpuCores: number; ReservableCpuCores: number[] };
  Memory: { MemoryMB: number };
  Disk: { DiskMB: number };
}

/** Nomad's NodeReservedResources, the same parts. */
export interface NodeReservedResources {
  Cpu: { CpuShares: number };
  Memory: { MemoryMB: number };
  Disk: { DiskMB: number };
}

/** One `host_volume "name" { path, read_only }` of the client config (Nomad's ClientHostVolumeConfig). */
export interface ClientHostVolumeConfig {
  Name: string;
  /** Absolute host path of an existing directory. */
  Path: string;
  ReadOnly: boolean;
}

/**
 * Whether the node offers what a `volume { type = "host" }` request needs (Nomad's
 * HostVolumeChecker): a host volume of that name, writable unless the request is read-only.
 */
export function hostVolumeFits(node: Pick<Node, "HostVolumes">, source: string, readOnly: boolean): boolean {
  // An own entry only: a name like "constructor" or "__proto__" must not find Object.prototype's
  // member on a node without host volumes (it was placed, then failed at task start).
  const vol = ownEntry(node.HostVolumes ?? undefined, source);
  if (vol === null || typeof vol !== "object") return false;
  return readOnly || !vol.ReadOnly;
}

/**
 * The node as its agent sends it in Node.Register: its record plus the secret that proves it is
 * that node (Nomad's Node.SecretID). The secret is checked and hashed, never stored or echoed.
 */
export type RegisteringNode = Node & { SecretID?: string };

export type SchedulingEligibility = Node["SchedulingEligibility"];
export const ELIGIBILITIES: readonly SchedulingEligibility[] = ["eligible", "ineligible"];

/** What an operator asks for (Nomad's DrainSpec). */
export interface DrainSpec {
  /**
   * Nanoseconds after which whatever is left is stopped at once; 0 means no deadline, a negative
   * value forces the drain now.
   */
  Deadline: number;
  /** System jobs' allocs stay on the node. */
  IgnoreSystemJobs: boolean;
}

export interface DrainStrategy extends DrainSpec {
  /** RFC 3339: the drain's start plus Deadline when Deadline > 0, else ZERO_TIME. */
  ForceDeadline: string;
  /** RFC 3339: when the drain began (kept when the strategy is updated). */
  StartedAt: string;
}

export type DrainStatus = "draining" | "complete" | "canceled";

export interface DrainMetadata {
  /** RFC 3339. */
  StartedAt: string;
  UpdatedAt: string;
  Status: DrainStatus;
  Meta: Record<string, string>;
}

/** Go's zero time.Time, as Nomad writes an unset ForceDeadline. */
export const ZERO_TIME = "0001-01-01T00:00:00Z";

/** RFC 3339 in UTC with milliseconds: a deadline must not move by the rounding of a second. */
function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

export function drainStrategyOf(node: Pick<Node, "DrainStrategy">): DrainStrategy | null {
  return node.DrainStrategy ?? null;
}

export function isDraining(node: Pick<Node, "DrainStrategy">): boolean {
  return drainStrategyOf(node) !== null;
}

/**
 * Unix ms at which everything left is stopped at once: null with no deadline, -Infinity for a
 * forced drain (already due).
 */
export function drainForceAtMs(d: DrainStrategy): number | null {
  if (d.Deadline === 0) return null;
  if (d.Deadline < 0) return Number.NEGATIVE_INFINITY;
  const at = Date.parse(d.ForceDeadline);
  return Number.isNaN(at) ? Number.NEGATIVE_INFINITY : at;
}

/**
 * The node after a drain request (Nomad's Node.UpdateDrain): a spec starts or updates the drain and
 * makes the node ineligible (StartedAt kept on update, ForceDeadline counted from now); null cancels
 * it, and `markEligible` then makes the node eligible again.
 */
export function applyDrainRequest(
  node: Node,
  req: { DrainSpec: DrainSpec | null; MarkEligible: boolean; Meta: Record<string, string> },
  nowMs: number,
): Node {
  const now = rfc3339(nowMs);
  const prev = drainStrategyOf(node);
  if (req.DrainSpec) {
    const startedAt = prev?.StartedAt ?? now;
    const { Deadline, IgnoreSystemJobs } = req.DrainSpec;
    return {
      ...node,
      SchedulingEligibility: "ineligible",
      DrainStrategy: {
        Deadline,
        IgnoreSystemJobs,
        ForceDeadline: Deadline > 0 ? rfc3339(nowMs + Deadline / 1e6) : ZERO_TIME,
        StartedAt: startedAt,
      },
      LastDrain: { StartedAt: startedAt, UpdatedAt: now, Status: "draining", Meta: req.Meta },
    };
  }
  const last = node.LastDrain ?? null;
  return {
    ...node,
    SchedulingEligibility: req.MarkEligible ? "eligible" : node.SchedulingEligibility,
    DrainStrategy: null,
    LastDrain:
      prev && last
        ? {
            ...last,
            UpdatedAt: now,
            Status: "canceled",
            Meta: Object.keys(req.Meta).length > 0 ? req.Meta : last.Meta,
          }
        : last,
  };
}

/** The node once its drain has nothing left to stop: no strategy, still ineligible, LastDrain complete. */
export function completeDrain(node: Node, nowMs: number): Node {
  const prev = drainStrategyOf(node);
  const startedAt = node.LastDrain?.StartedAt ?? prev?.StartedAt ?? rfc3339(nowMs);
  return {
    ...node,
    DrainStrategy: null,
    LastDrain: {
      StartedAt: startedAt,
      UpdatedAt: rfc3339(nowMs),
      Status: "complete",
      Meta: node.LastDrain?.Meta ?? {},
    },
  };
}

/** Nomad refuses to make a draining node eligible: the drain would place work right back on it. */
export function applyEligibility(node: Node, eligibility: SchedulingEligibility): Node {
  if (eligibility === "eligible" && isDraining(node)) {
    throw validationError(
      "Eligibility",
      "can not set the scheduling eligibility of a draining node to eligible; cancel the drain first",
    );
  }
  return { ...node, SchedulingEligibility: eligibility };
}

/**
 * The node is out of contact: `down`, or `disconnected` (missed its heartbeat while running allocs
 * whose group has a `lost_after` window). Either way nothing reaches it: release walks skip its node
 * step, the fence hold counts, the scheduler places nothing there.
 */
export function isNodeOutOfContact(node: Pick<Node, "Status">): boolean {
  return node.Status === "down" || node.Status === "disconnected";
}

/** The node back in service (a heartbeat or a registration after it was down). */
export function markNodeReady(node: Node, nowMs: number): Node {
  const { CSIPluginsDetachedAt: _detached, ...rest } = node;
  return { ...rest, Status: "ready", StatusDescription: "", StatusUpdatedAt: nowMs };
}

/** Own entries only: a map key such as "constructor" must not find Object.prototype's member. */
export function ownEntry<T>(map: Record<string, T> | undefined, key: string): T | undefined {
  return map && Object.hasOwn(map, key) ? map[key] : undefined;
}
