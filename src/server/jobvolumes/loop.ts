/**
 * The leader's loop for volumes from the jobspec (structs/job_volume_create.ts, issue 33).
 *
 * Create on first placement (WaitForFirstConsumer): for each live alloc placed on a node whose
 * group creates a volume (`Source`, or `Source[N]` for its index with PerAlloc) that does not
 * exist, the volume is created through `volume create`'s own path (rpc/volume_create.ts: the
 * volume's lock, a create intent recorded before CreateVolume, the record and the intent's removal
 * in one write), with a topology request for the alloc's node (firstConsumerTopology). So a create
 * is single-writer (the leader alone runs this loop, inside its term's fence, and the volume lock
 * serialises it with everything else on the volume) and idempotent: a crash or a lost leadership
 * mid-create leaves an intent under the same ID and name, and the next leader's create of that ID
 * repeats it — CSI's CreateVolume answers the same storage for the same name — and completes it.
 * Meanwhile the alloc's claim waits (rpc/job_volume_pending.ts). A failed create is retried after
 * `retryMs` (logged once per failure).
 *
 * Purge: a volume created with `OnPurge = "delete"` whose job no longer exists (purged or garbage
 * collected) is deleted through `volume delete`'s path once it has no claim at any stage and no
 * live alloc requests it (the delete itself re-checks under the volume's lock: never while claimed).
 * `retain` volumes stay as ordinary volumes (their CreatedBy says where they came from).
 *
 * Follows the store by deltas: the allocs put since the last pass (all of them at a term's start),
 * and the volumes put since then (to track the delete-on-purge ones); a pass runs on every change
 * of allocs, jobs or volumes, and at least every `intervalMs`.
 */
import { allocIndex, allocTaskGroup, isAllocTerminal } from "../../structs/alloc.js";
import { asBerthError } from "../../structs/errors.js";
import { createRequestsOf, createSpecFor } from "../../structs/job_volume_create.js";
import { volumeSourceForAlloc } from "../../structs/job.js";
import { ownEntry } from "../../structs/node.js";
import { isUnclaimed, type CSIVolume } from "../../structs/volume.js";
import { isAbortError, sleep } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import { withDefaults } from "../../internal/with_defaults.js";
import { volumeKey } from "../deps.js";
import type { StateStore } from "../state/store.js";

export interface JobVolumeOptions {
  /** The longest wait between passes when nothing changes (failed creates are retried then). */
  intervalMs: number;
  /** How long a failed create of one volume waits before it is tried again. */
  retryMs: number;
}

export const DEFAULT_JOB_VOLUME_OPTIONS: JobVolumeOptions = { intervalMs: 5_000, retryMs: 5_000 };

/** What the loop needs of the volume endpoint (rpc/volume.ts). */
export interface JobVolumeActions {
  create(vols: CSIVolume[], signal?: AbortSignal): Promise<unknown>;
  delete(
    namespace: string,
    id: string,
    secrets: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<unknown>;
}

export interface JobVolumePass {
  created: string[];
  deleted: string[];
  failed: string[];
}

export class JobVolumeLoop {
  private readonly opts: JobVolumeOptions;
  private ctl = new AbortController();
  private loop: Promise<void> | undefined;
  /** Index up to which allocs and volumes were read. */
  private seenIndex = 0;
  /** Volumes to create, by key: found in an alloc's change, kept until created or not needed. */
  private readonly toCreate = new Map<string, { allocId: string; notBefore: number }>();
  /** Keys of the volumes created with OnPurge "delete" (as far as the deltas told). */
  private readonly deleteOnPurge = new Map<string, { namespace: string; id: string }>();

  constructor(
    private readonly store: StateStore,
    private readonly volumes: JobVolumeActions,
    private readonly log: Logger,
    opts: Partial<JobVolumeOptions> = {},
    private readonly nowMs: () => number = Date.now,
  ) {
    this.opts = withDefaults(DEFAULT_JOB_VOLUME_OPTIONS, opts);
  }

