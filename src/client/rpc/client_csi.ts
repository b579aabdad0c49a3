/**
 * The ClientCSI.* handlers: controller RPCs the server runs on this node because it hosts a
 * healthy controller instance of the plugin (docs/design.md step 3). Each handler converts the RPC DTO
 * to the CSI client's terms, refuses capabilities the plugin does not advertise
 * (ERR_CSI_NOT_SUPPORTED) and converts the answer back. Retrying is the server's business: a
 * handler makes one attempt, so a retry never stacks on another. NOT_FOUND on delete/unpublish means
 * "already done" and is success, which keeps both idempotent.
 */
import { BerthError } from "../../structs/errors.js";
import type { ClientMethods } from "../../structs/rpc.js";
import type { MountOptions, Topology, TopologyRequest, VolumeCapability } from "../../structs/volume.js";
import type { Logger } from "../../internal/log.js";
import { csiCapabilityOf, wireAccessMode } from "../../csi/capability_of.js";
import { CONTROLLER_RPC } from "../../csi/convert.js";
import { ignoreCsiNotFound } from "../../csi/errors.js";
import type { CreateVolumeRequest, CsiClient, CsiTopology, CsiVolumeCapability } from "../../csi/types.js";
import { registerNodeVolumeHandlers, type NodeVolumeAccess } from "./client_csi_node.js";
import { registerStorageHandlers, type ControllerOf } from "./client_csi_storage.js";
import { registerCapacityHandler } from "./client_csi_capacity.js";
import type { ClientCsiPeer } from "./client_csi_peer.js";

export type { ClientCsiPeer } from "./client_csi_peer.js";

export interface ClientCsiDeps {
  /** A healthy controller instance's connection for the plugin, if this node runs one. */
  controllerClient(pluginId: string): CsiClient | undefined;
  /** Node-side access for NodeExpandVolume/NodeDetachVolume; without it those calls are not served. */
  nodeVolumes?: NodeVolumeAccess;
  log: Logger;
  /** Deadline of each controller call; 2 min by default. */
  callTimeoutMs?: number;
}

/**
 * The plugin's controller connection on this node and its capabilities, after checking it
 * advertises `need` (ERR_CSI_PLUGIN_UNAVAILABLE without one, ERR_CSI_NOT_SUPPORTED without it).
 */
function controllerOf(deps: ClientCsiDeps, timeoutMs: number): ControllerOf {
  return async (pluginId, need, signal) => {
    const client = deps.controllerClient(pluginId);
    if (!client) {
      throw new BerthError(
        "ERR_CSI_PLUGIN_UNAVAILABLE",
        `no healthy controller for CSI plugin ${JSON.stringify(pluginId)} on this node`,
      );
    }
    if (!need) return { client, caps: null };
    const caps = await client.controllerGetCapabilities({ signal, timeoutMs });
    if (!caps[need]) {
      throw new BerthError(
        "ERR_CSI_NOT_SUPPORTED",
        `CSI plugin ${JSON.stringify(pluginId)} does not advertise the ${CONTROLLER_RPC[need]} controller capability`,
      );
    }
    return { client, caps };
  };
}

/** ControllerCreateVolume, ControllerDeleteVolume, ControllerValidateVolume. */
function registerVolumeLifecycleHandlers(
  peer: ClientCsiPeer,
  controller: ControllerOf,
  log: Logger,
  timeoutMs: number,
): void {
  peer.handle("ClientCSI.ControllerCreateVolume", async (req, signal) => {
    const { client, caps } = await controller(req.PluginID, "createDeleteVolume", signal);
    const mutable = req.MutableParameters ?? {};
    // CSI: mutable_parameters are sent only to a plugin that advertises MODIFY_VOLUME.
    if (Object.keys(mutable).length > 0 && !caps?.modifyVolume) {
      throw new BerthError(
        "ERR_CSI_NOT_SUPPORTED",
        `CSI plugin ${JSON.stringify(req.PluginID)} does not advertise MODIFY_VOLUME: a volume with mutable_parameters cannot be created through it`,
        { field: "MutableParameters" },
      );
    }
    const wanted = toCreateVolumeRequest(req, caps?.singleNodeMultiWriter ?? false);
    if (Object.keys(mutable).length > 0) wanted.mutableParameters = { ...mutable };
    const created = await client.createVolume(wanted, { signal, timeoutMs });
    log.info("volume created", { plugin: req.PluginID, name: req.Name, externalId: created.volumeId });
    return {
      ExternalVolumeID: created.volumeId,
      CapacityBytes: created.capacityBytes,
      VolumeContext: { ...created.volumeContext },
      Topologies: created.accessibleTopology.map(fromCsiTopology),
    };
  });

  peer.handle("ClientCSI.ControllerDeleteVolume", async (req, signal) => {
    const { client } = await controller(req.PluginID, "createDeleteVolume", signal);
    await ignoreCsiNotFound(
      client.deleteVolume(
        { volumeId: req.ExternalVolumeID, secrets: { ...req.Secrets } },
        { signal, timeoutMs },
      ),
    );
    log.info("volume deleted", { plugin: req.PluginID, externalId: req.ExternalVolumeID });
    return {};
  });

  peer.handle("ClientCSI.ControllerValidateVolume", async (req, signal) => {
    const { client } = await controller(req.PluginID, null, signal);
    // The capabilities are asked for only when a CSI 1.5 single-node mode needs them (wireAccessMode).
    const snmw = req.Capabilities.some((c) => wireAccessMode(c.AccessMode, false) !== c.AccessMode)
      ? (await client.controllerGetCapabilities({ signal, timeoutMs })).singleNodeMultiWriter
      : false;
    const result = await client.validateVolumeCapabilities(
      {
        volumeId: req.ExternalVolumeID,
        volumeContext: { ...req.Context },
        volumeCapabilities: req.Capabilities.map((c) => toCsiCapability(c, req.MountOptions, snmw)),
        parameters: { ...req.Parameters },
        secrets: { ...req.Secrets },
      },
      { signal, timeoutMs },
    );
    if (!result.confirmed) {
      throw new BerthError(
        "ERR_VALIDATION",
        `CSI plugin ${JSON.stringify(req.PluginID)} did not confirm the volume's capabilities${result.message ? `: ${result.message}` : ""}`,
      );
    }
    return {};
  });
}

