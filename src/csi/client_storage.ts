/**
 * The CsiClient methods for snapshots, expansion, ListVolumes and GetCapacity, over the unary-call
 * primitive of client.ts (deadline, abort, error mapping, secret scrubbing live there). Requests
 * carrying secrets name them as sensitive so no plugin error message can echo them back.
 */
import {
  capabilityToWire,
  capacityRangeToWire,
  int64ValueFromWire,
  listVolumesEntryFromWire,
  sensitiveValues,
  snapshotFromWire,
  topologyToWire,
  volumeStatsFromWire,
} from "./convert.js";
import { BerthError } from "../structs/errors.js";
import type { CsiCallOptions, CsiControllerClient, CsiNodeClient, ListVolumesEntry } from "./types.js";
import type {
  WireInt64Value,
  WireListVolumesEntry,
  WireNodeGetVolumeStatsResponse,
  WireSnapshot,
} from "./wire.js";

export type CsiService = "Identity" | "Controller" | "Node";

/** client.ts's call(): one unary RPC with a deadline, cancelled by the signal, errors mapped. */
export type CsiUnaryCall = <Res>(
  service: CsiService,
  method: string,
  request: object,
  callOpts: CsiCallOptions | undefined,
  defaultTimeoutMs: number,
  sensitive?: readonly string[],
) => Promise<Res>;

type StorageOps = Pick<
  CsiControllerClient,
  | "createSnapshot"
  | "deleteSnapshot"
  | "listSnapshots"
  | "controllerExpandVolume"
  | "controllerModifyVolume"
  | "listVolumes"
  | "getCapacity"
  | "controllerGetVolume"
> &
  Pick<CsiNodeClient, "nodeExpandVolume" | "nodeGetVolumeStats">;

/** CreateSnapshot, DeleteSnapshot, ListSnapshots. */
function snapshotOps(
  call: CsiUnaryCall,
  timeoutMs: number,
): Pick<StorageOps, "createSnapshot" | "deleteSnapshot" | "listSnapshots"> {
  return {
    async createSnapshot(req, o) {
      const r = await call<{ snapshot: WireSnapshot | null }>(
        "Controller",
        "CreateSnapshot",
        {
          source_volume_id: req.sourceVolumeId,
          name: req.name,
          secrets: req.secrets,
          parameters: req.parameters,
        },
        o,
        timeoutMs,
        sensitiveValues(req.secrets, []),
      );
      if (!r.snapshot) throw new BerthError("ERR_CSI_INTERNAL", "CSI CreateSnapshot returned no snapshot");
      return snapshotFromWire(r.snapshot);
    },
    async deleteSnapshot(req, o) {
      await call(
        "Controller",
        "DeleteSnapshot",
        { snapshot_id: req.snapshotId, secrets: req.secrets },
        o,
        timeoutMs,
        sensitiveValues(req.secrets, []),
      );
    },
    async listSnapshots(req, o) {
      const r = await call<{ entries: { snapshot: WireSnapshot | null }[]; next_token: string }>(
        "Controller",
        "ListSnapshots",
        {
          max_entries: req.maxEntries,
          starting_token: req.startingToken,
          source_volume_id: req.sourceVolumeId,
          snapshot_id: req.snapshotId,
          secrets: req.secrets,
        },
        o,
        timeoutMs,
        sensitiveValues(req.secrets, []),
      );
      return {
        entries: r.entries.flatMap((e) => (e.snapshot ? [snapshotFromWire(e.snapshot)] : [])),
        nextToken: r.next_token,
      };
    },
  };
}

