/** Conversions between berth's camelCase CSI types (types.ts) and the decoded csi.v1 messages. */
import type { AccessMode } from "../structs/volume.js";
import type {
  CsiCapacityRange,
  CsiSnapshot,
  ListVolumesEntry,
  CsiControllerCapabilities,
  CsiNodeCapabilities,
  CsiPluginCapabilities,
  CsiTopology,
  CsiVolumeCapability,
  CsiVolumeInfo,
  CsiUsageFigures,
  CsiVolumeStats,
} from "./types.js";
import type {
  WireCapacityRange,
  WireInt64Value,
  WireListVolumesEntry,
  WireNodeGetVolumeStatsResponse,
  WireSnapshot,
  WireTimestamp,
  WireAccessModeName,
  WireContentSource,
  WirePluginCapability,
  WireRpcCapability,
  WireTopology,
  WireVolume,
  WireVolumeCapability,
} from "./wire.js";

const MODE_TO_WIRE: Record<AccessMode, WireAccessModeName> = {
  "single-node-reader-only": "SINGLE_NODE_READER_ONLY",
  "single-node-writer": "SINGLE_NODE_WRITER",
  "single-node-single-writer": "SINGLE_NODE_SINGLE_WRITER",
  "single-node-multi-writer": "SINGLE_NODE_MULTI_WRITER",
  "multi-node-reader-only": "MULTI_NODE_READER_ONLY",
  "multi-node-single-writer": "MULTI_NODE_SINGLE_WRITER",
  "multi-node-multi-writer": "MULTI_NODE_MULTI_WRITER",
};

const WIRE_TO_MODE: Record<string, AccessMode> = {
  SINGLE_NODE_READER_ONLY: "single-node-reader-only",
  SINGLE_NODE_WRITER: "single-node-writer",
  SINGLE_NODE_SINGLE_WRITER: "single-node-single-writer",
  SINGLE_NODE_MULTI_WRITER: "single-node-multi-writer",
  MULTI_NODE_READER_ONLY: "multi-node-reader-only",
  MULTI_NODE_SINGLE_WRITER: "multi-node-single-writer",
  MULTI_NODE_MULTI_WRITER: "multi-node-multi-writer",
};

export function accessModeToWire(mode: AccessMode): WireAccessModeName {
  return MODE_TO_WIRE[mode];
}

/** Null for UNKNOWN or a mode this berth does not know. */
export function accessModeFromWire(mode: string | undefined): AccessMode | null {
  return (mode !== undefined && WIRE_TO_MODE[mode]) || null;
}

export function capabilityToWire(cap: CsiVolumeCapability): WireVolumeCapability {
  const access_mode = { mode: accessModeToWire(cap.accessMode) };
  if (cap.access.type === "block") return { block: {}, access_mode };
  return {
    mount: {
      fs_type: cap.access.fsType,
      mount_flags: [...cap.access.mountFlags],
      volume_mount_group: cap.access.volumeMountGroup ?? "",
    },
    access_mode,
  };
}

/** Null when the capability names neither mount nor block, or an unknown access mode. */
export function capabilityFromWire(w: WireVolumeCapability | null | undefined): CsiVolumeCapability | null {
  if (!w) return null;
  const accessMode = accessModeFromWire(w.access_mode?.mode);
  if (!accessMode) return null;
  if (w.mount) {
    const group = w.mount.volume_mount_group;
    return {
      accessMode,
      access: {
        type: "mount",
        fsType: w.mount.fs_type,
        mountFlags: [...w.mount.mount_flags],
        ...(group ? { volumeMountGroup: group } : {}),
      },
    };
  }
  if (w.block) return { accessMode, access: { type: "block" } };
  return null;
}

export function topologyToWire(t: CsiTopology): WireTopology {
  return { segments: { ...t.segments } };
}

export function topologyFromWire(t: WireTopology | null | undefined): CsiTopology | null {
  return t ? { segments: { ...t.segments } } : null;
}

