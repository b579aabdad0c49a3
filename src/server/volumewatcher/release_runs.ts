/**
 * The volumewatcher's release runs (watcher.ts decides what to release; this runs it): one run at
 * a time per volume, at least `minIntervalMs` apart, runs of different volumes in parallel; a
 * failed run is retried after a capped exponential backoff from a timer, and records on the claim
 * it was releasing which step failed (release_failure.ts); a run waiting for a controller is
 * retried as soon as a controller it had not seen registers. Each run reads, at its start, what
 * to release (`work`), so it acts on the store as it is then, never on a stale scan.
 */
import { backoffDelay } from "../../internal/backoff.js";
import type { Logger } from "../../internal/log.js";
import { asBerthError } from "../../structs/errors.js";
import type { VolumeClaim } from "../../structs/volume.js";
import { volumeKey } from "../deps.js";
import type { StateStore } from "../state/store.js";
import { attachControllers, controllerWait, recordFailure, type ControllerWait } from "./release_failure.js";
import { showUnusedRelease } from "./visible_waits.js";
import type { ClaimReleaser, VolumeWatcherOptions } from "./watcher_options.js";

/** One claim to release; `unused`: its live node holds nothing of it (the walk starts node-detached). */
export interface ReleaseWork {
  claim: VolumeClaim;
  unused: boolean;
}

export interface ReleaseRunsDeps {
  store: StateStore;
  releaser: ClaimReleaser;
  log: Logger;
  opts: Pick<VolumeWatcherOptions, "minIntervalMs" | "backoffBaseMs" | "backoffMaxMs">;
  /** What to release of the volume now. */
  work(namespace: string, id: string): ReleaseWork[];
}

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
  awaitController: ControllerWait | undefined;
}

export class ReleaseRuns {
  private readonly volumes = new Map<string, VolumeState>();
  private readonly runs = new Set<Promise<void>>();
  private signal: AbortSignal = AbortSignal.abort();

  constructor(private readonly d: ReleaseRunsDeps) {}

  /** Runs may start from now until `signal` aborts. */
  start(signal: AbortSignal): void {
    this.signal = signal;
  }

  /** After the signal aborted: drops the timers and waits for the runs in flight (and tracked work). */
  async stop(): Promise<void> {
    for (const v of this.volumes.values()) clearTimeout(v.timer);
    await Promise.allSettled([...this.runs]);
    this.volumes.clear();
  }

  /** A node was written: releases waiting for a controller it may bring back need not wait out their backoff. */
  wakeControllersBack(): void {
    for (const [key, v] of this.volumes) if (this.wakeIfControllerBack(key)) this.schedule(v.namespace, v.id);
  }

  /**
   * Forgets idle volumes once their rate-limit window has passed: the map holds only volumes with
   * work running, queued or recently done.
   */
  prune(now: number): void {
    for (const [k, v] of this.volumes) {
      if (!v.running && !v.timer && v.failures === 0 && v.notBefore <= now) this.volumes.delete(k);
    }
  }

  /** Cuts the backoff short of a volume whose release waited for a controller that is now live. */
  wakeIfControllerBack(key: string): boolean {
    const v = this.volumes.get(key);
    const wait = v?.awaitController;
    if (!v || !wait || !v.timer) return false;
    if (!attachControllers(this.d.store, wait.pluginId).some((n) => !wait.seen.has(n))) return false;
    clearTimeout(v.timer);
    v.timer = undefined;
    v.notBefore = 0;
    v.awaitController = undefined;
    return true;
  }

  /** Runs the volume's releases: now, or when its rate limit or backoff allows. */
  schedule(namespace: string, id: string): void {
    if (this.signal.aborted) return;
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

  /** Keeps a release run until it settles (stop() awaits it); a failure is logged, never unhandled. */
  track(run: Promise<void>): void {
    const p: Promise<void> = run
      .catch((err: unknown) => this.d.log.error("volumewatcher run failed", { error: err }))
      .finally(() => this.runs.delete(p));
    this.runs.add(p);
  }

  /** Releases every claim of the volume the watcher should release, one after another. */
  private async run(v: VolumeState): Promise<void> {
    const signal = this.signal;
    v.running = true;
    v.again = false;
    let failed = false;
    /** The claim being released when a failure comes: the one whose status records it. */
    let current: VolumeClaim | undefined;
    try {
      const todo = this.d.work(v.namespace, v.id);
      for (const { claim, unused } of todo) {
        if (signal.aborted) return;
        current = claim;
        await this.releaseOne(v, claim, unused, signal);
      }
      v.failures = 0;
      v.awaitController = undefined;
    } catch (err) {
      if (signal.aborted) return;
      failed = true;
      await this.noteFailure(v, err, current);
    } finally {
      v.running = false;
      if (!failed) v.notBefore = Date.now() + this.d.opts.minIntervalMs;
    }
    if (signal.aborted) return;
    if (failed || v.again) this.schedule(v.namespace, v.id);
  }

  /** One claim's release; `unused`: the node holds nothing of it, so the node step is skipped. */
  private async releaseOne(
    v: VolumeState,
    claim: VolumeClaim,
    unused: boolean,
    signal: AbortSignal,
  ): Promise<void> {
    if (unused)
      await showUnusedRelease(this.d.store, this.d.log, { namespace: v.namespace, volumeId: v.id, claim });
    const freed = await this.d.releaser.releaseClaim(
      v.namespace,
      { VolumeID: v.id, AllocationID: claim.AllocationID, NodeID: claim.NodeID },
      unused ? "node-detached" : "taken",
      signal,
    );
    this.d.log.info("volumewatcher released a claim", {
      volume: v.id,
      namespace: v.namespace,
      alloc: claim.AllocationID,
      node: claim.NodeID,
      freed,
      node_step: unused ? "skipped: the node holds nothing of it" : undefined,
    });
  }

  /**
   * A failed run: the volume's backoff grows, a missing controller is waited for (controllerWait),
   * and the failure is logged and recorded on the claim being released (`current`), if any.
   */
  private async noteFailure(v: VolumeState, err: unknown, current: VolumeClaim | undefined): Promise<void> {
    const e = asBerthError(err);
    v.awaitController =
      e.code === "ERR_CSI_PLUGIN_UNAVAILABLE"
        ? controllerWait(this.d.store, v.namespace, v.id, current)
        : undefined;
    const delay = backoffDelay(v.failures, this.d.opts.backoffBaseMs, this.d.opts.backoffMaxMs);
    v.failures++;
    v.notBefore = Date.now() + delay;
    this.d.log.warn("volumewatcher could not release a claim; retrying", {
      volume: v.id,
      namespace: v.namespace,
      code: e.code,
      error: e.message,
      retry_in_ms: delay,
      failures: v.failures,
    });
    if (current) {
      const failure = { namespace: v.namespace, volumeId: v.id, claim: current, error: e.message };
      await recordFailure(this.d.store, this.d.log, {
        ...failure,
        attempts: v.failures,
        nextAttemptMs: v.notBefore,
      });
    }
  }
}