/** What the controller has: ListVolumes, ControllerGetVolume, GetCapacity. */
function inventoryOps(
  call: CsiUnaryCall,
  timeoutMs: number,
): Pick<StorageOps, "listVolumes" | "controllerGetVolume" | "getCapacity"> {
  return {
    async listVolumes(req, o) {
      const r = await call<{ entries: WireListVolumesEntry[]; next_token: string }>(
        "Controller",
        "ListVolumes",
        { max_entries: req.maxEntries, starting_token: req.startingToken },
        o,
        timeoutMs,
      );
      return {
        entries: r.entries.map(listVolumesEntryFromWire).filter((e): e is ListVolumesEntry => e !== null),
        nextToken: r.next_token,
      };
    },
    async controllerGetVolume(req, o) {
      const r = await call<WireListVolumesEntry>(
        "Controller",
        "ControllerGetVolume",
        { volume_id: req.volumeId },
        o,
        timeoutMs,
      );
      // The answer has ListVolumes' entry shape ({volume, status}).
      const entry = listVolumesEntryFromWire(r);
      if (!entry) throw new BerthError("ERR_CSI_INTERNAL", "CSI ControllerGetVolume returned no volume");
      return entry;
    },
    async getCapacity(req, o) {
      const r = await call<{
        available_capacity: number;
        maximum_volume_size: WireInt64Value;
        minimum_volume_size: WireInt64Value;
      }>(
        "Controller",
        "GetCapacity",
        {
          volume_capabilities: req.volumeCapabilities.map(capabilityToWire),
          parameters: req.parameters,
          accessible_topology: req.accessibleTopology ? topologyToWire(req.accessibleTopology) : null,
        },
        o,
        timeoutMs,
        sensitiveValues({}, req.volumeCapabilities),
      );
      return {
        availableCapacity: Number(r.available_capacity),
        maximumVolumeSize: int64ValueFromWire(r.maximum_volume_size),
        minimumVolumeSize: int64ValueFromWire(r.minimum_volume_size),
      };
    },
  };
}

/** ControllerModifyVolume: the mutable parameters, with the secrets named as sensitive. */
function modifyOps(call: CsiUnaryCall, timeoutMs: number): Pick<StorageOps, "controllerModifyVolume"> {
  return {
    async controllerModifyVolume(req, o) {
      await call(
        "Controller",
        "ControllerModifyVolume",
        { volume_id: req.volumeId, secrets: req.secrets, mutable_parameters: req.mutableParameters },
        o,
        timeoutMs,
        sensitiveValues(req.secrets, []),
      );
    },
  };
}

/** A volume's size: ControllerExpandVolume, NodeExpandVolume, NodeGetVolumeStats. */
function sizeOps(
  call: CsiUnaryCall,
  timeoutMs: number,
): Pick<StorageOps, "controllerExpandVolume" | "nodeExpandVolume" | "nodeGetVolumeStats"> {
  return {
    async controllerExpandVolume(req, o) {
      const r = await call<{ capacity_bytes: number; node_expansion_required: boolean }>(
        "Controller",
        "ControllerExpandVolume",
        {
          volume_id: req.volumeId,
          capacity_range: capacityRangeToWire(req.capacityRange),
          secrets: req.secrets,
          volume_capability: req.volumeCapability ? capabilityToWire(req.volumeCapability) : null,
        },
        o,
        timeoutMs,
        sensitiveValues(req.secrets, req.volumeCapability ? [req.volumeCapability] : []),
      );
      return { capacityBytes: Number(r.capacity_bytes), nodeExpansionRequired: r.node_expansion_required };
    },
    async nodeExpandVolume(req, o) {
      const r = await call<{ capacity_bytes: number }>(
        "Node",
        "NodeExpandVolume",
        {
          volume_id: req.volumeId,
          volume_path: req.volumePath,
          staging_target_path: req.stagingTargetPath,
          capacity_range: capacityRangeToWire(req.capacityRange),
          volume_capability: req.volumeCapability ? capabilityToWire(req.volumeCapability) : null,
          secrets: req.secrets,
        },
        o,
        timeoutMs,
        sensitiveValues(req.secrets, req.volumeCapability ? [req.volumeCapability] : []),
      );
      return { capacityBytes: Number(r.capacity_bytes) };
    },
    async nodeGetVolumeStats(req, o) {
      const r = await call<WireNodeGetVolumeStatsResponse>(
        "Node",
        "NodeGetVolumeStats",
        {
          volume_id: req.volumeId,
          volume_path: req.volumePath,
          staging_target_path: req.stagingTargetPath,
        },
        o,
        timeoutMs,
      );
      return volumeStatsFromWire(r);
    },
  };
}

export function storageOps(call: CsiUnaryCall, timeoutMs: number): StorageOps {
  return {
    ...snapshotOps(call, timeoutMs),
    ...inventoryOps(call, timeoutMs),
    ...sizeOps(call, timeoutMs),
    ...modifyOps(call, timeoutMs),
  };
}
