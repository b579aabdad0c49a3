/**
 * What `volume detach` shows while the server releases a volume's claims on a node: each claim
 * with its state and, when a step is failing or waiting, the step, its attempts and its last error
 * (the claim's ReleaseStatus), read from `GET /v1/volume/csi/:id?claims=true`.
 */
import type { CSIVolumeClaim } from "../../api/index.js";
import { shortId } from "../format.js";
import type { CommandIO } from "../io.js";

export function claimProgress(io: CommandIO, volumeId: string, nodeId: string): () => Promise<string[]> {
  return async () => {
    const vol = await io.api.volumes.info(volumeId);
    const claims: CSIVolumeClaim[] = [
      ...Object.values(vol.ReadClaims ?? {}),
      ...Object.values(vol.WriteClaims ?? {}),
      ...Object.values(vol.PastClaims ?? {}),
    ].filter((c) => c.NodeID === nodeId);
    if (claims.length === 0) return ["no claim left on the node"];
    return claims
      .sort((a, b) => a.AllocationID.localeCompare(b.AllocationID))
      .map((c) => {
        const st = c.ReleaseStatus;
        const step = st ? `; ${st.Step} (attempt ${st.Attempts}): ${st.LastError || "waiting"}` : "";
        return `claim of alloc ${shortId(c.AllocationID, false)}: ${c.State}${step}`;
      });
  };
}
