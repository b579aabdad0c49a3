/**
 * The leader's controller condition poll (issue 15): every `intervalMs`, for each plugin with a
 * healthy controller instance that advertises both GET_VOLUME and VOLUME_CONDITION
 * (`SupportsGet` and `SupportsCondition`), ControllerGetVolume of each of its volumes, run on a
 * node hosting such a controller over the ClientCSI path ControllerPublish uses (forwarded to the
 * server holding that node's connection in a cluster). What it answers is kept on the volume as
 * `CSIVolume.ControllerCondition` (structs/volume_condition.ts), written only when it changed.
 *
 * Contracts:
 * - Only capabilities the plugin advertises are called: a plugin none of whose healthy controllers
 *   advertises both is never asked (the node refuses too, ERR_CSI_NOT_SUPPORTED).
 * - At most `concurrency` calls in flight per pass, one attempt each (no retry: the next pass is
 *   the retry); a volume whose lock is held (a claim, release, create, delete… in flight) is
 *   skipped this pass rather than queued, so a poll never delays nor races an operation, and a
 *   plugin that serialises calls per volume never answers that operation ABORTED because of it.
 * - A plugin's NOT_FOUND for a registered volume is a condition, recorded abnormal (the storage
 *   lost the volume); every other failure changes nothing and is logged once per pass.
 * - Written in a transaction that re-reads the volume: one deleted or re-registered (another
 *   external ID) meanwhile is left alone. The message has the volume's secret values redacted.
 * - A pass costs O(volumes of the qualifying plugins) reads and one write per changed condition.
 * - Fenced by the leader's term (leader/gate.ts): the loop ends when the term's signal aborts, and
 *   a call refused ERR_FENCED (the term over, or its etcd session not confirmed fresh) ends the
 *   pass: no further volume is asked.
 */
import { asBerthError } from "../../structs/errors.js";
import { NS_PER_MS } from "../../structs/job.js";
import { nextControllerCondition, type ObservedCondition } from "../../structs/volume_condition.js";
import type { CSIVolume } from "../../structs/volume.js";
import { isAbortError, sleep } from "../../internal/abort.js";
import type { KeyedMutex } from "../../internal/keyed_mutex.js";
import type { Logger } from "../../internal/log.js";
import type { ControllerClient } from "../clientconn/controller.js";
import { volumeKey } from "../deps.js";
import type { StateStore } from "../state/store.js";
import { withDefaults } from "../../internal/with_defaults.js";

export interface ControllerConditionOptions {
  /** Time between passes (the first pass comes one interval after the loop starts). */
  intervalMs: number;
  /** Calls in flight at once in a pass. */
  concurrency: number;
  /** Deadline of one ControllerGetVolume. */
  callTimeoutMs: number;
}

export const DEFAULT_CONTROLLER_CONDITION_OPTIONS: ControllerConditionOptions = {
  intervalMs: 60_000,
  concurrency: 4,
  callTimeoutMs: 30_000,
};

export interface PassResult {
  polled: number;
  written: number;
  skippedBusy: number;
  failed: number;
}

export class ControllerConditionPoller {
  private readonly opts: ControllerConditionOptions;
  private ctl = new AbortController();
  private loop: Promise<void> | undefined;

  /** `nowMs` is injectable for tests. */
  constructor(
    private readonly store: StateStore,
    private readonly controllers: Pick<ControllerClient, "call">,
    private readonly locks: Pick<KeyedMutex, "isBusy">,
    private readonly log: Logger,
    opts: Partial<ControllerConditionOptions> = {},
    private readonly nowMs: () => number = Date.now,
  ) {
    this.opts = withDefaults(DEFAULT_CONTROLLER_CONDITION_OPTIONS, opts);
  }

  /** Starts the loop; it also ends when `term` aborts (the leader's term ended: leader/gate.ts). */
  start(term?: AbortSignal): void {
    if (this.loop) return;
    this.ctl = new AbortController();
    const signal = term ? AbortSignal.any([this.ctl.signal, term]) : this.ctl.signal;
    this.loop = this.run(signal);
  }

  async stop(): Promise<void> {
    this.ctl.abort();
    await this.loop;
    this.loop = undefined;
  }

