/** What every csi-hostpath handler shares, and the error shape handlers throw. */
import type { status } from "@grpc/grpc-js";
import type { Logger } from "../../internal/log.js";
import type { AttachmentStore } from "./attachments.js";
import type { HostpathConfig } from "./flags.js";
import type { VolumeStore } from "./volumes.js";

export interface HostpathContext {
  config: HostpathConfig;
  volumes: VolumeStore;
  attachments: AttachmentStore;
  log: Logger;
}

/** A gRPC status a handler answers with. */
export class RpcError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

export function rpcError(code: status, message: string): RpcError {
  return new RpcError(code, message);
}

export function isRpcError(v: unknown): v is RpcError {
  return v instanceof RpcError;
}