  /** Starts the loop; it also ends when `term` aborts (leader/gate.ts). */
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

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const seen = this.store.index();
        await this.pass(signal);
        await this.store.waitFor(["allocs", "jobs", "volumes"], seen, signal, this.opts.intervalMs);
      } catch (err) {
        if (isAbortError(err) || signal.aborted) return;
        this.log.error("job volume pass failed", { error: err });
        await sleep(this.opts.intervalMs, signal).catch(() => undefined);
      }
    }
  }

  /** One pass: the creates due, then the deletes of purged jobs' volumes. */
  async pass(signal: AbortSignal = this.ctl.signal): Promise<JobVolumePass> {
    const upTo = this.store.index();
    this.takeChanges(this.seenIndex);
    this.seenIndex = upTo;
    const out: JobVolumePass = { created: [], deleted: [], failed: [] };
    for (const [key, want] of [...this.toCreate]) {
      if (signal.aborted) return out;
      if (want.notBefore > this.nowMs()) continue;
      const spec = this.specFor(want.allocId, key);
      if (!spec) {
        this.toCreate.delete(key);
        continue;
      }
      try {
        await this.volumes.create([spec], signal);
        this.toCreate.delete(key);
        if (spec.CreatedBy?.OnPurge === "delete") this.track(spec);
        out.created.push(spec.ID);
        this.log.info("volume created for its job", { volume: spec.ID, job: spec.CreatedBy?.JobID });
      } catch (err) {
        if (signal.aborted) return out;
        want.notBefore = this.nowMs() + this.opts.retryMs;
        out.failed.push(spec.ID);
        this.log.warn("creating a job's volume failed; retrying", {
          volume: spec.ID,
          job: spec.CreatedBy?.JobID,
          error: asBerthError(err).message,
        });
      }
    }
    for (const [key, where] of [...this.deleteOnPurge]) {
      if (signal.aborted) return out;
      const id = await this.deleteIfPurged(key, where, signal);
      if (id) out.deleted.push(id);
    }
    return out;
  }

  /** Takes in the allocs and volumes put since `index` (everything when 0). */
  private takeChanges(index: number): void {
    for (const id of this.store.allocsModifiedSince(index)) {
      const a = this.store.getAlloc(id);
      if (!a || isAllocTerminal(a) || a.NodeID === "") continue;
      const group = allocTaskGroup(a);
      for (const req of group ? createRequestsOf(group) : []) {
        const key = volumeKey(a.Namespace, volumeSourceForAlloc(req, allocIndex(a)));
        if (!this.toCreate.has(key)) this.toCreate.set(key, { allocId: a.ID, notBefore: 0 });
      }
    }
    for (const v of this.store.volumesModifiedSince(index)) {
      if (v.CreatedBy?.OnPurge === "delete") this.track(v);
    }
  }

  private track(v: Pick<CSIVolume, "Namespace" | "ID">): void {
    this.deleteOnPurge.set(volumeKey(v.Namespace, v.ID), { namespace: v.Namespace, id: v.ID });
  }

  /** The create spec for `key` when it is still wanted: the volume is missing and the alloc live. */
  private specFor(allocId: string, key: string): CSIVolume | undefined {
    const a = this.store.getAlloc(allocId);
    if (!a || isAllocTerminal(a)) return undefined;
    const group = allocTaskGroup(a);
    const req = (group ? createRequestsOf(group) : []).find(
      (r) => volumeKey(a.Namespace, volumeSourceForAlloc(r, allocIndex(a))) === key,
    );
    if (!group || !req) return undefined;
    if (this.store.getVolume(a.Namespace, volumeSourceForAlloc(req, allocIndex(a)))) return undefined;
    const node = this.store.getNode(a.NodeID);
    const plugin = node ? ownEntry(node.CSINodePlugins, req.Create.PluginID) : undefined;
    return createSpecFor(
      { ID: a.JobID, Namespace: a.Namespace },
      group.Name,
      req,
      allocIndex(a),
      plugin?.NodeInfo?.AccessibleTopology,
    );
  }

  /** Deletes the volume of `key` when its job is gone and nothing uses it; its ID when deleted. */
  private async deleteIfPurged(
    key: string,
    { namespace, id }: { namespace: string; id: string },
    signal: AbortSignal,
  ): Promise<string | undefined> {
    const vol = this.store.getVolume(namespace, id);
    if (!vol || vol.CreatedBy?.OnPurge !== "delete") {
      this.deleteOnPurge.delete(key);
      return undefined;
    }
    if (this.store.getJob(namespace, vol.CreatedBy.JobID)) return undefined;
    if (!isUnclaimed(vol)) return undefined;
    if (this.store.allocsByVolume(namespace, id).some((a) => !isAllocTerminal(a))) return undefined;
    try {
      await this.volumes.delete(namespace, id, {}, signal);
      this.deleteOnPurge.delete(key);
      this.log.info("volume deleted with its purged job", { volume: id, job: vol.CreatedBy.JobID });
      return id;
    } catch (err) {
      // Claimed meanwhile, or the plugin failed: the next pass tries again.
      if (!signal.aborted) {
        this.log.warn("deleting a purged job's volume failed; retrying", {
          volume: id,
          error: asBerthError(err).message,
        });
      }
      return undefined;
    }
  }
}
