/**
 * The volumewatcher (Nomad's name): reaps claims the server must release on its own — claims of
 * terminal or garbage-collected allocs, and of down or gone nodes — through the same checkpointed
 * release walk CSIVolume.Unpublish uses (ClaimReleaser), so a reaped claim goes through exactly the
 * persisted steps an unpublished one does. Runs on the server (the leader, once there are several).
 *
 * - Event-driven: blocks on the volumes/allocs/nodes table indexes; each wake re-scans the claimed
 *   volumes (coalesced to at most one scan per `scanIntervalMs`). A scan reads every volume, the
 *   allocs and nodes its claims name — O(claims), bounded by the coalescing, never per request.
 * - Resumable: it keeps nothing but timers in memory; a restarted server's first scan finds every
 *   unfinished release (the walk's checkpoints say where each one stopped).
 * - Rate-limited per volume: one run at a time per volume, at least `minIntervalMs` apart; runs of
 *   different volumes proceed in parallel.
 * - Never a tight error loop: a failed run is retried after a capped exponential backoff, from a
 *   timer, so it retries even when nothing in the store changes.
 * - Visible: a failed run records on the claim it was releasing which step failed (the controller
 *   unpublish, or the rest of the walk), the error and the next attempt (release_status.ts), one
 *   write per failed run; the walk clears it when the step succeeds.
 * - A release waiting for a controller (a claim's ControllerUnpublish with no live controller of
 *   its plugin to take it: it is never skipped) is retried as soon as a controller it had not seen
 *   registers, instead of at the end of its backoff.
 */
import { setMaxListeners } from "node:events";
import { backoffDelay } from "../../internal/backoff.js";
import { isAbortError, sleep } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import { asBerthError } from "../../structs/errors.js";
import { findClaim, needsControllerUnpublish, unpublishPluginOf } from "../../structs/claim.js";
import { isUnclaimed, type ClaimState, type VolumeClaim } from "../../structs/volume.js";
import { volumeKey } from "../deps.js";
import type { StateStore, Table } from "../state/store.js";
import { nodeIsGone, volumeWork } from "./decide.js";
import { recordReleaseStatus } from "./release_status.js";

/** The release walk, as the watcher needs it (ClaimEndpoint.releaseClaim). */
export interface ClaimReleaser {
  releaseClaim(
    namespace: string,
    req: { VolumeID: string; AllocationID: string; NodeID: string },
    reported: ClaimState,
    signal?: AbortSignal,
  ): Promise<boolean>;
}

export interface VolumeWatcherOptions {
  /** Least time between two scans (coalesces bursts of writes). */
  scanIntervalMs: number;
  /** Least time between two release runs of one volume. */
  minIntervalMs: number;
  /** Backoff after a failed run: base·2^n, capped. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /**
   * How long a claim of a finished alloc may wait on a live node before the watcher warns. It keeps
   * waiting after that: the node step (unmount) can only be done on the node, and releasing the
   * claim without it would let another node attach a volume that is still mounted here — the
   * double attach the claim exists to prevent. Only a node that goes down loses its claims.
   */
  nodeGraceMs: number;
}

export const DEFAULT_VOLUME_WATCHER_OPTIONS: VolumeWatcherOptions = {
  scanIntervalMs: 100,
  minIntervalMs: 100,
  backoffBaseMs: 500,
  backoffMaxMs: 60_000,
  nodeGraceMs: 5 * 60_000,
};

const WATCHED: readonly Table[] = ["volumes", "allocs", "nodes"];
/** Longest a blocking wait lasts before an unprompted re-scan (a safety net, not the mechanism). */
const MAX_WAIT_MS = 5 * 60_000;

interface VolumeState {
  namespace: string;
  id: string;
  running: boolean;
  /** Asked to run again while running. */
  again: boolean;
  timer: NodeJS.Timeout | undefined;
  failures: number;
  /** Earliest time the next run may start. */
  notBefore: number;
  /**
   * The plugin whose controller the last failed run waited for (no controller could take its
   * ControllerUnpublishVolume), and the attach-capable controllers it had then: a scan that finds
   * a new one (a replacement, or one back from a restart) runs the volume at once instead of at the
   * end of its backoff. Only a new one: one that was listed but unreachable (its node not yet
   * marked down) must not turn the backoff into a loop.
   */
  awaitController: { pluginId: string; seen: Set<string> } | undefined;
}

