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
 * - Fence hold (decide.ts): single-writer claims of a down node are held until this watcher has
 *   seen the node down for the claim's fence bound (down_clock.ts, fence_holds.ts), shown on the
 *   claim (visible_waits.ts); the watcher wakes itself when a hold ends.
 * - Unused claims (decide.ts, orphans.ts): a claim of an ended alloc that waits on its live node
 *   past the orphan grace is asked about (ClientCSI.NodeVolumeState through the releaser); when
 *   the node holds nothing of it, it is released without the node step, shown and logged.
 */
import { setMaxListeners } from "node:events";
import { performance } from "node:perf_hooks";
import { anySignal, isAbortError, sleep } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import { asBerthError } from "../../structs/errors.js";
import { nodeHoldsNothing } from "../../structs/rpc_volume_state.js";
import type { CSIVolume } from "../../structs/volume.js";
import { volumeKey } from "../deps.js";
import type { StateStore, Table } from "../state/store.js";
import { ClaimIndex } from "./claim_index.js";
import { Lookups } from "./lookups.js";
import { fenceHoldMsOf, volumeWork, type WorkInputs } from "./decide.js";
import { NodeDownClock } from "./down_clock.js";
import { FenceHolds } from "./fence_holds.js";
import { OrphanChecks, type OrphanRef } from "./orphans.js";
import { ReleaseRuns, type ReleaseWork } from "./release_runs.js";
import { showFenceHold } from "./visible_waits.js";
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
import { withDefaults } from "../../internal/with_defaults.js";

const WATCHED: readonly Table[] = ["volumes", "allocs", "nodes"];
/** Longest a blocking wait lasts before an unprompted re-scan (a safety net, not the mechanism). */
const MAX_WAIT_MS = 5 * 60_000;

