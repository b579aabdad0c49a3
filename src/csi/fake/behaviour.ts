/** Programmable per-method behaviour of the fake CSI plugin. */
import type { status } from "@grpc/grpc-js";

export type CsiMethodName =
  | "GetPluginInfo"
  | "GetPluginCapabilities"
  | "Probe"
  | "CreateVolume"
  | "DeleteVolume"
  | "ControllerPublishVolume"
  | "ControllerUnpublishVolume"
  | "ValidateVolumeCapabilities"
  | "ListVolumes"
  | "GetCapacity"
  | "ControllerGetCapabilities"
  | "CreateSnapshot"
  | "DeleteSnapshot"
  | "ListSnapshots"
  | "ControllerExpandVolume"
  | "ControllerGetVolume"
  | "ControllerModifyVolume"
  | "NodeStageVolume"
  | "NodeUnstageVolume"
  | "NodePublishVolume"
  | "NodeUnpublishVolume"
  | "NodeGetVolumeStats"
  | "NodeExpandVolume"
  | "NodeGetCapabilities"
  | "NodeGetInfo";

export interface FakeStatus {
  code: status;
  message: string;
}

/**
 * - `{ error }`: answer with that gRPC status;
 * - `{ delayMs }`: wait, then behave as by default (or as `then` says);
 * - `{ hang: true }`: never answer (the caller's deadline or cancel ends the call);
 * - `{ respond }`: answer with this response object (snake_case wire shape);
 * - a function: gets the decoded request and returns the response, or throws a FakeStatus-shaped
 *   FakeRpcError to answer with that status; `undefined` means "default behaviour".
 */
export type FakeBehaviour =
  | { error: FakeStatus }
  | { delayMs: number; then?: FakeBehaviour }
  | { hang: true }
  | { respond: object }
  | ((request: Record<string, unknown>) => unknown);

/** Throw this from a behaviour function to answer with a gRPC status. */
export class FakeRpcError extends Error implements FakeStatus {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
    this.name = "FakeRpcError";
  }
}

export interface FakeCall {
  method: CsiMethodName;
  /** Date.now() when the call arrived. */
  at: number;
  /** The decoded request, snake_case as on the wire (secrets included: tests only). */
  request: Record<string, unknown>;
}

export function isFakeStatus(v: unknown): v is FakeStatus {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as FakeStatus).code === "number" &&
    typeof (v as FakeStatus).message === "string"
  );
}
