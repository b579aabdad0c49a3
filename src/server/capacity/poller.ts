/**
 * The leader's capacity poll (issue 33 item 2; Nomad #10325, Kubernetes CSIStorageCapacity): for
 * each plugin with a healthy controller instance that advertises GET_CAPACITY
 * (`SupportsGetCapacity`), GetCapacity per topology segment — the distinct accessible topologies of
 * the plugin's healthy node instances, or the plugin as a whole when none reports one — run on a
 * node hosting such a controller over the ClientCSI path (forwarded in a cluster). What it answers is
 * stored as the plugin's PluginCapacity (structs/capacity.ts), each entry stamped with when it was
 * measured and when it goes stale (`staleAfterIntervals` intervals later).
 *
 * When: a full pass when the loop starts and every `intervalMs`; and a refresh of one plugin
 * `refreshDelayMs` after a committed change that moves its capacity or its segments — a volume of
 * the plugin created (put with a new external ID), resized or deleted, whichever server wrote it
 * (the store's commit feed), or the plugin's healthy counts changing (a node instance came or went).
 *
 * Contracts:
 * - Only capabilities the plugin advertises are called; one attempt per call (the next pass is the
 *   retry). A failed segment keeps its previous entry (it goes stale on its own) and the failure is
 *   recorded as the record's LastError.
 * - At most `concurrency` calls in flight per plugin.
 * - Fenced by the leader's term (leader/gate.ts): the loop ends when the term's signal aborts, and a
 *   call refused ERR_FENCED ends the pass: nothing further is asked nor written.
 * - A pass writes one record per plugin polled (in a txn that checks the plugin still exists) and
 *   deletes the records of plugins that no longer exist.
 */
import { asBerthError } from "../../structs/errors.js";
import type { CapacityEntry, PluginCapacity } from "../../structs/capacity.js";
import { segmentKey, segmentLabel } from "../../structs/capacity_fit.js";
import type { Topology } from "../../structs/volume.js";
import type { CSIVolume } from "../../structs/volume.js";
import type { CSIPluginSummary } from "../../structs/plugin.js";
import { isAbortError, sleep } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import { withDefaults } from "../../internal/with_defaults.js";
import type { ControllerClient } from "../clientconn/controller.js";
import type { CommittedTxn } from "../state/commit_feed.js";
import type { StateStore } from "../state/store.js";

export interface CapacityPollOptions {
  /** Time between full passes (the first runs when the loop starts). */
  intervalMs: number;
  /** An entry counts as unknown this many intervals after it was measured. */
  staleAfterIntervals: number;
  /** Wait after a triggering change before the plugin's refresh, so a burst of creates costs one. */
  refreshDelayMs: number;
  /** GetCapacity calls in flight at once for one plugin. */
  concurrency: number;
  /** Deadline of one GetCapacity. */
  callTimeoutMs: number;
}

export const DEFAULT_CAPACITY_POLL_OPTIONS: CapacityPollOptions = {
  intervalMs: 60_000,
  staleAfterIntervals: 3,
  refreshDelayMs: 500,
  concurrency: 4,
  callTimeoutMs: 30_000,
};

/** Time as the loop reads it; tests pass a fake one. */
export interface PollClock {
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

const REAL_CLOCK: PollClock = { now: () => Date.now(), sleep };

export interface CapacityPassResult {
  plugins: number;
  measured: number;
  failed: number;
}

export class CapacityPoller {
  private readonly opts: CapacityPollOptions;
  private ctl = new AbortController();
  private loop: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Plugins whose refresh a committed change asked for. */
  private readonly dirty = new Set<string>();
  private wake: (() => void) | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly controllers: Pick<ControllerClient, "call">,
    private readonly log: Logger,
    opts: Partial<CapacityPollOptions> = {},
    private readonly clock: PollClock = REAL_CLOCK,
  ) {
    this.opts = withDefaults(DEFAULT_CAPACITY_POLL_OPTIONS, opts);
  }

