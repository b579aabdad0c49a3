/**
 * What one CSI call ended as, for metrics (CsiClientOptions.onCall): the RPC, how long it took and
 * its gRPC status by name ("OK", "NOT_FOUND", "DEADLINE_EXCEEDED", ...; "CANCELLED" when berth
 * cancelled it). Only the status name and the RPC name: never the request, the plugin's message or
 * anything else that could carry a secret.
 */
import { status } from "@grpc/grpc-js";

export interface CsiCallOutcome {
  /** The CSI method, e.g. "NodePublishVolume". */
  rpc: string;
  /** Wall time from sending the request to its answer. */
  ms: number;
  /** "OK", or the gRPC status name the call failed with. */
  code: string;
}

/** The gRPC status name of a failed call (`err` from grpc-js); UNKNOWN when it carries no status. */
export function grpcCodeName(err: unknown, cancelledByCaller: boolean): string {
  if (cancelledByCaller) return "CANCELLED";
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "number" && err instanceof Error && "metadata" in err) {
    return status[code] ?? "UNKNOWN";
  }
  return "UNKNOWN";
}
