/**
 * CsiClient over @grpc/grpc-js to a plugin's unix socket. One channel per endpoint; every call has
 * a deadline (`timeoutMs`, defaults below) and is cancelled when its AbortSignal aborts. Requests
 * are never logged (they carry secrets); failures become ERR_CSI_* BerthErrors (errors.ts).
 */
import * as grpc from "@grpc/grpc-js";
import { BerthError } from "../structs/errors.js";
import type { Logger } from "../internal/log.js";
import { abortError } from "../internal/abort.js";
import { DEFAULT_CALL_TIMEOUT_MS } from "./call_deadlines.js";
import { grpcTarget, loadCsi } from "./proto.js";
import { csiError } from "./errors.js";
import { grpcCodeName, type CsiCallOutcome } from "./call_outcome.js";
import { storageOps, type CsiService, type CsiUnaryCall } from "./client_storage.js";
import {
  capabilityOps,
  controllerPublishOps,
  controllerVolumeOps,
  identityOps,
  nodeMountOps,
} from "./client_ops.js";
import type { CsiCallOptions, CsiClient } from "./types.js";

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

/** One plugin connection: the channel, and whether close() was called. */
interface Channel {
  endpoint: string;
  client: grpc.Client;
  csi: ReturnType<typeof loadCsi>;
  log: Logger;
  onCall: CsiClientOptions["onCall"];
  /** Set by close(); later calls fail fast with a retryable code instead of a grpc-js internal error. */
  closed: boolean;
}

/** The call primitive over `ch`: a deadline, cancelled by the signal, its outcome told, its errors mapped. */
function unaryCall(ch: Channel): CsiUnaryCall {
  return <Res>(
    service: Service,
    method: string,
    request: object,
    callOpts: CsiCallOptions | undefined,
    defaultTimeoutMs: number,
    sensitive: readonly string[] = [],
  ): Promise<Res> => {
    const def = ch.csi[service].service[method];
    if (!def) return Promise.reject(new BerthError("ERR_INTERNAL", `csi.proto has no ${service}.${method}`));
    const signal = callOpts?.signal;
    if (signal?.aborted) return Promise.reject(csiError(method, abortError(signal)));
    // A closed connection is "plugin unavailable" (retryable), not an internal error: a caller
    // holding a connection that was replaced must retry on the new one.
    if (ch.closed) {
      return Promise.reject(
        new BerthError("ERR_CSI_UNAVAILABLE", `CSI ${method}: connection to ${ch.endpoint} closed`),
      );
    }
    const timeoutMs = callOpts?.timeoutMs ?? defaultTimeoutMs;
    const started = Date.now();
    return new Promise<Res>((resolve, reject) => {
      const onAbort = () => grpcCall.cancel();
      const grpcCall = ch.client.makeUnaryRequest<object, Res>(
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
          ch.onCall?.({ rpc: method, ms, code: failed ? grpcCodeName(err, signal?.aborted === true) : "OK" });
          if (err || res === undefined) {
            const mapped = signal?.aborted
              ? csiError(method, abortError(signal))
              : csiError(method, err ?? new Error("empty response"), sensitive);
            ch.log.debug("call failed", { method, code: mapped.code, ms });
            reject(mapped);
            return;
          }
          ch.log.debug("call ok", { method, ms });
          resolve(res);
        },
      );
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  };
}

export function createCsiClient(endpoint: string, opts: CsiClientOptions): CsiClient {
  const ch: Channel = {
    endpoint,
    client: new grpc.Client(grpcTarget(endpoint), grpc.credentials.createInsecure(), CHANNEL_OPTIONS),
    csi: loadCsi(),
    log: opts.log.child("csi"),
    onCall: opts.onCall,
    closed: false,
  };
  const call = unaryCall(ch);
  return {
    ...storageOps(call, DEFAULT_CALL_TIMEOUT_MS),
    ...identityOps(call),
    ...capabilityOps(call),
    ...controllerVolumeOps(call),
    ...controllerPublishOps(call),
    ...nodeMountOps(call),
    endpoint,
    close: () => {
      ch.closed = true;
      ch.client.close();
    },
  };
}