  /** Starts the loop; it also ends when `term` aborts (the leader's term ended: leader/gate.ts). */
  start(term?: AbortSignal): void {
    if (this.loop) return;
    this.ctl = new AbortController();
    const signal = term ? AbortSignal.any([this.ctl.signal, term]) : this.ctl.signal;
    this.unsubscribe = this.store.onCommit((txn) => this.onCommit(txn));
    this.loop = this.run(signal);
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.ctl.abort();
    await this.loop;
    this.loop = undefined;
  }

  /** Plugins to poll: a healthy controller instance advertises GET_CAPACITY. */
  qualifyingPlugins(): string[] {
    return this.store
      .listPlugins()
      .filter((p) => p.ControllersHealthy > 0)
      .map((p) => p.ID)
      .filter((id) =>
        [...this.store.healthyPluginInstances(id, "controller").values()].some(
          (info) => info.ControllerInfo?.SupportsGetCapacity === true,
        ),
      );
  }

  /** The segments to ask about: distinct topologies of the healthy node instances; [] = the whole plugin. */
  segmentsOf(pluginId: string): Topology[] {
    const out = new Map<string, Topology>();
    for (const info of this.store.healthyPluginInstances(pluginId, "node").values()) {
      const seg = info.NodeInfo?.AccessibleTopology?.Segments;
      if (seg && Object.keys(seg).length > 0) out.set(segmentKey(seg), { Segments: { ...seg } });
    }
    return [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, t]) => t);
  }

  /** One pass over every qualifying plugin (or only those of `only`). */
  async pass(signal: AbortSignal = this.ctl.signal, only?: ReadonlySet<string>): Promise<CapacityPassResult> {
    const result: CapacityPassResult = { plugins: 0, measured: 0, failed: 0 };
    for (const id of this.qualifyingPlugins()) {
      if (only && !only.has(id)) continue;
      if (signal.aborted) break;
      result.plugins++;
      if (!(await this.pollPlugin(id, signal, result))) break;
    }
    if (!only && !signal.aborted) await this.dropGone();
    return result;
  }

  /** Polls one plugin and records it; false when the term ended (nothing more may be sent). */
  private async pollPlugin(
    pluginId: string,
    signal: AbortSignal,
    result: CapacityPassResult,
  ): Promise<boolean> {
    const prev = this.store.getPluginCapacity(pluginId);
    const asks: (Topology | null)[] = this.segmentsOf(pluginId);
    if (asks.length === 0) asks.push(null);
    const entries: CapacityEntry[] = [];
    const errors: string[] = [];
    let fenced = false;
    let unsupported = false;
    const worker = async () => {
      for (let seg = asks.shift(); seg !== undefined && !fenced && !unsupported; seg = asks.shift()) {
        const segments = seg?.Segments ?? {};
        try {
          const res = await this.controllers.call(
            pluginId,
            "ClientCSI.ControllerGetCapacity",
            { PluginID: pluginId, Topology: seg, Parameters: {} },
            {
              requires: "SupportsGetCapacity",
              signal,
              timeoutMs: this.opts.callTimeoutMs,
              retryDeadlineMs: 0,
            },
          );
          const now = this.clock.now();
          entries.push({
            Segments: { ...segments },
            AvailableBytes: res.AvailableCapacity,
            MaximumVolumeSize: res.MaximumVolumeSize,
            MinimumVolumeSize: res.MinimumVolumeSize,
            MeasuredAt: now,
            StaleAt: now + this.opts.staleAfterIntervals * this.opts.intervalMs,
          });
          result.measured++;
        } catch (err) {
          const e = asBerthError(err);
          if (signal.aborted || e.code === "ERR_FENCED") {
            fenced = true;
            return;
          }
          if (e.code === "ERR_CSI_NOT_SUPPORTED") unsupported = true;
          result.failed++;
          errors.push(`${segmentLabel(segments)}: ${e.code}: ${e.message}`);
          const old = prev?.Entries.find((x) => segmentKey(x.Segments) === segmentKey(segments));
          if (old) entries.push(old);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.opts.concurrency) }, worker));
    if (fenced) return false;
    if (errors.length > 0) {
      this.log.warn("GetCapacity failed for some segments; their last answers are kept", {
        plugin: pluginId,
        failed: errors.length,
        first: errors[0],
      });
    }
    entries.sort((a, b) => (segmentKey(a.Segments) < segmentKey(b.Segments) ? -1 : 1));
    const record: PluginCapacity = {
      PluginID: pluginId,
      Entries: entries,
      LastError: errors[0] ?? "",
      CreateIndex: 0,
      ModifyIndex: 0,
    };
    await this.store.txn((tx) => {
      if (tx.pluginSummary(pluginId)) tx.putPluginCapacity(record);
    });
    return true;
  }

  /** Deletes the records of plugins that no longer exist. */
  private async dropGone(): Promise<void> {
    const gone = this.store.listPluginCapacities().filter((c) => !this.store.pluginSummary(c.PluginID));
    if (gone.length === 0) return;
    await this.store.txn((tx) => {
      for (const c of gone) if (!tx.pluginSummary(c.PluginID)) tx.deletePluginCapacity(c.PluginID);
    });
  }

  /** Marks the plugins a committed txn may have changed the capacity or segments of. */
  private onCommit(txn: CommittedTxn): void {
    for (const c of txn.changes) {
      const id =
        c.table === "volumes"
          ? volumeChange(c.before as CSIVolume | undefined, c.record as CSIVolume | undefined)
          : c.table === "plugins"
            ? pluginChange(c.before as CSIPluginSummary | undefined, c.record as CSIPluginSummary | undefined)
            : undefined;
      if (id === undefined) continue;
      this.dirty.add(id);
      this.wake?.();
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    let due = this.clock.now();
    while (!signal.aborted) {
      try {
        const wait = due - this.clock.now();
        if (wait > 0 && this.dirty.size === 0) await this.idle(wait, signal);
        if (signal.aborted) return;
        if (this.clock.now() >= due) {
          this.dirty.clear();
          await this.pass(signal);
          due = this.clock.now() + this.opts.intervalMs;
        } else if (this.dirty.size > 0) {
          await this.clock.sleep(this.opts.refreshDelayMs, signal);
          const only = new Set(this.dirty);
          this.dirty.clear();
          await this.pass(signal, only);
        }
      } catch (err) {
        if (isAbortError(err) || signal.aborted) return;
        this.log.error("capacity pass failed", { error: err });
        due = this.clock.now() + this.opts.intervalMs;
      }
    }
  }

  /** Waits `ms`, or less when a change marks a plugin dirty; never rejects. */
  private async idle(ms: number, signal: AbortSignal): Promise<void> {
    const early = new AbortController();
    this.wake = () => early.abort();
    try {
      await this.clock.sleep(ms, AbortSignal.any([signal, early.signal]));
    } catch {
      // woken early or the term ended: the caller looks at which
    } finally {
      this.wake = undefined;
    }
  }
}

/** The plugin whose capacity a volume change moves: created, resized or deleted storage. */
function volumeChange(before: CSIVolume | undefined, after: CSIVolume | undefined): string | undefined {
  if (after && before && after.ExternalID === before.ExternalID && after.Capacity === before.Capacity) return;
  const v = after ?? before;
  return v && (v.ExternalID !== "" || before?.ExternalID) ? v.PluginID : undefined;
}

/** The plugin whose segments or controllers a plugin change may have moved. */
function pluginChange(
  before: CSIPluginSummary | undefined,
  after: CSIPluginSummary | undefined,
): string | undefined {
  if (!after) return undefined;
  if (
    before &&
    before.NodesHealthy === after.NodesHealthy &&
    before.ControllersHealthy === after.ControllersHealthy
  )
    return undefined;
  return after.ID;
}
