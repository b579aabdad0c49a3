/**
 * Where a csi-hostpath volume is accessible from. CreateVolume's accessibility_requirements decide
 * it when given (CSI spec: the volume must be accessible from at least one requisite topology,
 * preferring the preferred ones in order), so the CO can place it; otherwise the controller's own
 * topology flags apply (none: reachable from anywhere). Recorded with the volume, so a repeated
 * CreateVolume, ListVolumes and ControllerGetVolume answer the same topology.
 */
import type { WireCreateVolumeRequest } from "../wire.js";

export type Segments = Record<string, string>;

/** The topologies a new volume is accessible from, or null to use the controller's own. */
export function requestedTopology(
  req: Pick<WireCreateVolumeRequest, "accessibility_requirements">,
): Segments[] | null {
  const reqs = req.accessibility_requirements;
  const first = reqs?.preferred[0] ?? reqs?.requisite[0];
  return first ? [{ ...first.segments }] : null;
}

/** The accessible_topology answer for a volume (its recorded topology, else the controller's). */
export function accessibleTopology(
  recorded: Segments[] | undefined,
  controller: Segments,
): { segments: Segments }[] {
  if (recorded) return recorded.map((segments) => ({ segments }));
  return Object.keys(controller).length ? [{ segments: controller }] : [];
}
