/**
 * One registered plugin role with its CSI connection, fingerprinted at start and then every
 * `intervalMs` until stopped. `onChange` fires whenever the fingerprint differs from the last one
 * (UpdateTime aside).
 */
import { abortError, sleep, isAbortError } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import type { CsiClient } from "../../csi/types.js";
import type { RegisteredPlugin } from "../dynamicplugins/types.js";
import { fingerprintPlugin, sameInfo, type Fingerprint } from "./fingerprint.js";

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

  constructor(
    readonly plugin: RegisteredPlugin,
    readonly client: CsiClient,
    private readonly opts: InstanceOptions,
  ) {
    this.first = new Promise((resolve) => {
      this.markFirst = resolve;
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
    const fp = await fingerprintPlugin(
      this.client,
      this.plugin,
      { signal: this.stopper.signal, timeoutMs: this.opts.callTimeoutMs },
      this.current,
    );
    if (this.stopper.signal.aborted) return fp;
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

  async stop(): Promise<void> {
    this.stopper.abort();
    this.markFirst();
    await this.loop;
    this.client.close();
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
