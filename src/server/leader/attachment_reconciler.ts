/**
 * The leader's attachment reconciler (issue 33 item 4; Nomad #12346, #15415, #24130): berth's claims
 * and the storage provider's attachments drift apart — a freed claim whose ControllerUnpublish never
 * happened leaves the volume attached to a node nobody uses (and a single-node volume then refuses
 * every other node: "published to another node"); a provider that lost an attachment leaves a
 * running alloc on storage the provider thinks detached. Every `intervalMs`, and at once for a
 * plugin whose ControllerPublish a claim saw refused with FAILED_PRECONDITION or RESOURCE_EXHAUSTED
 * (attachment_hints.ts), for each plugin with a healthy controller instance that advertises
 * LIST_VOLUMES, LIST_VOLUMES_PUBLISHED_NODES and PUBLISH_UNPUBLISH_VOLUME:
 *
 * 1. the provider's whole listing (attachment_listing.ts, every page); a plugin whose listing fails
 *    or is partial is skipped with a logged reason and changes nothing;
 * 2. per berth volume of the plugin the provider lists, the pure decision (attachment_decide.ts);
 * 3. a volume with something to correct is corrected under its lock (attachment_correct.ts): the
 *    same per-volume serialisation as claims, releases and the volumewatcher, so it never races
 *    them; one written since the listing began is left for the next pass.
 *
 * Every correction is recorded on the volume (a CSIVolumeAttachmentReconciled event) and counted
 * (`berth.server.volume.attachment_reconcile.corrections` {plugin_id, action, outcome}); a skipped
 * plugin is counted in `…attachment_reconcile.skipped` {plugin_id, reason}. `dryRun` reports and
 * records what it would do and calls nothing.
 *
 * Fenced by the leader's term (leader/gate.ts): the loop ends when the term's signal aborts, and a
 * call refused ERR_FENCED ends the pass.
 */
import { isAbortError } from "../../internal/abort.js";
import type { KeyedMutex } from "../../internal/keyed_mutex.js";
import type { Logger } from "../../internal/log.js";
import type { Telemetry } from "../../internal/metrics/telemetry.js";
import { withDefaults } from "../../internal/with_defaults.js";
import type { ControllerClient } from "../clientconn/controller.js";
import { volumeKey } from "../deps.js";
import type { StateStore } from "../state/store.js";
import { volumeListView } from "../state/views.js";
import { claimFacts, correctVolume, type Correction, type CorrectionContext } from "./attachment_correct.js";
import { decideAttachments } from "./attachment_decide.js";
import type { PublishRefusals } from "./attachment_hints.js";
import { listPublished } from "./attachment_listing.js";

export interface AttachmentReconcileOptions {
  /** Time between scheduled passes (the first one interval after the loop starts). */
  intervalMs: number;
  /** Report and record what would be corrected; call nothing. */
  dryRun: boolean;
  /** ListVolumes page size, and the most pages a listing may take before it counts as partial. */
  pageSize: number;
  maxPages: number;
  /** Deadline of one controller call, and how long a correction's retryable failures are retried. */
  callTimeoutMs: number;
  callRetryMs: number;
}

/** As often as Nomad's periodic CSI claim GC (csi_volume_claim_gc_interval: 5 m). */
export const DEFAULT_ATTACHMENT_RECONCILE_OPTIONS: AttachmentReconcileOptions = {
  intervalMs: 5 * 60_000,
  dryRun: false,
  pageSize: 500,
  maxPages: 200,
  callTimeoutMs: 30_000,
  callRetryMs: 5_000,
};

export interface ReconcileResult {
  plugins: number;
  /** Plugins left alone this pass, with why (the listing failed or was partial). */
  skipped: { pluginId: string; code: string; reason: string }[];
  corrections: Correction[];
  /** Volumes left for the next pass: written since the listing began. */
  changed: number;
}

export class AttachmentReconciler {
  private readonly opts: AttachmentReconcileOptions;
  private ctl = new AbortController();
  private loop: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Plugins to reconcile at once (a claim saw their ControllerPublish refused). */
  private readonly pending = new Set<string>();
  private wake: (() => void) | undefined;
  private readonly counters;

  constructor(
    private readonly store: StateStore,
    private readonly controllers: Pick<ControllerClient, "call">,
    private readonly locks: Pick<KeyedMutex, "run">,
    private readonly log: Logger,
    opts: Partial<AttachmentReconcileOptions> = {},
    private readonly refusals?: PublishRefusals,
    telemetry?: Telemetry,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.opts = withDefaults(DEFAULT_ATTACHMENT_RECONCILE_OPTIONS, opts);
    this.counters = telemetry && {
      corrections: telemetry.counter(
        ["server", "volume", "attachment_reconcile", "corrections"],
        "Attachments the reconciler corrected (or reported, in dry run) between berth's claims and the storage provider.",
        ["plugin_id", "action", "outcome"],
      ),
      skipped: telemetry.counter(
        ["server", "volume", "attachment_reconcile", "skipped"],
        "Plugins the attachment reconciler skipped in a pass (their volume listing failed or was partial).",
        ["plugin_id", "reason"],
      ),
    };
  }

