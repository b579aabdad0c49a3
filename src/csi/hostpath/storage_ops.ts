/**
 * The handlers and capabilities csi-hostpath adds beyond create/delete/publish: snapshots, clone
 * and restore (in CreateVolume), expansion, ListVolumes, GetCapacity, ControllerGetVolume (with
 * the volume's condition) and volume stats. server.ts merges these
 * tables into its own, so that file only wires them in.
 */
import type { HostpathContext } from "./context.js";
import { createSnapshot, deleteSnapshot, listSnapshots } from "./controller_snapshot.js";
import { listVolumes } from "./controller_list.js";
import { getSegmentCapacity } from "./capacity.js";
import { controllerGetVolume } from "./controller_get.js";
import { nodeExpandVolume } from "./expand.js";
import { controllerModifyVolume } from "./modify.js";
import {
  expandByMode,
  expands,
  expansionPluginCapabilities,
  featureControllerCapabilities,
  featureNodeCapabilities,
} from "./modify_features.js";
import { SnapshotStore } from "./snapshots.js";
import type { HostpathConfig } from "./flags.js";
import { nodeGetVolumeStats } from "./volume_stats.js";

type Req = Record<string, unknown>;
export type HostpathHandler = (ctx: HostpathContext, req: Req) => Promise<object> | object;

const snapshots = (ctx: HostpathContext) => new SnapshotStore(ctx.config.stateDir);

export const STORAGE_CONTROLLER_HANDLERS: Record<string, HostpathHandler> = {
  CreateSnapshot: (ctx, r) => createSnapshot(ctx, snapshots(ctx), r as never),
  DeleteSnapshot: (ctx, r) => deleteSnapshot(ctx, snapshots(ctx), r as never),
  ListSnapshots: (ctx, r) => listSnapshots(snapshots(ctx), r as never),
  ControllerExpandVolume: (ctx, r) => expandByMode(ctx, r as never),
  ControllerModifyVolume: (ctx, r) => controllerModifyVolume(ctx, r as never),
  ListVolumes: (ctx, r) => listVolumes(ctx, r as never),
  GetCapacity: (ctx, r) => getSegmentCapacity(ctx, r),
  ControllerGetVolume: (ctx, r) => controllerGetVolume(ctx, r as never),
};

export const STORAGE_NODE_HANDLERS: Record<string, HostpathHandler> = {
  NodeExpandVolume: (ctx, r) => nodeExpandVolume(ctx, r as never),
  NodeGetVolumeStats: (ctx, r) => nodeGetVolumeStats(ctx, r as never),
};

/** Controller RPC capabilities for the handlers above. */
export function storageControllerCapabilities(config: HostpathConfig): { rpc: { type: string } }[] {
  return [
    "CREATE_DELETE_SNAPSHOT",
    "LIST_SNAPSHOTS",
    "CLONE_VOLUME",
    ...(expands(config) ? ["EXPAND_VOLUME"] : []),
    "LIST_VOLUMES",
    "GET_CAPACITY",
    "GET_VOLUME",
    "VOLUME_CONDITION",
    ...(config.attachRequired ? ["LIST_VOLUMES_PUBLISHED_NODES"] : []),
    ...featureControllerCapabilities(config),
  ].map((type) => ({ rpc: { type } }));
}

/** Node RPC capabilities for the handlers above (and --volume-mount-group's). */
export function storageNodeCapabilities(config: HostpathConfig): { rpc: { type: string } }[] {
  return [
    ...(expands(config) ? ["EXPAND_VOLUME"] : []),
    "GET_VOLUME_STATS",
    "VOLUME_CONDITION",
    ...featureNodeCapabilities(config),
  ].map((type) => ({ rpc: { type } }));
}

/** Volume expansion: ONLINE by default (NodeExpandVolume on a published volume); see --expansion. */
export const storagePluginCapabilities = expansionPluginCapabilities;