/** ControllerPublishVolume and ControllerUnpublishVolume. */
function registerPublishHandlers(
  peer: ClientCsiPeer,
  controller: ControllerOf,
  log: Logger,
  timeoutMs: number,
): void {
  peer.handle("ClientCSI.ControllerPublishVolume", async (req, signal) => {
    const { client, caps } = await controller(req.PluginID, "publishUnpublishVolume", signal);
    const res = await client.controllerPublishVolume(
      {
        volumeId: req.ExternalVolumeID,
        nodeId: req.ExternalNodeID,
        volumeCapability: toCsiCapability(
          req.Capability,
          req.MountOptions,
          caps?.singleNodeMultiWriter ?? false,
        ),
        // The spec lets a plugin without PUBLISH_READONLY reject readonly=true; the node publish
        // still mounts read-only, so read-only claims stay read-only either way.
        readonly: req.ReadOnly && caps !== null && caps.publishReadonly,
        secrets: { ...req.Secrets },
        volumeContext: { ...req.VolumeContext },
      },
      { signal, timeoutMs },
    );
    log.info("volume published to node", {
      plugin: req.PluginID,
      externalId: req.ExternalVolumeID,
      node: req.ExternalNodeID,
    });
    return { PublishContext: { ...res.publishContext } };
  });

  peer.handle("ClientCSI.ControllerUnpublishVolume", async (req, signal) => {
    const { client } = await controller(req.PluginID, "publishUnpublishVolume", signal);
    await ignoreCsiNotFound(
      client.controllerUnpublishVolume(
        { volumeId: req.ExternalVolumeID, nodeId: req.ExternalNodeID, secrets: { ...req.Secrets } },
        { signal, timeoutMs },
      ),
    );
    log.info("volume unpublished from node", {
      plugin: req.PluginID,
      externalId: req.ExternalVolumeID,
      node: req.ExternalNodeID,
    });
    return {};
  });
}

export function registerClientCsiHandlers(peer: ClientCsiPeer, deps: ClientCsiDeps): void {
  const timeoutMs = deps.callTimeoutMs ?? 120_000;
  const log = deps.log.child("client_csi");
  const controller = controllerOf(deps, timeoutMs);
  registerStorageHandlers(peer, controller, log, timeoutMs);
  registerCapacityHandler(peer, controller, timeoutMs);
  if (deps.nodeVolumes) registerNodeVolumeHandlers(peer, deps.nodeVolumes, log);
  registerVolumeLifecycleHandlers(peer, controller, log, timeoutMs);
  registerPublishHandlers(peer, controller, log, timeoutMs);
}

/**
 * A volume capability plus mount options in CSI terms: mount access carries fsType/mountFlags.
 * `singleNodeMultiWriter`: the controller advertises SINGLE_NODE_MULTI_WRITER (wireAccessMode).
 */
export function toCsiCapability(
  cap: VolumeCapability,
  mount: MountOptions | null,
  singleNodeMultiWriter: boolean,
): CsiVolumeCapability {
  return csiCapabilityOf(cap.AccessMode, cap.AttachmentMode, mount, singleNodeMultiWriter);
}

export function toCreateVolumeRequest(
  req: ClientMethods["ClientCSI.ControllerCreateVolume"][0],
  singleNodeMultiWriter: boolean,
): CreateVolumeRequest {
  const hasRange = req.CapacityMin > 0 || req.CapacityMax > 0;
  return {
    name: req.Name,
    capacityRange: hasRange ? { requiredBytes: req.CapacityMin, limitBytes: req.CapacityMax } : null,
    volumeCapabilities: req.Capabilities.map((c) =>
      toCsiCapability(c, req.MountOptions, singleNodeMultiWriter),
    ),
    parameters: { ...req.Parameters },
    secrets: { ...req.Secrets },
    contentSource: req.SnapshotID
      ? { snapshotId: req.SnapshotID }
      : req.CloneID
        ? { volumeId: req.CloneID }
        : null,
    accessibilityRequirements: toAccessibility(req.TopologyRequest),
  };
}

function toAccessibility(req: TopologyRequest | null): CreateVolumeRequest["accessibilityRequirements"] {
  if (!req) return null;
  const requisite = (req.Required ?? []).map(toCsiTopology);
  const preferred = (req.Preferred ?? []).map(toCsiTopology);
  return requisite.length === 0 && preferred.length === 0 ? null : { requisite, preferred };
}

function toCsiTopology(t: Topology): CsiTopology {
  return { segments: { ...t.Segments } };
}

function fromCsiTopology(t: CsiTopology): Topology {
  return { Segments: { ...t.segments } };
}
