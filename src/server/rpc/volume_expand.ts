/**
 * Volume expansion (Nomad: `volume create` again with a larger capacity_min). Runs under the
 * volume's lock (VolumeEndpoint.createOne holds it). ControllerExpandVolume first, then, when the
 * plugin says so, NodeExpandVolume for every live claim, on the node that holds it; the new
 * capacity is recorded only once every node step succeeded. So a failure on a node leaves the old
 * capacity on record and repeating the same create redoes both steps (ControllerExpandVolume to a
 * size the volume already has is a no-op for a conforming plugin). Volumes never shrink.
 *
 * Capacity 0 means "unknown" (CSI: a plugin may answer capacity_bytes 0; Nomad skips its capacity
 * checks for Capacity 0). For such a volume the capacity already granted is the recorded
 * RequestedCapacityMin, so an unchanged spec applied again is a no-op, not an expansion request.
 *
 * ONLINE/OFFLINE (structs/volume_reapply.ts decideExpansion): a volume with claims is expanded only
 * through a controller whose plugin advertises ONLINE expansion; otherwise the request is refused
 * (409) before any plugin call, telling the operator to stop the volume's users first.
 */
import { BerthError, asBerthError, validationError } from "../../structs/errors.js";
import { decideExpansion } from "../../structs/volume_reapply.js";
import { liveClaimsOf } from "./volume_claims.js";
import type { CSIVolume } from "../../structs/volume.js";
import type { ServerDeps } from "../deps.js";
import { volumeView } from "../state/views.js";

/** Deadline of one NodeExpandVolume (the node retries transient plugin errors within it). */
const NODE_EXPAND_TIMEOUT_MS = 120_000;

/**
 * Expands `existing` when `requested` asks for more than it has; answers the volume as it is
 * afterwards. `field` names the spec in errors (e.g. `Volumes[0]`).
 */
export async function expandIfRequested(
  deps: ServerDeps,
  existing: CSIVolume,
  requested: CSIVolume,
  field: string,
  signal?: AbortSignal,
): Promise<CSIVolume> {
  const min = requested.RequestedCapacityMin;
  const max = requested.RequestedCapacityMax;
  if (max > 0 && max < existing.Capacity) {
    throw validationError(
      `${field}.RequestedCapacityMax`,
      `${max} is below the volume's current capacity ${existing.Capacity}: volumes cannot shrink`,
    );
  }
  if (min <= knownCapacity(existing)) return existing;
  const controllers = Object.values(deps.store.getPlugin(existing.PluginID)?.Controllers ?? {});
  const decision = decideExpansion(
    existing,
    controllers.filter((c) => c.Healthy).map((c) => c.ControllerInfo),
  );
  if (decision.kind === "refuse") {
    throw new BerthError("ERR_CONFLICT", decision.message, { field: `${field}.RequestedCapacityMin` });
  }
  const claim = liveClaimsOf(existing)[0];
  const resp = await deps.controllers.call(
    existing.PluginID,
    "ClientCSI.ControllerExpandVolume",
    {
      PluginID: existing.PluginID,
      ExternalVolumeID: existing.ExternalID,
      CapacityMin: min,
      CapacityMax: max,
      Capability: claim ? { AccessMode: claim.AccessMode, AttachmentMode: claim.AttachmentMode } : null,
      MountOptions: existing.MountOptions,
      Secrets: { ...existing.Secrets, ...requested.Secrets },
    },
    { requires: decision.requires, signal },
  );
  if (resp.NodeExpansionRequired) await expandOnNodes(deps, existing, requested, resp.CapacityBytes, signal);
  const expanded = await deps.store.txn((tx) => {
    const cur = tx.getVolume(existing.Namespace, existing.ID);
    if (!cur) throw new BerthError("ERR_NOT_FOUND", `volume ${JSON.stringify(existing.ID)} was deregistered`);
    tx.putVolume({
      ...cur,
      // 0 from the plugin is "unknown": the old figure is below what was just granted, so it goes.
      Capacity: resp.CapacityBytes > 0 ? Math.max(resp.CapacityBytes, cur.Capacity) : 0,
      // Recorded even when the plugin answers 0 (unknown): it is what a repeat is compared with.
      RequestedCapacityMin: min,
      RequestedCapacityMax: max,
    });
    return volumeView(tx, existing.Namespace, existing.ID)!;
  });
  deps.log.info("volume expanded", { volume: existing.ID, capacity: expanded.Capacity });
  return expanded;
}

/** The capacity a request is compared with: the plugin's answer, or what was asked when unknown (0). */
export function knownCapacity(vol: Pick<CSIVolume, "Capacity" | "RequestedCapacityMin">): number {
  return vol.Capacity > 0 ? vol.Capacity : vol.RequestedCapacityMin;
}

/** NodeExpandVolume for every live claim; all are tried, the failures are reported together. */
async function expandOnNodes(
  deps: ServerDeps,
  vol: CSIVolume,
  requested: CSIVolume,
  capacity: number,
  signal?: AbortSignal,
): Promise<void> {
  const failures: string[] = [];
  for (const claim of liveClaimsOf(vol)) {
    try {
      await deps.conns.call(
        claim.NodeID,
        "ClientCSI.NodeExpandVolume",
        {
          PluginID: vol.PluginID,
          VolumeID: vol.ID,
          Namespace: vol.Namespace,
          ExternalID: vol.ExternalID,
          AllocID: claim.AllocationID,
          CapacityMin: requested.RequestedCapacityMin,
          CapacityMax: requested.RequestedCapacityMax,
          Secrets: { ...vol.Secrets, ...requested.Secrets },
        },
        { timeoutMs: NODE_EXPAND_TIMEOUT_MS, signal },
      );
    } catch (err) {
      failures.push(`node ${claim.NodeID} (allocation ${claim.AllocationID}): ${asBerthError(err).message}`);
    }
  }
  if (failures.length > 0) {
    throw new BerthError(
      "ERR_CSI_PLUGIN_UNAVAILABLE",
      `volume ${JSON.stringify(vol.ID)} was expanded to ${capacity} bytes by its controller, but NodeExpandVolume failed on ${failures.join("; ")}; the record keeps the old capacity until the same create, run again, finishes the node step`,
    );
  }
}