export class VolumeWatcher {
  private readonly opts: VolumeWatcherOptions;
  /** The release runs, per volume (release_runs.ts). */
  private readonly runs: ReleaseRuns;
  /** Claims of finished allocs waiting on their live node, and since when. */
  private readonly waiting = new WaitingClaims();
  /** The volumes with claims, by the allocs and nodes they name. */
  private readonly claims = new ClaimIndex();
  /** Claim counts for metrics, kept by the same reads (claim_census.ts). */
  readonly census = new ClaimCensus();
  /** Since when this watcher has seen each node down (monotonic), and the claims it holds for that. */
  private readonly downClock = new NodeDownClock();
  private readonly holds = new FenceHolds();
  /** Claims of ended allocs on live nodes, and what their node answered about them. */
  private readonly orphans: OrphanChecks;
  /** Cuts the watch loop's wait short (an answer moved the next wake-up). */
  private nudge: AbortController | undefined;
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
    this.opts = withDefaults(DEFAULT_VOLUME_WATCHER_OPTIONS, opts);
    this.orphans = new OrphanChecks({
      graceMs: this.opts.orphanGraceMs,
      recheckMs: this.opts.orphanRecheckMs,
    });
    this.runs = new ReleaseRuns({
      store,
      releaser,
      log,
      opts: this.opts,
      work: (ns, id) => this.work(ns, id),
    });
  }

  start(): void {
    if (this.loop) return;
    this.ctl = new AbortController();
    // One listener per volume whose release waits for that volume's lock: many at once is normal.
    setMaxListeners(0, this.ctl.signal);
    this.runs.start(this.ctl.signal);
    this.loop = this.watch(this.ctl.signal);
  }

  /** Stops scanning, cancels in-flight releases (their checkpoints stay) and waits for them. */
  async stop(): Promise<void> {
    this.ctl.abort();
    await this.loop;
    await this.runs.stop();
    this.claims.clear();
    this.census.clear();
    this.waiting.clear();
    this.downClock.clear();
    this.holds.clear();
    this.orphans.clear();
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
        await this.idle(seen, signal);
        await sleep(this.opts.scanIntervalMs, signal);
      } catch (err) {
        if (!isAbortError(err)) this.log.error("volumewatcher wait failed", { error: err });
        if (!signal.aborted) await sleep(this.opts.backoffBaseMs, signal).catch(() => undefined);
      }
    }
  }

  /**
   * Waits for a write, or until a waiting claim's warning falls due, a fence hold ends or a node
   * question is due, or a nudge (an answer that moved those).
   */
  private async idle(seen: number, signal: AbortSignal): Promise<void> {
    const nowMs = Date.now();
    const mono = performance.now();
    const warnAt = this.waiting.nextDue(this.opts.nodeGraceMs);
    const due = [
      warnAt === undefined ? undefined : warnAt - nowMs,
      dueIn(this.holds.nextDue(), mono),
      dueIn(this.orphans.nextDue(), mono),
    ].filter((d): d is number => d !== undefined);
    const wait = Math.min(MAX_WAIT_MS, ...due);
    if (wait <= 0) return;
    const nudge = new AbortController();
    this.nudge = nudge;
    try {
      await this.store.waitFor(WATCHED, seen, anySignal([signal, nudge.signal]), Math.ceil(wait));
    } catch (err) {
      if (signal.aborted || !nudge.signal.aborted) throw err;
    } finally {
      this.nudge = undefined;
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
    const mono = performance.now();
    const lookups = new Lookups(this.store);
    if (since < 0) {
      for (const vol of this.store.listVolumes()) this.examine(vol, lookups, now, mono);
    } else {
      const nodes = this.store.nodesModifiedSince(since);
      this.downClock.refresh(nodes, lookups.node);
      const seen = new Set<string>();
      for (const vol of this.store.volumesModifiedSince(since)) {
        seen.add(volumeKey(vol.Namespace, vol.ID));
        this.examine(vol, lookups, now, mono);
      }
      const keys = new Set([
        ...this.claims.ofAllocs(this.store.allocsModifiedSince(since)),
        ...this.claims.ofNodes(nodes),
        ...this.waiting.due(now, this.opts.nodeGraceMs),
        ...this.holds.due(mono),
      ]);
      for (const key of keys) {
        if (seen.has(key)) continue;
        const at = this.claims.get(key);
        const vol = at && this.store.getVolume(at.namespace, at.id);
        if (vol) this.examine(vol, lookups, now, mono);
        else this.forget(key);
      }
      if (nodes.length > 0) this.runs.wakeControllersBack();
    }
    // Only a pass that got here moves on: one that threw is read again, from the same index.
    this.readIndex = upTo;
    for (const ref of this.orphans.takeDue(mono)) this.runs.track(this.ask(ref));
    this.runs.prune(now);
  }

  /** The facts of each claim of the volume under `key`, as this watcher knows them at `mono`. */
  private inputs(key: string, lookups: Pick<Lookups, "alloc" | "node">, mono: number): WorkInputs {
    return {
      alloc: lookups.alloc,
      node: lookups.node,
      facts: (claim, alloc, node) => {
        const downSince = this.downClock.observe(claim.NodeID, node, mono);
        return {
          now: mono,
          nodeDownSince: downSince,
          fenceHoldMs: downSince === undefined ? Infinity : fenceHoldMsOf(alloc, this.opts),
          nodeHoldsNothing: this.orphans.holdsNothing(key, claim.AllocationID, claim.NodeID, mono),
        };
      },
    };
  }

  /** What a release run of the volume does now: the decisions taken again on the store as it is. */
  private work(namespace: string, id: string): ReleaseWork[] {
    const vol = this.store.getVolume(namespace, id);
    if (!vol) return [];
    const store = {
      alloc: (a: string) => this.store.getAlloc(a),
      node: (n: string) => this.store.getNode(n),
    };
    const work = volumeWork(vol, this.inputs(volumeKey(namespace, id), store, performance.now()));
    return [
      ...work.release.map((claim) => ({ claim, unused: false })),
      ...work.releaseUnused.map((claim) => ({ claim, unused: true })),
    ];
  }

  /** Sorts one volume's claims: schedules its releases, notes its waits and holds. */
  private examine(vol: CSIVolume, lookups: Lookups, now: number, mono: number): void {
    const key = volumeKey(vol.Namespace, vol.ID);
    // One volume the pass cannot read is logged and skipped; the others are still reaped.
    try {
      this.claims.set(key, vol);
      if (!this.claims.get(key)) {
        this.waiting.forget(key);
        this.holds.forget(key);
        this.orphans.forget(key);
        // Unclaimed: only the controller's condition still counts for metrics (the node's usage
        // figures are of claimed volumes only, as they were before the condition existed).
        this.census.set(key, { ...vol, Usage: null }, [], now);
        return;
      }
      const work = volumeWork(vol, this.inputs(key, lookups, mono));
      const held = work.held.map((h) => h.claim);
      this.census.set(key, vol, [...work.release, ...work.releaseUnused, ...work.waiting, ...held], now);
      this.orphans.note(key, vol.Namespace, vol.ID, work.askable, mono);
      for (const h of this.holds.note(key, work.held)) {
        const ref = { namespace: vol.Namespace, volumeId: vol.ID, claim: h.claim };
        this.runs.track(showFenceHold(this.store, this.log, ref, h.holdMs, h.until - mono));
      }
      for (const { claim, waitingMs } of this.waiting.note(key, work.waiting, now, this.opts.nodeGraceMs)) {
        this.log.warn(
          "a finished allocation's volume is still attached on its live node; waiting for the node agent to unmount it",
          { volume: vol.ID, alloc: claim.AllocationID, node: claim.NodeID, waiting_ms: waitingMs },
        );
      }
      if (work.release.length + work.releaseUnused.length > 0) {
        this.runs.wakeIfControllerBack(key);
        this.runs.schedule(vol.Namespace, vol.ID);
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
    this.holds.forget(key);
    this.orphans.forget(key);
  }

  /**
   * Asks a claim's live node what it holds of the volume for the claim's alloc. "Nothing" runs the
   * volume's release (the run decides again, with the answer); anything else, or no answer (the
   * node cannot be reached: no guessing), keeps the claim waiting until the next question.
   */
  private async ask(ref: OrphanRef): Promise<void> {
    const signal = this.ctl.signal;
    let nothing = false;
    try {
      if (!this.releaser.nodeVolumeState) return;
      const state = await this.releaser.nodeVolumeState(
        ref.nodeId,
        { Namespace: ref.namespace, VolumeID: ref.volumeId, AllocID: ref.allocId },
        anySignal([signal], this.opts.orphanAskTimeoutMs),
      );
      nothing = nodeHoldsNothing(state);
      if (!nothing) {
        this.log.info(
          "a finished allocation's claim is still held on its live node; waiting for the node agent",
          {
            volume: ref.volumeId,
            alloc: ref.allocId,
            node: ref.nodeId,
            mounted: state.Mounted,
            release_pending: state.ReleasePending,
            alloc_active: state.AllocActive,
          },
        );
      }
    } catch (err) {
      if (signal.aborted) return;
      this.log.warn("could not ask the node about a finished allocation's claim; it keeps waiting", {
        volume: ref.volumeId,
        alloc: ref.allocId,
        node: ref.nodeId,
        error: asBerthError(err).message,
      });
    } finally {
      if (!signal.aborted) this.orphans.answered(ref, nothing, performance.now());
    }
    if (nothing) this.runs.schedule(ref.namespace, ref.volumeId);
    else this.nudge?.abort();
  }
}

/** Ms from `now` until `at` (both monotonic); undefined when nothing is due. */
function dueIn(at: number | undefined, now: number): number | undefined {
  return at === undefined ? undefined : at - now;
}
