/**
 * Connections that follow the plugin (issue 8 item 9).
 *
 * What grpc-js does with a hung plugin (checked with csi-hostpath under SIGSTOP over a unix
 * socket): the socket still accepts and nothing answers, so a call waits out its whole deadline
 * (5 min for a NodeStage); `close()` does not cancel calls in flight (they complete when the
 * process is continued); and after SIGCONT the same HTTP/2 connection answers again. So nothing in
 * the transport notices a hang, and a caller holding one connection object keeps it after berth
 * has given up on it. Hence:
 *
 * - A PluginConnection wraps one CsiClient. `drop()` cancels its calls in flight: they fail at once
 *   with ERR_CSI_UNAVAILABLE (retryable; a dropped publish may have taken effect, which is what
 *   DESIGN's "maybe attached" covers: the caller retries or unwinds, both idempotent). It is dropped
 *   when the plugin stops answering probes (its supervisor deregisters it, or a fingerprint times
 *   out) and when the plugin goes away or is replaced.
 * - A following client (`followingClient`) is what the csimanager hands out: every call goes to the
 *   connection of the instance registered for the plugin *at that moment*, so a retry after a drop
 *   reaches the fresh connection. A call made while no instance is registered waits for one within
 *   its own deadline, then fails with ERR_CSI_PLUGIN_UNAVAILABLE (retryable).
 */
import { BerthError } from "../../structs/errors.js";
import type { CsiCallOptions, CsiClient } from "../../csi/types.js";

type CsiMethod = Exclude<keyof CsiClient, "endpoint" | "close">;

/** Where each method takes its options: 0 when it has no request, 1 after the request. */
const OPTIONS_AT: Record<CsiMethod, 0 | 1> = {
  getPluginInfo: 0,
  getPluginCapabilities: 0,
  probe: 0,
  controllerGetCapabilities: 0,
  createVolume: 1,
  deleteVolume: 1,
  controllerPublishVolume: 1,
  controllerUnpublishVolume: 1,
  validateVolumeCapabilities: 1,
  createSnapshot: 1,
  deleteSnapshot: 1,
  listSnapshots: 1,
  controllerExpandVolume: 1,
  controllerModifyVolume: 1,
  listVolumes: 1,
  getCapacity: 1,
  controllerGetVolume: 1,
  nodeGetCapabilities: 0,
  nodeGetInfo: 0,
  nodeStageVolume: 1,
  nodeUnstageVolume: 1,
  nodePublishVolume: 1,
  nodeUnpublishVolume: 1,
  nodeExpandVolume: 1,
  nodeGetVolumeStats: 1,
};

type AnyMethod = (...args: unknown[]) => Promise<unknown>;

export class PluginConnection {
  private readonly dropper = new AbortController();
  private dropReason = "";

  constructor(readonly client: CsiClient) {}

  get dropped(): boolean {
    return this.dropper.signal.aborted;
  }

  /**
   * Runs `method` on this connection. If the connection is dropped before the call answers, the
   * call is cancelled and rejects with ERR_CSI_UNAVAILABLE; the caller's own abort stays an abort.
   */
  async call(method: CsiMethod, args: unknown[]): Promise<unknown> {
    const at = OPTIONS_AT[method];
    const opts = args[at] as CsiCallOptions | undefined;
    if (this.dropped) throw this.droppedError(method);
    const signal = opts?.signal ? AbortSignal.any([opts.signal, this.dropper.signal]) : this.dropper.signal;
    const callArgs = args.slice(0, at);
    callArgs[at] = { ...opts, signal };
    try {
      return await (this.client[method] as AnyMethod).apply(this.client, callArgs);
    } catch (err) {
      if (this.dropped && !opts?.signal?.aborted) throw this.droppedError(method, err);
      throw err;
    }
  }

  /** Cancels every call in flight (ERR_CSI_UNAVAILABLE) and closes the connection. Idempotent. */
  drop(reason: string): void {
    if (this.dropped) return;
    this.dropReason = reason;
    this.dropper.abort(new BerthError("ERR_CSI_UNAVAILABLE", reason));
    this.client.close();
  }

  private droppedError(method: string, cause?: unknown): BerthError {
    return new BerthError(
      "ERR_CSI_UNAVAILABLE",
      `CSI ${method[0]!.toUpperCase()}${method.slice(1)}: connection to ${this.client.endpoint} dropped (${this.dropReason}); the call may have taken effect`,
      cause === undefined ? undefined : { cause },
    );
  }
}

/**
 * A CsiClient whose every call runs on `current(opts)`'s connection, looked up per call. Time spent
 * waiting there counts against the call's `timeoutMs`. `close()` is a no-op: the csimanager owns
 * the connections.
 */
export function followingClient(
  endpoint: string,
  current: (opts: CsiCallOptions | undefined) => Promise<PluginConnection>,
): CsiClient {
  const client: Record<string, unknown> = { endpoint, close: () => undefined };
  for (const method of Object.keys(OPTIONS_AT) as CsiMethod[]) {
    client[method] = async (...args: unknown[]) => {
      const at = OPTIONS_AT[method];
      const opts = args[at] as CsiCallOptions | undefined;
      const started = Date.now();
      const conn = await current(opts);
      const waited = Date.now() - started;
      if (opts?.timeoutMs !== undefined && waited > 0) {
        const rest = [...args];
        rest[at] = { ...opts, timeoutMs: Math.max(1, opts.timeoutMs - waited) };
        return conn.call(method, rest);
      }
      return conn.call(method, args);
    };
  }
  return client as unknown as CsiClient;
}
