/**
 * The client release of an alloc's CSI volumes (DESIGN step 7): a small loop around the pure
 * decision `nextClientReleaseStep` (release_decide.ts). For one volume it reads the persisted
 * PendingRelease, asks for the next step, performs it, persists the checkpoint and asks again:
 *
 * - node phase, one backoff (1 s → 1 min, until `deadlineMs`, woken at once when the node plugin
 *   registers again) over attempts of: wait for the node plugin when it is not registered (a
 *   "Volume Release Waiting" event and report), then unmount through it (NodeUnpublish, NodeUnstage
 *   for the last user; "already unmounted" is success), or — when it stayed missing past the plugin
 *   wait — release without it, which the volume manager allows only while nothing is mounted;
 *   the checkpoint `unmounted: true` is written by the unmount guard under the volume's lock, and
 *   an operator's `volume detach` that unmounted it first makes the unmount a no-op; the whole
 *   phase is bounded by `csi_unmount_escalate_after`, past which berth detaches the mounts lazily
 *   itself and the volume needs attention (csi_escalate.ts);
 * - server phase, after the node phase's reports settled: CSIVolume.Unpublish node-detached,
 *   transient errors retried; ERR_NOT_FOUND counts as done; another failure is reported as the
 *   server's to retry (it already holds the claim node-detached) and fails the release;
 * - done: the stub and the pending record go, and the plugin dir owner hears of it.
 *
 * Every failed or waiting step is a task event and a report (release_reporter.ts), labelled with
 * the step the loop was performing (reportedStep), never by the message text. `signal` (agent
 * shutdown) aborts; a restarted agent resumes from the persisted records.
 */
import { retryWithBackoff } from "../../internal/backoff.js";
import { isAbortError } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import { asBerthError, isBerthError, isRetryable } from "../../structs/errors.js";
import type { RegisteredPlugin } from "../dynamicplugins/types.js";
import type { UnmountGuard } from "../csimanager/volume_requests.js";
import type { CsiVolumeStub, PendingRelease } from "../state/types.js";
import { nodePluginRegistered } from "./plugin_wake.js";
import { ReleaseReporter, type ReleaseRef } from "./release_reporter.js";
import {
  nextClientReleaseStep,
  reportedStep,
  stepOfCsiMethod,
  type ClientReleaseStep,
  type ReleaseFacts,
} from "./release_decide.js";
import { pluginWaitMs, rpcTimeoutMs, type CsiBackoff, type CsiHookConfig } from "./csi_types.js";
import { UnmountEscalation } from "./csi_escalate.js";

/** One volume's release in progress: what the loop knows besides the persisted record. */
interface Progress {
  allocId: string;
  alias: string;
  stub: CsiVolumeStub;
  ref: ReleaseRef;
  guard: UnmountGuard;
  log: Logger;
  signal: AbortSignal;
}

export class CsiReleaser {
  private readonly escalation: UnmountEscalation;

  constructor(
    private readonly cfg: CsiHookConfig,
    private readonly backoff: CsiBackoff,
    private readonly log: Logger,
    private readonly reporter: ReleaseReporter,
  ) {
    this.escalation = new UnmountEscalation(cfg, backoff);
  }

  /**
   * Releases every volume with a pending record (a stub not yet pending becomes one), in parallel;
   * resolves when all are released, quietly when `signal` (shutdown) interrupted them.
   */
  releaseAll(allocId: string, signal: AbortSignal): Promise<void> | null {
    const store = this.cfg.store;
    const pending = store.getPendingReleases(allocId);
    for (const [alias, stub] of Object.entries(store.getVolumeStubs(allocId))) {
      if (!pending[alias]) store.putPendingRelease(allocId, alias, { stub, unmounted: false });
    }
    const releases = Object.entries(store.getPendingReleases(allocId));
    if (releases.length === 0) return null;
    return Promise.all(
      releases.map(([alias, rel]) => this.release(allocId, alias, rel, Infinity, signal)),
    ).then(
      () => this.log.info("volumes released", { alloc: allocId, count: releases.length }),
      (err: unknown) => {
        if (isAbortError(err) || signal.aborted) {
          this.log.info("volume release interrupted by shutdown; a restart resumes it", { alloc: allocId });
          return;
        }
        throw err;
      },
    );
  }

  /** One volume's release, from whatever step its persisted record says, within `deadlineMs`. */
  async release(
    allocId: string,
    alias: string,
    rel: PendingRelease,
    deadlineMs: number,
    signal: AbortSignal,
  ): Promise<void> {
    const { stub } = rel;
    const p: Progress = {
      allocId,
      alias,
      stub,
      signal,
      log: this.log.child(alias),
      ref: { allocId, alias, volumeId: stub.volumeId, namespace: stub.namespace },
      guard: {
        // An operator's `volume detach` may have unmounted it meanwhile (and marked this record).
        stillMounted: () => this.cfg.store.getPendingReleases(allocId)[alias]?.unmounted === false,
        unmounted: () => this.cfg.store.putPendingRelease(allocId, alias, { stub, unmounted: true }),
      },
    };
    let serverReleased = false;
    for (;;) {
      const step = nextClientReleaseStep({ unmounted: this.unmounted(p), plugin: "missing", serverReleased });
      if (step === "done") break;
      if (step === "server-unpublish") {
        // A late report of the node step must not land after the claim advanced past it.
        await this.reporter.settled(p.ref);
        await this.serverUnpublish(p, deadlineMs);
        serverReleased = true;
      } else {
        // Within the escalation bound; past it berth detaches lazily (csi_escalate.ts).
        await this.escalation.bounded(p, (signal) => this.nodePhase({ ...p, signal }, deadlineMs));
        // The checkpoint (the unmount guard writes it under the volume's lock; this only makes sure).
        if (p.guard.stillMounted()) p.guard.unmounted();
      }
    }
    this.cfg.store.completeRelease(allocId, alias);
    p.log.info("volume released", { volume: stub.volumeId });
    await this.cfg.pluginDirs
      ?.volumeReleased(stub)
      .catch((err: unknown) => p.log.warn("tearing down an unused plugin dir failed", { error: err }));
  }

