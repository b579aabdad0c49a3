/**
 * The CsiClient methods of the Identity, Controller and Node services, one function per service
 * group, over client.ts's unary-call primitive (deadline, abort, error mapping and secret scrubbing
 * live there; snapshots, expansion and listing are client_storage.ts's). Requests carrying secrets
 * name them as sensitive so no plugin error message can echo them back.
 */
import { BerthError } from "../structs/errors.js";
import type { CsiUnaryCall } from "./client_storage.js";
import {
  capabilityFromWire,
  capabilityToWire,
  contentSourceToWire,
  controllerCapabilitiesFromWire,
  nodeCapabilitiesFromWire,
  pluginCapabilitiesFromWire,
  sensitiveValues,
  topologyFromWire,
  topologyToWire,
  volumeFromWire,
} from "./convert.js";
import type { CreateVolumeRequest, CsiClient, CsiVolumeCapability } from "./types.js";
import type {
  StringMap,
  WirePluginCapability,
  WireRpcCapability,
  WireVolume,
  WireVolumeCapability,
} from "./wire.js";
import {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_CHEAP_CALL_TIMEOUT_MS,
  DEFAULT_PROBE_TIMEOUT_MS,
} from "./call_deadlines.js";

/** CreateVolume's request on the wire. */
function createVolumeToWire(req: CreateVolumeRequest): object {
  return {
    name: req.name,
    capacity_range: req.capacityRange
      ? { required_bytes: req.capacityRange.requiredBytes, limit_bytes: req.capacityRange.limitBytes }
      : null,
    volume_capabilities: req.volumeCapabilities.map(capabilityToWire),
    parameters: req.parameters,
    secrets: req.secrets,
    volume_content_source: contentSourceToWire(req.contentSource),
    accessibility_requirements: req.accessibilityRequirements
      ? {
          requisite: req.accessibilityRequirements.requisite.map(topologyToWire),
          preferred: req.accessibilityRequirements.preferred.map(topologyToWire),
        }
      : null,
    ...(req.mutableParameters ? { mutable_parameters: req.mutableParameters } : {}),
  };
}

/** The Identity service: GetPluginInfo, GetPluginCapabilities, Probe. */
export function identityOps(
  call: CsiUnaryCall,
): Pick<CsiClient, "getPluginInfo" | "getPluginCapabilities" | "probe"> {
  return {
    async getPluginInfo(o) {
      const r = await call<{ name: string; vendor_version: string; manifest: StringMap }>(
        "Identity",
        "GetPluginInfo",
        {},
        o,
        DEFAULT_CHEAP_CALL_TIMEOUT_MS,
      );
      return { name: r.name, vendorVersion: r.vendor_version, manifest: { ...r.manifest } };
    },
    async getPluginCapabilities(o) {
      const r = await call<{ capabilities: WirePluginCapability[] }>(
        "Identity",
        "GetPluginCapabilities",
        {},
        o,
        DEFAULT_CHEAP_CALL_TIMEOUT_MS,
      );
      return pluginCapabilitiesFromWire(r.capabilities);
    },
    async probe(o) {
      const r = await call<{ ready: { value: boolean } | null }>(
        "Identity",
        "Probe",
        {},
        o,
        DEFAULT_PROBE_TIMEOUT_MS,
      );
      return { ready: r.ready === null || r.ready.value };
    },
  };
}

/** The cheap calls that fingerprint a controller or node plugin: its capabilities, NodeGetInfo. */
export function capabilityOps(
  call: CsiUnaryCall,
): Pick<CsiClient, "controllerGetCapabilities" | "nodeGetCapabilities" | "nodeGetInfo"> {
  return {
    async controllerGetCapabilities(o) {
      const r = await call<{ capabilities: WireRpcCapability[] }>(
        "Controller",
        "ControllerGetCapabilities",
        {},
        o,
        DEFAULT_CHEAP_CALL_TIMEOUT_MS,
      );
      return controllerCapabilitiesFromWire(r.capabilities);
    },
    async nodeGetCapabilities(o) {
      const r = await call<{ capabilities: WireRpcCapability[] }>(
        "Node",
        "NodeGetCapabilities",
        {},
        o,
        DEFAULT_CHEAP_CALL_TIMEOUT_MS,
      );
      return nodeCapabilitiesFromWire(r.capabilities);
    },
    async nodeGetInfo(o) {
      const r = await call<{
        node_id: string;
        max_volumes_per_node: number;
        accessible_topology: { segments: StringMap } | null;
      }>("Node", "NodeGetInfo", {}, o, DEFAULT_CHEAP_CALL_TIMEOUT_MS);
      return {
        nodeId: r.node_id,
        maxVolumesPerNode: Number(r.max_volumes_per_node),
        accessibleTopology: topologyFromWire(r.accessible_topology),
      };
    },
  };
}

