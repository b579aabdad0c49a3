/**
 * The API's JSON shapes, from berth's own API DTOs (src/api: the HTTP client's types, shared by the
 * CLI and the UI; type-only, nothing of the Node client reaches the bundle), plus what the UI
 * reads that a newer server may add.
 */
import type { CSIVolumeWithClaims } from "../../src/api/types.js";

export type * from "../../src/api/types.js";

/**
 * A volume's latest usage and health figures, as its node read them (NodeGetVolumeStats and the
 * plugin's VolumeCondition), answered with `GET /v1/volume/csi/:id?usage=true` by servers that
 * collect them; absent otherwise.
 */
export interface VolumeUsage {
  NodeID: string;
  BytesUsed: number;
  BytesAvailable: number;
  BytesTotal: number;
  InodesUsed: number;
  InodesAvailable: number;
  InodesTotal: number;
  Abnormal: boolean;
  Message: string;
  /** Unix nanoseconds (an RFC 3339 string is read too). */
  UpdateTime: number | string;
}

/** The controller's view of the volume (ControllerGetVolume's condition), as `?usage=true` returns it. */
export interface VolumeControllerCondition {
  Abnormal: boolean;
  Message: string;
  /** Unix nanoseconds (an RFC 3339 string is read too). */
  UpdateTime: number | string;
}

export type VolumeDetail = CSIVolumeWithClaims & {
  Usage?: VolumeUsage | null;
  ControllerCondition?: VolumeControllerCondition | null;
};
