/**
 * The volumewatcher (Nomad's name): reaps claims the server must release on its own — claims of
 * terminal or garbage-collected allocs, and of down or gone nodes — through the same checkpointed
 * release walk CSIVolume.Unpublish uses (ClaimReleaser), so a reaped claim goes through exactly the
 * persisted steps an unpublished one does. Runs on the server (the leader, once there are several).
 *
 * - Event-driven and by deltas: blocks on the volumes/allocs/nodes table indexes; each wake runs
 *   one pass (coalesced to at most one per `scanIntervalMs`) that reads only what changed since the
 *   last pass (the store's ChangeReader): the volumes written since, and the volumes whose claims
 *   name an alloc or a node written since (found in memory, claim_index.ts). A pass costs
 *   O(changed · log n), never a read of every volume: 50,000 unclaimed volumes cost it nothing.
 * - Resumable: the first pass after start reads every volume once, so a restarted server finds
 *   every unfinished release (the walk's checkpoints say where each one stopped) and rebuilds the
 *   claim index; everything else in memory is timers.
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
import type { CSIVolume, VolumeClaim } from "../../structs/volume.js";
import { volumeKey } from "../deps.js";
import type { StateStore, Table } from "../state/store.js";
import { ClaimIndex } from "./claim_index.js";
import { Lookups } from "./lookups.js";
import { nodeIsGone, volumeWork } from "./decide.js";
import { recordReleaseStatus } from "./release_status.js";
import { WaitingClaims } from "./waiting.js";
import { ClaimCensus } from "./claim_census.js";
import {
  DEFAULT_VOLUME_WATCHER_OPTIONS,
  type ClaimReleaser,
  type VolumeWatcherOptions,
} from "./watcher_options.js";

export {
  DEFAULT_VOLUME_WATCHER_OPTIONS,
  type ClaimReleaser,
  type VolumeWatcherOptions,
} from "./watcher_options.js";

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
  /** Claims of finished allocs waiting on their live node, and since when. */
  private readonly waiting = new WaitingClaims();
  /** The volumes with claims, by the allocs and nodes they name. */
  private readonly claims = new ClaimIndex();
  /** Claim counts for metrics, kept by the same reads (claim_census.ts). */
  readonly census = new ClaimCensus();
  /** The store index the last pass read up to; -1 before the first (full) pass. */
  private readIndex = -1;
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
    this.claims.clear();
    this.census.clear();
    this.waiting.clear();
    this.readIndex = -1;
    this.loop = undefined;
  }

  private async watch(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const seen = Math.max(...WATCHED.map((t) => this.store.tableIndex(t)));
      try {
        this.pass();
      } catch (err) {
        this.log.error("volumewatcher pass failed", { error: err });
      }
      try {
        // Wake for a write, or when a waiting claim's warning falls due.
        const warnAt = this.waiting.nextDue(this.opts.nodeGraceMs);
        const wait = warnAt === undefined ? MAX_WAIT_MS : Math.min(MAX_WAIT_MS, warnAt - Date.now());
        if (wait > 0) await this.store.waitFor(WATCHED, seen, signal, wait);
        await sleep(this.opts.scanIntervalMs, signal);
      } catch (err) {
        if (!isAbortError(err)) this.log.error("volumewatcher wait failed", { error: err });
        if (!signal.aborted) await sleep(this.opts.backoffBaseMs, signal).catch(() => undefined);
      }
    }
  }

  /**
   * One pass: the first reads every volume; the next ones only the volumes written since the last
   * pass and those whose claims name an alloc or node written since, plus those with a wait whose
   * warning fell due. Each is sorted by volumeWork and its releases scheduled. The reads are one
   * synchronous stretch (no write lands between them), so `upTo` is exactly the index they saw.
   */
  private pass(): void {
    const since = this.readIndex;
    const upTo = this.store.index();
    const now = Date.now();
    const lookups = new Lookups(this.store);
    if (since < 0) {
      for (const vol of this.store.listVolumes()) this.examine(vol, lookups, now);
    } else {
      const seen = new Set<string>();
      for (const vol of this.store.volumesModifiedSince(since)) {
        seen.add(volumeKey(vol.Namespace, vol.ID));
        this.examine(vol, lookups, now);
      }
      const nodes = this.store.nodesModifiedSince(since);
      const keys = new Set([
        ...this.claims.ofAllocs(this.store.allocsModifiedSince(since)),
        ...this.claims.ofNodes(nodes),
        ...this.waiting.due(now, this.opts.nodeGraceMs),
      ]);
      for (const key of keys) {
        if (seen.has(key)) continue;
        const at = this.claims.get(key);
        const vol = at && this.store.getVolume(at.namespace, at.id);
        if (vol) this.examine(vol, lookups, now);
        else this.forget(key);
      }
      // A node written may be a controller back: releases waiting for one need not wait out their backoff.
      if (nodes.length > 0) {
        for (const [key, v] of this.volumes)
          if (this.wakeIfControllerBack(key)) this.schedule(v.namespace, v.id);
      }
    }
    // Only a pass that got here moves on: one that threw is read again, from the same index.
    this.readIndex = upTo;
    // Idle volumes are forgotten once their rate-limit window has passed: the map holds only
    // volumes with work running, queued or recently done.
    for (const [k, v] of this.volumes) {
      if (!v.running && !v.timer && v.failures === 0 && v.notBefore <= now) this.volumes.delete(k);
    }
  }

  /** Sorts one volume's claims: schedules its releases, notes its waits. */
  private examine(vol: CSIVolume, lookups: Lookups, now: number): void {
    const key = volumeKey(vol.Namespace, vol.ID);
    // One volume the pass cannot read is logged and skipped; the others are still reaped.
    try {
      this.claims.set(key, vol);
      if (!this.claims.get(key)) {
        this.waiting.forget(key);
        // Unclaimed: only the controller's condition still counts for metrics (the node's usage
        // figures are of claimed volumes only, as they were before the condition existed).
        this.census.set(key, { ...vol, Usage: null }, [], now);
        return;
      }
      const work = volumeWork(vol, lookups.alloc, lookups.node);
      this.census.set(key, vol, [...work.release, ...work.waiting], now);
      for (const { claim, waitingMs } of this.waiting.note(key, work.waiting, now, this.opts.nodeGraceMs)) {
        this.log.warn(
          "a finished allocation's volume is still attached on its live node; waiting for the node agent to unmount it",
          { volume: vol.ID, alloc: claim.AllocationID, node: claim.NodeID, waiting_ms: waitingMs },
        );
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

  private forget(key: string): void {
    this.claims.forget(key);
    this.census.forget(key);
    this.waiting.forget(key);
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
  private wakeIfControllerBack(key: string): boolean {
    const v = this.volumes.get(key);
    const wait = v?.awaitController;
    if (!v || !wait || !v.timer) return false;
    if (!this.attachControllers(wait.pluginId).some((n) => !wait.seen.has(n))) return false;
    clearTimeout(v.timer);
    v.timer = undefined;
    v.notBefore = 0;
    v.awaitController = undefined;
    return true;
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