export function contentSourceToWire(
  s: { snapshotId: string } | { volumeId: string } | null,
): WireContentSource | null {
  if (!s) return null;
  return "snapshotId" in s
    ? { snapshot: { snapshot_id: s.snapshotId } }
    : { volume: { volume_id: s.volumeId } };
}

export function contentSourceFromWire(
  s: WireContentSource | null | undefined,
): { snapshotId: string } | { volumeId: string } | null {
  if (s?.snapshot) return { snapshotId: s.snapshot.snapshot_id };
  if (s?.volume) return { volumeId: s.volume.volume_id };
  return null;
}

export function volumeFromWire(v: WireVolume): CsiVolumeInfo {
  return {
    volumeId: v.volume_id,
    capacityBytes: Number(v.capacity_bytes),
    volumeContext: { ...v.volume_context },
    contentSource: contentSourceFromWire(v.content_source),
    accessibleTopology: v.accessible_topology.map((t) => ({ segments: { ...t.segments } })),
  };
}

export function pluginCapabilitiesFromWire(caps: WirePluginCapability[]): CsiPluginCapabilities {
  const services = new Set(caps.map((c) => c.service?.type).filter(Boolean));
  const expansion = new Set(caps.map((c) => c.volume_expansion?.type).filter(Boolean));
  return {
    controllerService: services.has("CONTROLLER_SERVICE"),
    volumeAccessibilityConstraints: services.has("VOLUME_ACCESSIBILITY_CONSTRAINTS"),
    groupControllerService: services.has("GROUP_CONTROLLER_SERVICE"),
    onlineExpansion: expansion.has("ONLINE"),
    offlineExpansion: expansion.has("OFFLINE"),
  };
}

export function pluginCapabilitiesToWire(c: CsiPluginCapabilities): WirePluginCapability[] {
  const out: WirePluginCapability[] = [];
  if (c.controllerService) out.push({ service: { type: "CONTROLLER_SERVICE" } });
  if (c.volumeAccessibilityConstraints) out.push({ service: { type: "VOLUME_ACCESSIBILITY_CONSTRAINTS" } });
  if (c.groupControllerService) out.push({ service: { type: "GROUP_CONTROLLER_SERVICE" } });
  if (c.onlineExpansion) out.push({ volume_expansion: { type: "ONLINE" } });
  if (c.offlineExpansion) out.push({ volume_expansion: { type: "OFFLINE" } });
  return out;
}

/** Controller capability flags and their spec names (ControllerServiceCapability.RPC.Type). */
export const CONTROLLER_RPC: Record<keyof CsiControllerCapabilities, string> = {
  createDeleteVolume: "CREATE_DELETE_VOLUME",
  publishUnpublishVolume: "PUBLISH_UNPUBLISH_VOLUME",
  listVolumes: "LIST_VOLUMES",
  getCapacity: "GET_CAPACITY",
  createDeleteSnapshot: "CREATE_DELETE_SNAPSHOT",
  listSnapshots: "LIST_SNAPSHOTS",
  cloneVolume: "CLONE_VOLUME",
  publishReadonly: "PUBLISH_READONLY",
  expandVolume: "EXPAND_VOLUME",
  listVolumesPublishedNodes: "LIST_VOLUMES_PUBLISHED_NODES",
  volumeCondition: "VOLUME_CONDITION",
  getVolume: "GET_VOLUME",
  singleNodeMultiWriter: "SINGLE_NODE_MULTI_WRITER",
  modifyVolume: "MODIFY_VOLUME",
};

const NODE_RPC: Record<keyof CsiNodeCapabilities, string> = {
  stageUnstageVolume: "STAGE_UNSTAGE_VOLUME",
  getVolumeStats: "GET_VOLUME_STATS",
  expandVolume: "EXPAND_VOLUME",
  volumeCondition: "VOLUME_CONDITION",
  singleNodeMultiWriter: "SINGLE_NODE_MULTI_WRITER",
  volumeMountGroup: "VOLUME_MOUNT_GROUP",
};

function rpcFlagsFromWire<K extends string>(
  table: Record<K, string>,
  caps: WireRpcCapability[],
): Record<K, boolean> {
  const have = new Set(caps.map((c) => c.rpc?.type).filter(Boolean));
  const out = {} as Record<K, boolean>;
  for (const key of Object.keys(table) as K[]) out[key] = have.has(table[key]);
  return out;
}

