/**
 * The orphan reconciler: on server start and every `intervalMs`, one pass reports every orphan — an interrupted create whose
 * storage the plugin may hold while no berth volume records it — as a warning in the server log,
 * once per orphan per server run (so each start reports what is still there), with the plugin's
 * unrecorded storage where its controller can list volumes. The report is also the API
 * (GET /v1/volumes/orphans, endpoint.ts); nothing is adopted or deleted without an operator.
 * A pass reads the intents table (small: one row per create in flight or interrupted) and lists
 * the volumes of the plugins that have orphans only.
 *
 * Fenced by the leader's term (leader/gate.ts): the loop ends when the term's signal aborts, and
 * a pass whose term's fence no longer holds lists nothing and reports nothing (its listings are
 * refused before they are sent: NodeConnections.call).
 */
import { isAbortError, sleep } from "../../internal/abort.js";
import { fenceRefusal } from "../../internal/fence.js";
import type { Logger } from "../../internal/log.js";
import { volumeKey } from "../deps.js";
import type { CSIVolumeOrphan } from "../../structs/volume_intent.js";
import { withDefaults } from "../../internal/with_defaults.js";

/** What a pass needs of the orphans (OrphanEndpoint.list). */
export interface OrphanLister {
  list(filter: { namespace?: string; pluginId?: string }, signal?: AbortSignal): Promise<CSIVolumeOrphan[]>;
}

export interface OrphanReconcilerOptions {
  /** Time between two passes after the first (at start). */
  intervalMs: number;
}

/** As often as Nomad's periodic CSI garbage collection (csi_volume_claim_gc_interval: 5 m). */
export const DEFAULT_ORPHAN_RECONCILER_OPTIONS: OrphanReconcilerOptions = { intervalMs: 5 * 60_000 };

export class OrphanReconciler {
  private readonly opts: OrphanReconcilerOptions;
  private ctl = new AbortController();
  private loop: Promise<void> | undefined;
  /** Orphans already reported by this server run, by `namespace/id`. */
  private readonly reported = new Set<string>();

  constructor(
    private readonly orphans: OrphanLister,
    private readonly log: Logger,
    opts: Partial<OrphanReconcilerOptions> = {},
  ) {
    this.opts = withDefaults(DEFAULT_ORPHAN_RECONCILER_OPTIONS, opts);
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

  /** One pass; answers how many orphans there are. */
  async pass(signal?: AbortSignal): Promise<number> {
    // A term already over (or stale) lists nothing: its listings would be refused anyway.
    if (signal?.aborted || fenceRefusal() !== undefined) return 0;
    const found = await this.orphans.list({}, signal);
    // A pass cut short by stop or by the term's fence: its listings failed for that reason alone,
    // nothing to report.
    if (signal?.aborted || fenceRefusal() !== undefined) return found.length;
    const now = new Set<string>();
    for (const o of found) {
      const key = volumeKey(o.Namespace, o.ID);
      now.add(key);
      if (this.reported.has(key)) continue;
      this.reported.add(key);
      this.log.warn("orphaned volume storage: a create was interrupted before berth recorded it", {
        volume: o.ID,
        namespace: o.Namespace,
        name: o.Name,
        plugin: o.PluginID,
        unrecorded_storage: o.UnrecordedStorage ?? `unknown (${o.ListError})`,
        resolve: `berth volume orphans -adopt ${o.ID} | -delete ${o.ID}`,
      });
    }
    for (const key of [...this.reported]) if (!now.has(key)) this.reported.delete(key);
    return found.length;
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.pass(signal);
      } catch (err) {
        if (isAbortError(err) || signal.aborted) return;
        this.log.warn("orphan reconciliation pass failed", { error: err });
      }
      try {
        await sleep(this.opts.intervalMs, signal);
      } catch {
        return;
      }
    }
  }
}