/** A volume's life in the Controller service: CreateVolume, DeleteVolume, ValidateVolumeCapabilities. */
export function controllerVolumeOps(
  call: CsiUnaryCall,
): Pick<CsiClient, "createVolume" | "deleteVolume" | "validateVolumeCapabilities"> {
  return {
    async createVolume(req, o) {
      const wire = createVolumeToWire(req);
      const sensitive = sensitiveValues(req.secrets, req.volumeCapabilities);
      const r = await call<{ volume: WireVolume | null }>(
        "Controller",
        "CreateVolume",
        wire,
        o,
        DEFAULT_CALL_TIMEOUT_MS,
        sensitive,
      );
      if (!r.volume) throw new BerthError("ERR_CSI_INTERNAL", "CSI CreateVolume returned no volume");
      return volumeFromWire(r.volume);
    },
    async deleteVolume(req, o) {
      await call(
        "Controller",
        "DeleteVolume",
        { volume_id: req.volumeId, secrets: req.secrets },
        o,
        DEFAULT_CALL_TIMEOUT_MS,
        sensitiveValues(req.secrets, []),
      );
    },
    async validateVolumeCapabilities(req, o) {
      const r = await call<{
        confirmed: { volume_capabilities: WireVolumeCapability[] } | null;
        message: string;
      }>(
        "Controller",
        "ValidateVolumeCapabilities",
        {
          volume_id: req.volumeId,
          volume_context: req.volumeContext,
          volume_capabilities: req.volumeCapabilities.map(capabilityToWire),
          parameters: req.parameters,
          secrets: req.secrets,
        },
        o,
        DEFAULT_CALL_TIMEOUT_MS,
        sensitiveValues(req.secrets, req.volumeCapabilities),
      );
      if (!r.confirmed) return { confirmed: null, message: r.message };
      const confirmed = r.confirmed.volume_capabilities
        .map(capabilityFromWire)
        .filter((c): c is CsiVolumeCapability => c !== null);
      return { confirmed: { volumeCapabilities: confirmed }, message: r.message };
    },
  };
}

/** ControllerPublishVolume and ControllerUnpublishVolume. */
export function controllerPublishOps(
  call: CsiUnaryCall,
): Pick<CsiClient, "controllerPublishVolume" | "controllerUnpublishVolume"> {
  return {
    async controllerPublishVolume(req, o) {
      const r = await call<{ publish_context: StringMap }>(
        "Controller",
        "ControllerPublishVolume",
        {
          volume_id: req.volumeId,
          node_id: req.nodeId,
          volume_capability: capabilityToWire(req.volumeCapability),
          readonly: req.readonly,
          secrets: req.secrets,
          volume_context: req.volumeContext,
        },
        o,
        DEFAULT_CALL_TIMEOUT_MS,
        sensitiveValues(req.secrets, [req.volumeCapability]),
      );
      return { publishContext: { ...r.publish_context } };
    },
    async controllerUnpublishVolume(req, o) {
      await call(
        "Controller",
        "ControllerUnpublishVolume",
        { volume_id: req.volumeId, node_id: req.nodeId, secrets: req.secrets },
        o,
        DEFAULT_CALL_TIMEOUT_MS,
        sensitiveValues(req.secrets, []),
      );
    },
  };
}

/** The Node service's mounts: NodeStageVolume, NodeUnstageVolume, NodePublishVolume, NodeUnpublishVolume. */
export function nodeMountOps(
  call: CsiUnaryCall,
): Pick<CsiClient, "nodeStageVolume" | "nodeUnstageVolume" | "nodePublishVolume" | "nodeUnpublishVolume"> {
  return {
    async nodeStageVolume(req, o) {
      await call(
        "Node",
        "NodeStageVolume",
        {
          volume_id: req.volumeId,
          publish_context: req.publishContext,
          staging_target_path: req.stagingTargetPath,
          volume_capability: capabilityToWire(req.volumeCapability),
          secrets: req.secrets,
          volume_context: req.volumeContext,
        },
        o,
        DEFAULT_CALL_TIMEOUT_MS,
        sensitiveValues(req.secrets, [req.volumeCapability]),
      );
    },
    async nodeUnstageVolume(req, o) {
      await call(
        "Node",
        "NodeUnstageVolume",
        { volume_id: req.volumeId, staging_target_path: req.stagingTargetPath },
        o,
        DEFAULT_CALL_TIMEOUT_MS,
      );
    },
    async nodePublishVolume(req, o) {
      await call(
        "Node",
        "NodePublishVolume",
        {
          volume_id: req.volumeId,
          publish_context: req.publishContext,
          staging_target_path: req.stagingTargetPath,
          target_path: req.targetPath,
          volume_capability: capabilityToWire(req.volumeCapability),
          readonly: req.readonly,
          secrets: req.secrets,
          volume_context: req.volumeContext,
        },
        o,
        DEFAULT_CALL_TIMEOUT_MS,
        sensitiveValues(req.secrets, [req.volumeCapability]),
      );
    },
    async nodeUnpublishVolume(req, o) {
      await call(
        "Node",
        "NodeUnpublishVolume",
        { volume_id: req.volumeId, target_path: req.targetPath },
        o,
        DEFAULT_CALL_TIMEOUT_MS,
      );
    },
  };
}