export class VolumeWatcher {
  private readonly opts: VolumeWatcherOptions;
  private readonly volumes = new Map<string, VolumeState>();
  private readonly runs = new Set<Promise<void>>();
  /** `volumeKey/allocId` → when the watcher first saw the claim waiting on its live node. */
  private readonly waitingSince = new Map<string, { since: number; warned: boolean }>();
  private ctl = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly releaser: ClaimReleaser,
    private readonly log: Logger,
    opts: Partial<VolumeWatcherOptions> = {},
  ) {
    this.opts = { ...DEFAULT_VOLUME_WATCHER_OPTIONS, ...opts };
  }

  start(): void {
    if (this.loop) return;
    this.ctl = new AbortController();
    // One listener per volume whose release waits for that volume's lock: many at once is normal.
    setMaxListeners(0, this.ctl.signal);
    this.loop = this.watch(this.ctl.signal);
  }

  /** Stops scanning, cancels in-flight releases (their checkpoints stay) and waits for them. */
  async stop(): Promise<void> {
    this.ctl.abort();
    for (const v of this.volumes.values()) clearTimeout(v.timer);
    await this.loop;
    await Promise.allSettled([...this.runs]);
    this.volumes.clear();
    this.loop = undefined;
  }

  private async watch(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const seen = Math.max(...WATCHED.map((t) => this.store.tableIndex(t)));
      try {
        this.scan();
      } catch (err) {
        this.log.error("volumewatcher scan failed", { error: err });
      }
      try {
        await this.store.waitFor(WATCHED, seen, signal, MAX_WAIT_MS);
        await sleep(this.opts.scanIntervalMs, signal);
      } catch (err) {
        if (!isAbortError(err)) this.log.error("volumewatcher wait failed", { error: err });
        if (!signal.aborted) await sleep(this.opts.backoffBaseMs, signal).catch(() => undefined);
      }
    }
  }

  /** Finds volumes with claims to release and schedules a run for each. */
  private scan(): void {
    const allocs = new Map<string, ReturnType<StateStore["getAlloc"]>>();
    const nodes = new Map<string, ReturnType<StateStore["getNode"]>>();
    const allocOf = (id: string) => {
      if (!allocs.has(id)) allocs.set(id, this.store.getAlloc(id));
      return allocs.get(id);
    };
    const nodeOf = (id: string) => {
      if (!nodes.has(id)) nodes.set(id, this.store.getNode(id));
      return nodes.get(id);
    };
    const stillWaiting = new Set<string>();
    const now = Date.now();
    for (const vol of this.store.listVolumes()) {
      // One volume the scan cannot read is logged and skipped; the others are still reaped.
      try {
        if (isUnclaimed(vol)) continue;
        const key = volumeKey(vol.Namespace, vol.ID);
        const work = volumeWork(vol, allocOf, nodeOf);
        for (const claim of work.waiting) {
          const k = `${key}/${claim.AllocationID}`;
          stillWaiting.add(k);
          this.noteWaiting(k, vol.ID, claim, now);
        }
        if (work.release.length > 0) {
          this.wakeIfControllerBack(key);
          this.schedule(vol.Namespace, vol.ID);
        }
      } catch (err) {
        this.log.error("volumewatcher could not scan a volume", {
          volume: vol.ID,
          namespace: vol.Namespace,
          error: err,
        });
      }
    }
    for (const k of this.waitingSince.keys()) if (!stillWaiting.has(k)) this.waitingSince.delete(k);
    // Idle volumes are forgotten once their rate-limit window has passed: the map holds only
    // volumes with work running, queued or recently done.
    for (const [k, v] of this.volumes) {
      if (!v.running && !v.timer && v.failures === 0 && v.notBefore <= now) this.volumes.delete(k);
    }
  }

  private noteWaiting(k: string, volumeId: string, claim: VolumeClaim, now: number): void {
    const w = this.waitingSince.get(k);
    if (!w) {
      this.waitingSince.set(k, { since: now, warned: false });
      return;
    }
    if (!w.warned && now - w.since >= this.opts.nodeGraceMs) {
      w.warned = true;
      this.log.warn(
        "a finished allocation's volume is still attached on its live node; waiting for the node agent to unmount it",
        {
          volume: volumeId,
          alloc: claim.AllocationID,
          node: claim.NodeID,
          waiting_ms: now - w.since,
        },
      );
    }
  }

  /**
   * Records on the claim which server step failed: ControllerUnpublishVolume when the volume needs
   * it and the claim is before it, otherwise the rest of the walk. Best effort: a failed write is
   * logged, and the next failed run writes again.
   */
  private async recordFailure(
    v: VolumeState,
    claim: VolumeClaim,
    error: string,
    nextAttemptMs: number,
  ): Promise<void> {
    const vol = this.store.getVolume(v.namespace, v.id);
    const now = vol && findClaim(vol, claim.AllocationID);
    if (!vol || !now) return;
    const beforeController =
      now.State === "node-detached" || (now.State === "taken" && nodeIsGone(this.store.getNode(now.NodeID)));
    // As the walk decides (nextReleaseStep): the claim's own ControllerPublish record, whatever the
    // plugin looks like now (its controller may be down), or the plugin requiring the controller.
    // The stored record's ControllerRequired is not filled in: read the plugin's.
    const pluginRequires = this.store.pluginSummary(vol.PluginID)?.ControllerRequired ?? false;
    const controller = needsControllerUnpublish({ ...vol, ControllerRequired: pluginRequires }, now);
    try {
      await recordReleaseStatus(this.store, {
        namespace: v.namespace,
        volumeId: v.id,
        allocId: claim.AllocationID,
        step: controller && beforeController ? "controller-unpublish" : "server-release",
        lastError: error,
        attempts: v.failures,
        nextAttemptMs,
      });
    } catch (err) {
      this.log.warn("could not record a claim's release status", { volume: v.id, error: err });
    }
  }

  /** Cuts the backoff short of a volume whose release waited for a controller that is now live. */
  private wakeIfControllerBack(key: string): void {
    const v = this.volumes.get(key);
    const wait = v?.awaitController;
    if (!v || !wait || !v.timer) return;
    if (!this.attachControllers(wait.pluginId).some((n) => !wait.seen.has(n))) return;
    clearTimeout(v.timer);
    v.timer = undefined;
    v.notBefore = 0;
    v.awaitController = undefined;
  }

  private schedule(namespace: string, id: string): void {
    if (this.ctl.signal.aborted) return;
    const key = volumeKey(namespace, id);
    let v = this.volumes.get(key);
    if (!v) {
      v = {
        namespace,
        id,
        running: false,
        again: false,
        timer: undefined,
        failures: 0,
        notBefore: 0,
        awaitController: undefined,
      };
      this.volumes.set(key, v);
    }
    if (v.running) {
      v.again = true;
      return;
    }
    if (v.timer) return;
    const state = v;
    state.timer = setTimeout(
      () => {
        state.timer = undefined;
        this.track(this.run(state));
      },
      Math.max(0, v.notBefore - Date.now()),
    );
  }

  /** Nodes with a healthy controller of the plugin that supports attach/detach. */
  private attachControllers(pluginId: string): string[] {
    const controllers = this.store.healthyPluginInstances(pluginId, "controller");
    return [...controllers]
      .filter(([, c]) => c.ControllerInfo?.SupportsAttachDetach === true)
      .map(([nodeId]) => nodeId);
  }

  /** What the volume's release waits for when `claim`'s ControllerUnpublish found no controller. */
  private controllerWait(v: VolumeState, claim: VolumeClaim | undefined): VolumeState["awaitController"] {
    const vol = this.store.getVolume(v.namespace, v.id);
    const now = vol && claim && findClaim(vol, claim.AllocationID);
    if (!vol || !now) return undefined;
    const pluginId = unpublishPluginOf(vol, now);
    return { pluginId, seen: new Set(this.attachControllers(pluginId)) };
  }

  /** Keeps a release run until it settles (stop() awaits it); a failure is logged, never unhandled. */
  private track(run: Promise<void>): void {
    const p: Promise<void> = run
      .catch((err: unknown) => this.log.error("volumewatcher run failed", { error: err }))
      .finally(() => this.runs.delete(p));
    this.runs.add(p);
  }

  /** Releases every claim of the volume the watcher should release, one after another. */
  private async run(v: VolumeState): Promise<void> {
    const signal = this.ctl.signal;
    v.running = true;
    v.again = false;
    let failed = false;
    /** The claim being released when a failure comes: the one whose status records it. */
    let current: VolumeClaim | undefined;
    try {
      const vol = this.store.getVolume(v.namespace, v.id);
      const work = vol
        ? volumeWork(
            vol,
            (id) => this.store.getAlloc(id),
            (id) => this.store.getNode(id),
          )
        : { release: [], waiting: [] };
      for (const claim of work.release) {
        if (signal.aborted) return;
        current = claim;
        const freed = await this.releaser.releaseClaim(
          v.namespace,
          { VolumeID: v.id, AllocationID: claim.AllocationID, NodeID: claim.NodeID },
          "taken",
          signal,
        );
        this.log.info("volumewatcher released a claim", {
          volume: v.id,
          namespace: v.namespace,
          alloc: claim.AllocationID,
          node: claim.NodeID,
          freed,
        });
      }
      v.failures = 0;
      v.awaitController = undefined;
    } catch (err) {
      if (signal.aborted) return;
      failed = true;
      const e = asBerthError(err);
      v.awaitController =
        e.code === "ERR_CSI_PLUGIN_UNAVAILABLE" ? this.controllerWait(v, current) : undefined;
      const delay = backoffDelay(v.failures, this.opts.backoffBaseMs, this.opts.backoffMaxMs);
      v.failures++;
      v.notBefore = Date.now() + delay;
      this.log.warn("volumewatcher could not release a claim; retrying", {
        volume: v.id,
        namespace: v.namespace,
        code: e.code,
        error: e.message,
        retry_in_ms: delay,
        failures: v.failures,
      });
      if (current) await this.recordFailure(v, current, e.message, v.notBefore);
    } finally {
      v.running = false;
      if (!failed) v.notBefore = Date.now() + this.opts.minIntervalMs;
    }
    if (signal.aborted) return;
    if (failed || v.again) this.schedule(v.namespace, v.id);
  }
}
