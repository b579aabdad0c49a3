/**
 * One registered plugin role with its CSI connection, fingerprinted at start and then every
 * `intervalMs` until stopped. `onChange` fires whenever the fingerprint differs from the last one
 * (UpdateTime aside).
 *
 * The connection follows the plugin (connection.ts): a fingerprint that times out or finds the
 * plugin unreachable drops the connection (its calls in flight fail at once, retryably) and opens a
 * fresh one for what follows; stopping the instance drops it too.
 */
import { abortError, sleep, isAbortError } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import type { CsiClient } from "../../csi/types.js";
import type { ErrorCode } from "../../structs/errors.js";
import type { RegisteredPlugin } from "../dynamicplugins/types.js";
import { PluginConnection } from "./connection.js";
import { fingerprintPlugin, sameInfo, type Fingerprint } from "./fingerprint.js";

/** Fingerprint failures that mean "the plugin does not answer on this connection". */
const CONNECTION_FAILURES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "ERR_CSI_DEADLINE_EXCEEDED",
  "ERR_CSI_UNAVAILABLE",
]);

export interface InstanceOptions {
  intervalMs: number;
  callTimeoutMs: number;
  log: Logger;
  onChange: () => void;
}

export class PluginInstance {
  private current: Fingerprint | undefined;
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly first: Promise<void>;
  private markFirst!: () => void;
  private conn: PluginConnection;

  /** `connect` opens a new connection to the plugin's socket (called again on each reconnect). */
  constructor(
    readonly plugin: RegisteredPlugin,
    private readonly connect: () => CsiClient,
    private readonly opts: InstanceOptions,
  ) {
    this.conn = new PluginConnection(connect());
    this.first = new Promise((resolve) => {
      this.markFirst = resolve;
    });
  }

  /** The current connection: replaced by `reconnect`, so look it up for every call. */
  get connection(): PluginConnection {
    return this.conn;
  }

  get client(): CsiClient {
    return this.conn.client;
  }

  /**
   * Opens a fresh connection for the calls that follow, unless the instance is stopped. The old one
   * is dropped (its calls in flight fail with ERR_CSI_UNAVAILABLE) when `cancelInFlight`, else
   * closed once they end (grpc-js lets calls in flight finish after close).
   */
  reconnect(reason: string, cancelInFlight: boolean): void {
    const old = this.conn;
    if (this.stopper.signal.aborted) return;
    this.conn = new PluginConnection(this.connect());
    if (cancelInFlight) old.drop(reason);
    else old.client.close();
    this.opts.log.info("plugin connection replaced", {
      plugin: this.plugin.pluginId,
      role: this.plugin.role,
      reason,
    });
  }

  get fingerprint(): Fingerprint | undefined {
    return this.current;
  }

  start(): void {
    this.loop ??= this.runLoop();
  }

  /** Resolves once the first fingerprint (successful or not) is in, or the signal aborts. */
  async firstFingerprint(signal?: AbortSignal): Promise<Fingerprint | undefined> {
    if (!this.current) await untilOrAbort(this.first, signal);
    return this.current;
  }

  /** Fingerprints now; the loop's schedule is unaffected. */
  async refresh(): Promise<Fingerprint> {
    let conn = this.conn;
    let fp = await this.fingerprintOn(conn);
    // The connection was replaced while this fingerprint was in flight (the plugin registered
    // again, e.g. restored after an agent restart): its failure describes the old connection, not
    // the plugin. Fingerprint the new one at once rather than report the plugin unhealthy until the
    // next round. Each pass needs a replacement in between, so this ends.
    while (fp.failureCode && this.conn !== conn && !this.stopper.signal.aborted) {
      conn = this.conn;
      fp = await this.fingerprintOn(conn);
    }
    if (this.stopper.signal.aborted) return fp;
    // A plugin that stopped answering (hung, or its process replaced on the same socket): calls
    // waiting on this connection would wait out their deadlines; they fail now and are retried on
    // a fresh connection.
    if (fp.failureCode && CONNECTION_FAILURES.has(fp.failureCode) && this.conn === conn) {
      this.reconnect(`fingerprint failed: ${fp.failureCode}`, true);
    }
    const changed = !sameInfo(this.current?.info, fp.info);
    if (changed && this.current?.info.Healthy !== fp.info.Healthy) {
      this.opts.log.info("plugin health changed", {
        plugin: this.plugin.pluginId,
        role: this.plugin.role,
        healthy: fp.info.Healthy,
        description: fp.info.HealthDescription,
      });
    }
    this.current = fp;
    this.markFirst();
    if (changed) this.opts.onChange();
    return fp;
  }

  private fingerprintOn(conn: PluginConnection): Promise<Fingerprint> {
    return fingerprintPlugin(
      conn.client,
      this.plugin,
      { signal: this.stopper.signal, timeoutMs: this.opts.callTimeoutMs },
      this.current,
    );
  }

  /** Stops fingerprinting and drops the connection: calls still waiting on it fail retryably. */
  async stop(reason = "plugin instance stopped"): Promise<void> {
    this.stopper.abort();
    this.markFirst();
    await this.loop;
    this.conn.drop(reason);
  }

  private async runLoop(): Promise<void> {
    const signal = this.stopper.signal;
    while (!signal.aborted) {
      try {
        await this.refresh();
        await sleep(this.opts.intervalMs, signal);
      } catch (err) {
        if (!isAbortError(err)) this.opts.log.error("plugin fingerprint loop failed", { error: err });
        if (signal.aborted) return;
      }
    }
  }
}

/** Awaits `p`, rejecting early with the abort reason when `signal` aborts; leaves no listener behind. */
function untilOrAbort(p: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    void p.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}
