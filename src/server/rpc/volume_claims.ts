/** Small reads over a volume's claims that the volume operations share. */
import type { CSIVolume, VolumeClaim } from "../../structs/volume.js";

/** Claims still held (taken): the allocs that have the volume mounted or are mounting it. */
export function liveClaimsOf(vol: CSIVolume): VolumeClaim[] {
  return [...Object.values(vol.ReadClaims), ...Object.values(vol.WriteClaims)].filter(
    (c) => c.State === "taken",
  );
}

/** Every claim (live or releasing) that `nodeId` holds. */
export function claimsOnNode(vol: CSIVolume, nodeId: string): VolumeClaim[] {
  return allClaimsOf(vol).filter((c) => c.NodeID === nodeId);
}

/** Every claim, live or releasing. */
export function allClaimsOf(vol: CSIVolume): VolumeClaim[] {
  return [
    ...Object.values(vol.ReadClaims),
    ...Object.values(vol.WriteClaims),
    ...Object.values(vol.PastClaims),
  ];
}