function rpcFlagsToWire<K extends string>(
  table: Record<K, string>,
  flags: Record<K, boolean>,
): WireRpcCapability[] {
  return (Object.keys(table) as K[]).filter((k) => flags[k]).map((k) => ({ rpc: { type: table[k] } }));
}

export const controllerCapabilitiesFromWire = (caps: WireRpcCapability[]): CsiControllerCapabilities =>
  rpcFlagsFromWire(CONTROLLER_RPC, caps);
export const controllerCapabilitiesToWire = (c: CsiControllerCapabilities): WireRpcCapability[] =>
  rpcFlagsToWire(CONTROLLER_RPC, c);
export const nodeCapabilitiesFromWire = (caps: WireRpcCapability[]): CsiNodeCapabilities =>
  rpcFlagsFromWire(NODE_RPC, caps);
export const nodeCapabilitiesToWire = (c: CsiNodeCapabilities): WireRpcCapability[] =>
  rpcFlagsToWire(NODE_RPC, c);

/** Every value a request must never leak: secret values and mount flags. */
export function sensitiveValues(
  secrets: Record<string, string> | undefined,
  caps: CsiVolumeCapability[],
): string[] {
  const out = Object.values(secrets ?? {});
  for (const c of caps) if (c.access.type === "mount") out.push(...c.access.mountFlags);
  return out;
}

export function capacityRangeToWire(r: CsiCapacityRange | null): WireCapacityRange | null {
  return r ? { required_bytes: r.requiredBytes, limit_bytes: r.limitBytes } : null;
}

/** Unix milliseconds ↔ google.protobuf.Timestamp. */
export function timestampToWire(ms: number): WireTimestamp {
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
}

export function timestampFromWire(t: WireTimestamp | null | undefined): number {
  return t ? Number(t.seconds) * 1000 + Math.floor(Number(t.nanos) / 1_000_000) : 0;
}

export function snapshotFromWire(s: WireSnapshot): CsiSnapshot {
  return {
    snapshotId: s.snapshot_id,
    sourceVolumeId: s.source_volume_id,
    sizeBytes: Number(s.size_bytes),
    creationTime: timestampFromWire(s.creation_time),
    readyToUse: s.ready_to_use,
  };
}

export function snapshotToWire(s: CsiSnapshot): WireSnapshot {
  return {
    size_bytes: s.sizeBytes,
    snapshot_id: s.snapshotId,
    source_volume_id: s.sourceVolumeId,
    creation_time: s.creationTime ? timestampToWire(s.creationTime) : null,
    ready_to_use: s.readyToUse,
  };
}

/** Null for an entry without a volume (a plugin bug; the caller skips it). */
export function listVolumesEntryFromWire(e: WireListVolumesEntry): ListVolumesEntry | null {
  if (!e.volume) return null;
  const condition = e.status?.volume_condition;
  return {
    volume: volumeFromWire(e.volume),
    publishedNodeIds: [...(e.status?.published_node_ids ?? [])],
    condition: condition ? { abnormal: condition.abnormal, message: condition.message } : null,
  };
}

export function int64ValueFromWire(v: WireInt64Value | undefined): number | null {
  return v ? Number(v.value) : null;
}

/**
 * NodeGetVolumeStats' answer: the first BYTES and the first INODES entry (an UNKNOWN unit is
 * skipped, as the spec leaves it meaningless), and the condition when the plugin sent one.
 */
export function volumeStatsFromWire(r: WireNodeGetVolumeStatsResponse): CsiVolumeStats {
  const of = (unit: string): CsiUsageFigures | null => {
    const u = r.usage.find((x) => x.unit === unit);
    return u ? { available: Number(u.available), total: Number(u.total), used: Number(u.used) } : null;
  };
  const c = r.volume_condition;
  return {
    bytes: of("BYTES"),
    inodes: of("INODES"),
    condition: c ? { abnormal: c.abnormal, message: c.message } : null,
  };
}
