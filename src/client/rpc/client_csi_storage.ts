/**
 * The ClientCSI controller calls for snapshots, expansion, ListVolumes and ControllerGetVolume (the
 * leader's condition poll: GET_VOLUME and VOLUME_CONDITION both required), in the same style as
 * client_csi.ts (one attempt each; the capability is checked first; secrets go to the plugin only).
 * DeleteSnapshot of an unknown snapshot is success, which keeps it idempotent.
 */
import { BerthError } from "../../structs/errors.js";
import type { CsiClient, CsiControllerCapabilities, CsiSnapshot } from "../../csi/types.js";
import { ignoreCsiNotFound } from "../../csi/errors.js";
import type { SnapshotInfo } from "../../structs/rpc.js";
import type { Logger } from "../../internal/log.js";
import { csiCapabilityOf } from "../../csi/capability_of.js";
import type { ClientCsiPeer } from "./client_csi_peer.js";

export type ControllerOf = (
  pluginId: string,
  need: keyof CsiControllerCapabilities | null,
  signal: AbortSignal,
) => Promise<{ client: CsiClient; caps: CsiControllerCapabilities | null }>;

/** CreateSnapshot, DeleteSnapshot, ListSnapshots. */
function registerSnapshotHandlers(
  peer: ClientCsiPeer,
  controller: ControllerOf,
  log: Logger,
  timeoutMs: number,
): void {
  peer.handle("ClientCSI.ControllerCreateSnapshot", async (req, signal) => {
    const { client } = await controller(req.PluginID, "createDeleteSnapshot", signal);
    const snap = await client.createSnapshot(
      {
        sourceVolumeId: req.ExternalSourceVolumeID,
        name: req.Name,
        secrets: { ...req.Secrets },
        parameters: { ...req.Parameters },
      },
      { signal, timeoutMs },
    );
    log.info("snapshot created", { plugin: req.PluginID, snapshot: snap.snapshotId });
    return snapshotInfo(snap);
  });

  peer.handle("ClientCSI.ControllerDeleteSnapshot", async (req, signal) => {
    const { client } = await controller(req.PluginID, "createDeleteSnapshot", signal);
    await ignoreCsiNotFound(
      client.deleteSnapshot(
        { snapshotId: req.SnapshotID, secrets: { ...req.Secrets } },
        { signal, timeoutMs },
      ),
    );
    log.info("snapshot deleted", { plugin: req.PluginID, snapshot: req.SnapshotID });
    return {};
  });

  peer.handle("ClientCSI.ControllerListSnapshots", async (req, signal) => {
    const { client } = await controller(req.PluginID, "listSnapshots", signal);
    const res = await client.listSnapshots(
      {
        maxEntries: req.MaxEntries,
        startingToken: req.StartingToken,
        sourceVolumeId: "",
        snapshotId: "",
        secrets: { ...req.Secrets },
      },
      { signal, timeoutMs },
    );
    return { Entries: res.entries.map(snapshotInfo), NextToken: res.nextToken };
  });
}

/** ControllerExpandVolume and ControllerModifyVolume. */
function registerExpandHandler(
  peer: ClientCsiPeer,
  controller: ControllerOf,
  log: Logger,
  timeoutMs: number,
): void {
  peer.handle("ClientCSI.ControllerExpandVolume", async (req, signal) => {
    const { client, caps } = await controller(req.PluginID, "expandVolume", signal);
    const res = await client.controllerExpandVolume(
      {
        volumeId: req.ExternalVolumeID,
        capacityRange: { requiredBytes: req.CapacityMin, limitBytes: req.CapacityMax },
        secrets: { ...req.Secrets },
        volumeCapability: req.Capability
          ? csiCapabilityOf(
              req.Capability.AccessMode,
              req.Capability.AttachmentMode,
              req.MountOptions,
              caps?.singleNodeMultiWriter ?? false,
            )
          : null,
      },
      { signal, timeoutMs },
    );
    log.info("volume expanded", { plugin: req.PluginID, externalId: req.ExternalVolumeID });
    return { CapacityBytes: res.capacityBytes, NodeExpansionRequired: res.nodeExpansionRequired };
  });

  peer.handle("ClientCSI.ControllerModifyVolume", async (req, signal) => {
    const { client } = await controller(req.PluginID, "modifyVolume", signal);
    await client.controllerModifyVolume(
      {
        volumeId: req.ExternalVolumeID,
        secrets: { ...req.Secrets },
        mutableParameters: { ...req.MutableParameters },
      },
      { signal, timeoutMs },
    );
    log.info("volume modified", { plugin: req.PluginID, externalId: req.ExternalVolumeID });
    return {};
  });
}

/** ListVolumes and ControllerGetVolume (the leader's condition poll). */
function registerVolumeQueryHandlers(peer: ClientCsiPeer, controller: ControllerOf, timeoutMs: number): void {
  peer.handle("ClientCSI.ControllerListVolumes", async (req, signal) => {
    const { client } = await controller(req.PluginID, "listVolumes", signal);
    const res = await client.listVolumes(
      { maxEntries: req.MaxEntries, startingToken: req.StartingToken },
      { signal, timeoutMs },
    );
    return {
      Entries: res.entries.map((e) => ({
        ExternalID: e.volume.volumeId,
        CapacityBytes: e.volume.capacityBytes,
        VolumeContext: { ...e.volume.volumeContext },
        CloneID:
          e.volume.contentSource && "volumeId" in e.volume.contentSource
            ? e.volume.contentSource.volumeId
            : "",
        SnapshotID:
          e.volume.contentSource && "snapshotId" in e.volume.contentSource
            ? e.volume.contentSource.snapshotId
            : "",
        PublishedExternalNodeIDs: [...e.publishedNodeIds],
        IsAbnormal: e.condition?.abnormal ?? false,
        Status: e.condition?.message ?? "",
      })),
      NextToken: res.nextToken,
    };
  });

  peer.handle("ClientCSI.ControllerGetVolume", async (req, signal) => {
    const { client, caps } = await controller(req.PluginID, "getVolume", signal);
    // Only the condition is wanted: a plugin without VOLUME_CONDITION is not asked at all.
    if (!caps?.volumeCondition) {
      throw new BerthError(
        "ERR_CSI_NOT_SUPPORTED",
        `CSI plugin ${JSON.stringify(req.PluginID)} does not advertise the VOLUME_CONDITION controller capability`,
      );
    }
    const res = await client.controllerGetVolume({ volumeId: req.ExternalVolumeID }, { signal, timeoutMs });
    return {
      ExternalID: res.volume.volumeId,
      PublishedExternalNodeIDs: [...res.publishedNodeIds],
      Condition: res.condition ? { Abnormal: res.condition.abnormal, Message: res.condition.message } : null,
    };
  });
}

export function registerStorageHandlers(
  peer: ClientCsiPeer,
  controller: ControllerOf,
  log: Logger,
  timeoutMs: number,
): void {
  registerSnapshotHandlers(peer, controller, log, timeoutMs);
  registerExpandHandler(peer, controller, log, timeoutMs);
  registerVolumeQueryHandlers(peer, controller, timeoutMs);
}

function snapshotInfo(s: CsiSnapshot): SnapshotInfo {
  return {
    ID: s.snapshotId,
    ExternalSourceVolumeID: s.sourceVolumeId,
    SizeBytes: s.sizeBytes,
    CreateTime: Math.floor(s.creationTime / 1000),
    IsReady: s.readyToUse,
  };
}
