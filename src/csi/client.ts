/**
 * CsiClient over @grpc/grpc-js to a plugin's unix socket. One channel per endpoint; every call has
 * a deadline (`timeoutMs`, defaults below) and is cancelled when its AbortSignal aborts. Requests
 * are never logged (they carry secrets); failures become ERR_CSI_* BerthErrors (errors.ts).
 */
import * as grpc from "@grpc/grpc-js";
import { BerthError } from "../structs/errors.js";
import type { Logger } from "../internal/log.js";
import { abortError } from "../internal/abort.js";
import { grpcTarget, loadCsi } from "./proto.js";
import { csiError } from "./errors.js";
import { grpcCodeName, type CsiCallOutcome } from "./call_outcome.js";
import { storageOps, type CsiService } from "./client_storage.js";
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
import type { CsiCallOptions, CsiClient, CsiVolumeCapability } from "./types.js";
import type {
  StringMap,
  WirePluginCapability,
  WireRpcCapability,
  WireVolume,
  WireVolumeCapability,
} from "./wire.js";

/**
 * Default deadlines: Probe must answer fast; the other cheap calls (plugin info, capabilities,
 * NodeGetInfo) touch no storage, so a plugin that takes longer is hung; node/controller work may
 * be slow storage.
 */
export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;
export const DEFAULT_CHEAP_CALL_TIMEOUT_MS = 10_000;
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

type Service = CsiService;

export interface CsiClientOptions {
  log: Logger;
  /** Told of every call sent to the plugin, when it ends (metrics); must not throw. */
  onCall?: (outcome: CsiCallOutcome) => void;
}

/**
 * Reconnect quickly: a plugin socket often appears seconds after the client is created, and
 * grpc-js's default reconnect backoff (up to 120 s) would hide the plugin long after it listens.
 */
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.initial_reconnect_backoff_ms": 100,
  "grpc.min_reconnect_backoff_ms": 100,
  "grpc.max_reconnect_backoff_ms": 1_000,
};

export function createCsiClient(endpoint: string, opts: CsiClientOptions): CsiClient {
  const target = grpcTarget(endpoint);
  const log = opts.log.child("csi");
  const csi = loadCsi();
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  /** Set by close(); later calls fail fast with a retryable code instead of a grpc-js internal error. */
  let closed = false;

  function call<Res>(
    service: Service,
    method: string,
    request: object,
    callOpts: CsiCallOptions | undefined,
    defaultTimeoutMs: number,
    sensitive: readonly string[] = [],
  ): Promise<Res> {
    const def = csi[service].service[method];
    if (!def) return Promise.reject(new BerthError("ERR_INTERNAL", `csi.proto has no ${service}.${method}`));
    const signal = callOpts?.signal;
    if (signal?.aborted) return Promise.reject(csiError(method, abortError(signal)));
    // A closed connection is "plugin unavailable" (retryable), not an internal error: a caller
    // holding a connection that was replaced must retry on the new one.
    if (closed) {
      return Promise.reject(
        new BerthError("ERR_CSI_UNAVAILABLE", `CSI ${method}: connection to ${endpoint} closed`),
      );
    }
    const timeoutMs = callOpts?.timeoutMs ?? defaultTimeoutMs;
    const started = Date.now();
    return new Promise<Res>((resolve, reject) => {
      const onAbort = () => grpcCall.cancel();
      const grpcCall = client.makeUnaryRequest<object, Res>(
        def.path,
        def.requestSerialize as (v: object) => Buffer,
        def.responseDeserialize as (b: Buffer) => Res,
        request,
        new grpc.Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err, res) => {
          signal?.removeEventListener("abort", onAbort);
          const ms = Date.now() - started;
          const failed = err !== null || res === undefined;
          opts.onCall?.({
            rpc: method,
            ms,
            code: failed ? grpcCodeName(err, signal?.aborted === true) : "OK",
          });
          if (err || res === undefined) {
            const mapped = signal?.aborted
              ? csiError(method, abortError(signal))
              : csiError(method, err ?? new Error("empty response"), sensitive);
            log.debug("call failed", { method, code: mapped.code, ms });
            reject(mapped);
            return;
          }
          log.debug("call ok", { method, ms });
          resolve(res);
        },
      );
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  const caps = (c: CsiVolumeCapability[]) => c.map(capabilityToWire);

  return {
    ...storageOps(call, DEFAULT_CALL_TIMEOUT_MS),
    endpoint,
    close: () => {
      closed = true;
      client.close();
    },

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
    async createVolume(req, o) {
      const wire = {
        name: req.name,
        capacity_range: req.capacityRange
          ? { required_bytes: req.capacityRange.requiredBytes, limit_bytes: req.capacityRange.limitBytes }
          : null,
        volume_capabilities: caps(req.volumeCapabilities),
        parameters: req.parameters,
        secrets: req.secrets,
        volume_content_source: contentSourceToWire(req.contentSource),
        accessibility_requirements: req.accessibilityRequirements
          ? {
              requisite: req.accessibilityRequirements.requisite.map(topologyToWire),
              preferred: req.accessibilityRequirements.preferred.map(topologyToWire),
            }
          : null,
      };
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
          volume_capabilities: caps(req.volumeCapabilities),
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
