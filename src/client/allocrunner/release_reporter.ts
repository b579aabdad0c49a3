/**
 * Makes a pending volume release visible (issue 8): when a release step on this node fails and will
 * be retried — NodeUnpublish, NodeUnstage, the server unpublish call — or waits for the node
 * plugin, the reporter
 * - emits a "Volume Release Retry" task event naming the volume, the step, the error and when the
 *   next attempt starts, and
 * - reports the same to the server (CSIVolume.ReleaseProgress), which records it on the claim, so
 *   `GET /v1/volume/csi/:id` and `berth volume status` show it.
 * One event and one report per failed attempt: the release's backoff bounds both. The server clears
 * the status itself when the step succeeds (the claim advances), so success needs no report.
 *
 * Reports are best effort and never block a release for long: each has a short deadline, failures
 * are logged at debug (the release goes on; its next failure reports again). Reports of one volume
 * are chained, so they reach the server in order; `settled()` lets the release wait for the last
 * one before it advances the claim, so a late report never lands on a claim that moved on (the
 * server also drops a node step's report once the claim is past it).
 * The caller names the step (release_decide.ts `reportedStep`: known from the step the release was
 * performing and the CSI method that failed, never from message text).
 * Errors here are CSI errors, already redacted of secrets (csi/errors.ts), or server errors.
 */
import type { Logger } from "../../internal/log.js";
import { asBerthError } from "../../structs/errors.js";
import { NS_PER_MS } from "../../structs/job.js";
import type { ServerMethods } from "../../structs/rpc.js";
import type { ReleaseStatusStep } from "../../structs/volume.js";
import { formatMs } from "./taskrunner/restart_tracker.js";

/** Deadline of one report: a slow server must not hold up the release it reports on. */
const REPORT_TIMEOUT_MS = 10_000;

export interface ReleaseReporterRpc {
  call<M extends keyof ServerMethods>(
    method: M,
    req: ServerMethods[M][0],
    opts?: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<ServerMethods[M][1]>;
}

export interface ReleaseReporterConfig {
  rpc: ReleaseReporterRpc;
  nodeId: string;
  log: Logger;
  emitEvent?: (type: string, message: string, details?: Record<string, string>) => void;
  /** Unix ms; injectable for tests. */
  now?: () => number;
}

/** The volume of one alloc being released. */
export interface ReleaseRef {
  allocId: string;
  alias: string;
  volumeId: string;
  namespace: string;
}

export class ReleaseReporter {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly now: () => number;

  constructor(private readonly cfg: ReleaseReporterConfig) {
    this.now = cfg.now ?? Date.now;
  }

  /** A step failed (attempt is 0-based, as retryWithBackoff counts) and runs again in `delayMs`. */
  retrying(ref: ReleaseRef, step: ReleaseStatusStep, err: unknown, attempt: number, delayMs: number): void {
    const message = asBerthError(err).message;
    this.cfg.emitEvent?.(
      "Volume Release Retry",
      `release of volume "${ref.alias}" (${ref.volumeId}): ${step} failed (${message}); retry ${attempt + 1} in ${formatMs(delayMs)}`,
      { volume: ref.volumeId, step, error_code: asBerthError(err).code, attempt: String(attempt + 1) },
    );
    this.report(ref, step, message, attempt + 1, this.now() + delayMs);
  }

  /** The release waits for its node plugin to register, at most `waitMs`. */
  waitingForPlugin(ref: ReleaseRef, pluginId: string, waitMs: number): void {
    const message = `CSI node plugin ${JSON.stringify(pluginId)} is not running on this node`;
    this.cfg.emitEvent?.(
      "Volume Release Waiting",
      `release of volume "${ref.alias}" (${ref.volumeId}) waits up to ${formatMs(waitMs)} for its node plugin: ${message}`,
      { volume: ref.volumeId, step: "wait-plugin", plugin: pluginId },
    );
    this.report(ref, "wait-plugin", message, 0, this.now() + waitMs);
  }

  /**
   * The server's unpublish failed in a way this node does not retry (e.g. ControllerUnpublishVolume
   * answered INTERNAL): the claim is already node-detached, and the server's volumewatcher retries
   * the rest (and records its own next attempt on the claim).
   */
  serverTakesOver(ref: ReleaseRef, err: unknown): void {
    const message = asBerthError(err).message;
    this.cfg.emitEvent?.(
      "Volume Release Retry",
      `release of volume "${ref.alias}" (${ref.volumeId}): server-unpublish failed (${message}); the server retries it`,
      { volume: ref.volumeId, step: "server-unpublish", error_code: asBerthError(err).code },
    );
    this.report(ref, "server-unpublish", message, 1, 0);
  }

  /** Resolves once every report of `ref` sent so far has been answered or given up. */
  settled(ref: ReleaseRef): Promise<void> {
    return this.chains.get(key(ref)) ?? Promise.resolve();
  }

  private report(
    ref: ReleaseRef,
    step: ReleaseStatusStep,
    lastError: string,
    attempts: number,
    nextAttemptMs: number,
  ): void {
    const k = key(ref);
    const prev = this.chains.get(k) ?? Promise.resolve();
    const next = prev.then(() => this.send(ref, step, lastError, attempts, nextAttemptMs));
    this.chains.set(k, next);
    void next.finally(() => {
      if (this.chains.get(k) === next) this.chains.delete(k);
    });
  }

  private async send(
    ref: ReleaseRef,
    step: ReleaseStatusStep,
    lastError: string,
    attempts: number,
    nextAttemptMs: number,
  ): Promise<void> {
    try {
      await this.cfg.rpc.call(
        "CSIVolume.ReleaseProgress",
        {
          VolumeID: ref.volumeId,
          Namespace: ref.namespace,
          AllocationID: ref.allocId,
          NodeID: this.cfg.nodeId,
          Step: step,
          LastError: lastError,
          Attempts: attempts,
          NextAttempt: Math.round(nextAttemptMs) * NS_PER_MS,
        },
        { timeoutMs: REPORT_TIMEOUT_MS },
      );
    } catch (err) {
      this.cfg.log.debug("could not report a release's progress to the server", {
        volume: ref.volumeId,
        step,
        error: asBerthError(err).message,
      });
    }
  }
}

function key(ref: ReleaseRef): string {
  return `${ref.allocId}/${ref.alias}`;
}