  /** Starts the loop; it also ends when `term` aborts (the leader's term ended: leader/gate.ts). */
  start(term?: AbortSignal): void {
    if (this.loop) return;
    this.ctl = new AbortController();
    const signal = term ? AbortSignal.any([this.ctl.signal, term]) : this.ctl.signal;
    this.unsubscribe = this.refusals?.subscribe((pluginId) => this.poke(pluginId));
    this.loop = this.run(signal);
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.ctl.abort();
    this.wake?.();
    await this.loop;
    this.loop = undefined;
  }

  /** Reconcile `pluginId` as soon as the loop can (a claim saw its ControllerPublish refused). */
  poke(pluginId: string): void {
    this.pending.add(pluginId);
    this.wake?.();
  }

  /** The plugins to reconcile: a healthy controller instance can list published nodes and attach. */
  qualifyingPlugins(): string[] {
    return this.store
      .listPlugins()
      .filter((p) => p.ControllersHealthy > 0)
      .map((p) => p.ID)
      .filter((id) =>
        [...this.store.healthyPluginInstances(id, "controller").values()].some((info) => {
          const c = info.ControllerInfo;
          return c?.SupportsListVolumes && c.SupportsListVolumesAttachedNodes && c.SupportsAttachDetach;
        }),
      );
  }

  /** One pass over `only` (those of them that qualify), or every qualifying plugin. */
  async pass(signal: AbortSignal = this.ctl.signal, only?: readonly string[]): Promise<ReconcileResult> {
    const result: ReconcileResult = { plugins: 0, skipped: [], corrections: [], changed: 0 };
    const plugins = this.qualifyingPlugins().filter((p) => !only || only.includes(p));
    for (const pluginId of plugins) {
      if (signal.aborted) break;
      result.plugins++;
      if (!(await this.reconcilePlugin(pluginId, result, signal))) break;
    }
    return result;
  }

  /** One plugin; false when the pass must end (the term is over). */
  private async reconcilePlugin(
    pluginId: string,
    result: ReconcileResult,
    signal: AbortSignal,
  ): Promise<boolean> {
    const listedAt = this.store.index();
    const listing = await listPublished(this.controllers, pluginId, this.opts, signal);
    if (!listing.ok) {
      if (signal.aborted || listing.code === "ERR_FENCED") return false;
      result.skipped.push({ pluginId, code: listing.code, reason: listing.reason });
      this.counters?.skipped.inc({ plugin_id: pluginId, reason: listing.code });
      this.log.warn("attachment reconcile skipped a plugin: its volume listing failed; nothing changed", {
        plugin: pluginId,
        code: listing.code,
        reason: listing.reason,
      });
      return true;
    }
    const ctx: CorrectionContext = {
      store: this.store,
      controllers: this.controllers,
      nowMs: this.nowMs,
      ...this.opts,
    };
    const facts = claimFacts(this.store);
    for (const vol of volumeListView(this.store, { pluginId })) {
      const published = listing.published.get(vol.ExternalID);
      // Not listed: the provider lost the volume itself (the condition poll's business), or it is
      // not the provider's at all. Nothing is decided about a volume the list does not show.
      if (published === undefined || vol.ExternalID === "") continue;
      if (decideAttachments(vol, published, facts).length === 0) continue;
      if (vol.ModifyIndex > listedAt) {
        result.changed++;
        continue;
      }
      const ref = { namespace: vol.Namespace, id: vol.ID, externalId: vol.ExternalID };
      const outcome = await this.locks.run(
        volumeKey(vol.Namespace, vol.ID),
        () => correctVolume(ctx, ref, published, listedAt, signal),
        signal,
      );
      if (outcome.kind === "changed") {
        result.changed++;
        continue;
      }
      for (const c of outcome.corrections) this.report(pluginId, vol.Namespace, vol.ID, c);
      result.corrections.push(...outcome.corrections);
      if (signal.aborted || outcome.corrections.some((c) => c.code === "ERR_FENCED")) return false;
    }
    return true;
  }

  private report(pluginId: string, namespace: string, volumeId: string, c: Correction): void {
    this.counters?.corrections.inc({ plugin_id: pluginId, action: c.action, outcome: c.outcome });
    const fields = {
      plugin: pluginId,
      namespace,
      volume: volumeId,
      action: c.action,
      node: c.externalNodeId,
    };
    if (c.outcome === "failed")
      this.log.warn("attachment correction failed; the next pass retries", { ...fields, error: c.message });
    else
      this.log.info(`attachment ${c.outcome === "dry-run" ? "drift found (dry run)" : "corrected"}`, {
        ...fields,
        detail: c.message,
      });
  }

  private async run(signal: AbortSignal): Promise<void> {
    let next = this.nowMs() + this.opts.intervalMs;
    while (!signal.aborted) {
      await this.until(next, signal);
      if (signal.aborted) return;
      const scheduled = this.nowMs() >= next;
      const only = scheduled ? undefined : [...this.pending];
      this.pending.clear();
      try {
        await this.pass(signal, only);
      } catch (err) {
        if (isAbortError(err) || signal.aborted) return;
        this.log.error("attachment reconcile pass failed", { error: err });
      }
      if (scheduled) next = this.nowMs() + this.opts.intervalMs;
    }
  }

  /** Resolves at `atMs`, on a poke, or when `signal` aborts. */
  private until(atMs: number, signal: AbortSignal): Promise<void> {
    if (this.pending.size > 0 || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, atMs - this.nowMs()));
      signal.addEventListener("abort", done, { once: true });
      this.wake = done;
    });
  }
}