  /** The persisted checkpoint; a record that is gone has nothing left to unmount. */
  private unmounted(p: Progress): boolean {
    return !p.guard.stillMounted();
  }

  /** The node steps, retried as one: each attempt asks the decision until the volume is unmounted. */
  private async nodePhase(p: Progress, deadlineMs: number): Promise<void> {
    let failedIn: ClientReleaseStep = "unmount";
    await retryWithBackoff(
      async () => {
        const facts: ReleaseFacts = {
          unmounted: this.unmounted(p),
          plugin: "missing",
          serverReleased: false,
        };
        let plugin = this.cfg.registry.get("csi-node", p.stub.pluginId) ?? null;
        if (plugin) facts.plugin = "registered";
        for (;;) {
          const step = nextClientReleaseStep(facts);
          failedIn = step;
          if (step === "wait-plugin") {
            this.reporter.waitingForPlugin(p.ref, p.stub.pluginId, pluginWaitMs(this.cfg));
            plugin = await this.waitForPlugin(p);
            facts.plugin = plugin ? "registered" : "waited-out";
          } else if (step === "unmount") {
            await this.unmount(p, plugin!);
            return;
          } else if (step === "release-without-plugin") {
            await this.releaseWithoutPlugin(p);
            return;
          } else {
            // Someone else (an operator's detach) did the node step: nothing to do on the node.
            return;
          }
        }
      },
      {
        ...this.backoff,
        deadlineMs,
        signal: p.signal,
        shouldRetry: (err) => !isAbortError(err) && !p.signal.aborted,
        // A plugin that became healthy again is retried at once, not after the backoff.
        wake: (over) => nodePluginRegistered(this.cfg.registry, p.stub.pluginId, over),
        onRetry: (err, attempt, delayMs) => {
          p.log.warn("unmount failed, retrying", {
            error: asBerthError(err).message,
            attempt: attempt + 1,
            delayMs,
          });
          this.reporter.retrying(p.ref, reportedStep(failedIn, err), err, attempt, delayMs);
        },
      },
    );
  }

  /** The node plugin after up to the plugin wait; null when it did not come. */
  private async waitForPlugin(p: Progress): Promise<RegisteredPlugin | null> {
    try {
      return await this.cfg.registry.waitForPlugin("csi-node", p.stub.pluginId, {
        signal: p.signal,
        timeoutMs: pluginWaitMs(this.cfg),
      });
    } catch (err) {
      if (isBerthError(err) && err.code === "ERR_CSI_PLUGIN_UNAVAILABLE") return null;
      throw err;
    }
  }

  private unmount(p: Progress, plugin: RegisteredPlugin): Promise<void> {
    const { stub } = p;
    return this.cfg.volumeManager.unmountVolume(
      {
        plugin,
        allocId: p.allocId,
        volumeId: stub.volumeId,
        namespace: stub.namespace,
        externalId: stub.externalId,
        usage: stub.usage,
        // Transient failures retried inside the call are visible too, as they happen.
        onRetry: (err, attempt, delayMs, method) =>
          this.reporter.retrying(p.ref, stepOfCsiMethod(method) ?? "node-unpublish", err, attempt, delayMs),
      },
      p.signal,
      p.guard,
    );
  }

  private async releaseWithoutPlugin(p: Progress): Promise<void> {
    const { stub } = p;
    await this.cfg.volumeManager.releaseWithoutPlugin(p.allocId, stub, p.guard);
    p.log.warn("node plugin missing past the plugin wait and nothing left mounted: released without it", {
      volume: stub.volumeId,
      plugin: stub.pluginId,
    });
    this.cfg.emitEvent?.(
      "Volume Released Without Plugin",
      `CSI node plugin ${JSON.stringify(stub.pluginId)} did not come back; volume "${p.alias}" (${stub.volumeId}) had nothing left mounted on this node, so its node step was skipped`,
      { volume: stub.volumeId, plugin: stub.pluginId },
    );
  }

  /** CSIVolume.Unpublish node-detached; ERR_NOT_FOUND: the server has nothing left to release. */
  private async serverUnpublish(p: Progress, deadlineMs: number): Promise<void> {
    const { stub, signal } = p;
    try {
      await retryWithBackoff(
        () =>
          this.cfg.rpc.call(
            "CSIVolume.Unpublish",
            {
              VolumeID: stub.volumeId,
              Namespace: stub.namespace,
              AllocationID: p.allocId,
              NodeID: this.cfg.nodeId,
              State: "node-detached",
            },
            { signal, timeoutMs: rpcTimeoutMs(this.cfg) },
          ),
        {
          ...this.backoff,
          deadlineMs,
          signal,
          shouldRetry: (err) => isBerthError(err) && isRetryable(err.code),
          onRetry: (err, attempt, delayMs) => {
            p.log.warn("unpublish request failed, retrying", {
              error: asBerthError(err).message,
              attempt: attempt + 1,
              delayMs,
            });
            this.reporter.retrying(p.ref, reportedStep("server-unpublish", err), err, attempt, delayMs);
          },
        },
      );
    } catch (err) {
      if (isBerthError(err) && err.code === "ERR_NOT_FOUND") return;
      if (!signal.aborted && !isAbortError(err)) this.reporter.serverTakesOver(p.ref, err);
      throw err;
    }
  }
}