  /** The plugins to poll now: a healthy controller instance advertises GET_VOLUME and VOLUME_CONDITION. */
  qualifyingPlugins(): string[] {
    return this.store
      .listPlugins()
      .filter((p) => p.ControllersHealthy > 0)
      .map((p) => p.ID)
      .filter((id) =>
        [...this.store.healthyPluginInstances(id, "controller").values()].some(
          (info) =>
            info.ControllerInfo?.SupportsGet === true && info.ControllerInfo.SupportsCondition === true,
        ),
      );
  }

  /** One pass over every qualifying plugin's volumes. */
  async pass(signal: AbortSignal = this.ctl.signal): Promise<PassResult> {
    const result: PassResult = { polled: 0, written: 0, skippedBusy: 0, failed: 0 };
    const failures: { volume: string; code: string; error: string }[] = [];
    let fenced = false;
    for (const pluginId of this.qualifyingPlugins()) {
      const queue = this.store.listVolumes({ pluginId }).filter((v) => v.ExternalID !== "");
      let unsupported = false;
      const worker = async () => {
        for (let v = queue.shift(); v && !signal.aborted && !unsupported && !fenced; v = queue.shift()) {
          if (this.locks.isBusy(volumeKey(v.Namespace, v.ID))) {
            result.skippedBusy++;
            continue;
          }
          const seen = await this.observe(pluginId, v, signal);
          if (seen.kind === "failed") {
            // The term ended or its session went stale (leader/gate.ts): nothing more is sent.
            if (signal.aborted || seen.code === "ERR_FENCED") {
              fenced = true;
              return;
            }
            if (seen.code === "ERR_CSI_NOT_SUPPORTED") unsupported = true;
            result.failed++;
            failures.push({ volume: volumeKey(v.Namespace, v.ID), code: seen.code, error: seen.error });
            continue;
          }
          result.polled++;
          if (seen.kind === "none") continue;
          if (await this.record(v, seen.condition)) result.written++;
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, this.opts.concurrency) }, worker));
      if (signal.aborted || fenced) break;
    }
    if (failures.length > 0) {
      this.log.warn("ControllerGetVolume failed for some volumes; their condition is unchanged", {
        failed: result.failed,
        first: failures[0],
      });
    }
    return result;
  }

  private async observe(
    pluginId: string,
    v: CSIVolume,
    signal: AbortSignal,
  ): Promise<
    | { kind: "condition"; condition: ObservedCondition }
    | { kind: "none" }
    | { kind: "failed"; code: string; error: string }
  > {
    try {
      const res = await this.controllers.call(
        pluginId,
        "ClientCSI.ControllerGetVolume",
        { PluginID: pluginId, ExternalVolumeID: v.ExternalID },
        { requires: "SupportsGet", signal, timeoutMs: this.opts.callTimeoutMs, retryDeadlineMs: 0 },
      );
      return res.Condition ? { kind: "condition", condition: res.Condition } : { kind: "none" };
    } catch (err) {
      const e = asBerthError(err);
      if (e.code === "ERR_CSI_NOT_FOUND") {
        return {
          kind: "condition",
          condition: {
            Abnormal: true,
            Message: `the controller plugin does not know volume ${v.ExternalID} (ControllerGetVolume: NOT_FOUND)`,
          },
        };
      }
      return { kind: "failed", code: e.code, error: e.message };
    }
  }

  /** Writes `seen` on the volume when it changed; true when it wrote. */
  private async record(v: CSIVolume, seen: ObservedCondition): Promise<boolean> {
    // Outside a transaction first: an unchanged condition (the usual case) opens none.
    if (!nextControllerCondition(v.ControllerCondition, seen, v.Secrets, 0)) return false;
    const nowNs = this.nowMs() * NS_PER_MS;
    return this.store.txn((tx) => {
      const cur = tx.getVolume(v.Namespace, v.ID);
      // Deleted or re-registered onto other storage while the call was out: not this answer's volume.
      if (!cur || cur.ExternalID !== v.ExternalID || cur.PluginID !== v.PluginID) return false;
      const next = nextControllerCondition(cur.ControllerCondition, seen, cur.Secrets, nowNs);
      if (!next) return false;
      tx.putVolume({ ...cur, ControllerCondition: next });
      return true;
    });
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await sleep(this.opts.intervalMs, signal);
        await this.pass(signal);
      } catch (err) {
        if (isAbortError(err) || signal.aborted) return;
        this.log.error("controller condition pass failed", { error: err });
      }
    }
  }
}
