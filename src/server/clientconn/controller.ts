/**
 * Runs controller RPCs on some node that runs a healthy controller instance of the plugin.
 * Candidates are tried in turn (rotating the start so load spreads); a retryable failure
 * (plugin/transport unavailable, node not connected, timeouts, ABORTED, FAILED_PRECONDITION…)
 * moves on to the next candidate, any other error is the answer. When every candidate failed
 * retryably, the round is repeated with capped exponential backoff until `retryDeadlineMs` (a
 * plugin answers ABORTED while it still works on another call for the same volume, e.g. a node
 * call of a monolith). Per-volume serialisation is the caller's job (see KeyedMutex), so calls for
 * different volumes of one plugin run in parallel. The paged list calls are the exception to the
 * retry policy: a refused paging token is answered at once (paged_lists.ts).
 *
 * Fenced calls (internal/fence.ts): a call made by a leader loop or under a cluster volume lock is
 * checked right before each send (NodeConnections.call) and refused with ERR_FENCED once its term or
 * lock no longer holds; that refusal is final here (no other candidate, no other round), since no
 * retry from this work can be sent either.
 */
import { BerthError, asBerthError, isRetryable } from "../../structs/errors.js";
import { retryWithBackoff } from "../../internal/backoff.js";
import { checkFences } from "../../internal/fence.js";
import { checkControllerAnswer } from "../../structs/controller_answer_validate.js";
import type { CSIControllerInfo } from "../../structs/plugin.js";
import type { ClientMethods } from "../../structs/rpc.js";
import type { Logger } from "../../internal/log.js";
import type { StateReader } from "../state/store.js";
import type { NodeConnections } from "./connections.js";
import { HealthyControllerPages } from "./controller_pages.js";
import { isFinalForMethod, listFailure } from "./paged_lists.js";

export type ControllerMethod = keyof ClientMethods;

export interface ControllerCallOptions {
  signal?: AbortSignal;
  /** A capability every candidate must advertise (the call is refused up front otherwise). */
  requires?: keyof CSIControllerInfo;
  timeoutMs?: number;
  /** How long to keep retrying rounds that failed retryably; 30 s by default. */
  retryDeadlineMs?: number;
}

/** Raised when no connected node runs a healthy controller for the plugin. */
class NoControllerError extends BerthError {
  constructor(message: string) {
    super("ERR_CSI_PLUGIN_UNAVAILABLE", message);
  }
}

/** The first page of healthy controllers a round reads, and the most a later page doubles to. */
const FIRST_PAGE = 8;
const MAX_PAGE = 512;

export class ControllerClient {
  /** Plugin ID → the node its latest round started on (the next round starts after it). */
  private readonly rotation = new Map<string, string>();
  private readonly pages: HealthyControllerPages;

  constructor(
    private readonly state: StateReader,
    private readonly conns: NodeConnections,
    private readonly log: Logger,
    private readonly defaultTimeoutMs = 60_000,
  ) {
    this.pages = new HealthyControllerPages(state);
  }

  async call<M extends ControllerMethod>(
    pluginId: string,
    method: M,
    params: ClientMethods[M][0],
    opts: ControllerCallOptions = {},
  ): Promise<ClientMethods[M][1]> {
    checkFences(method);
    const once = () =>
      this.callOnce(pluginId, method, params, opts).catch((err: unknown) => {
        throw listFailure(method, params, asBerthError(err));
      });
    return retryWithBackoff(once, {
      baseMs: 250,
      maxMs: 5_000,
      deadlineMs: opts.retryDeadlineMs ?? 30_000,
      signal: opts.signal,
      // No candidate at all is answered at once: waiting would only delay "no controller" for an
      // operator; the volumewatcher and the node agents retry on their own schedules.
      shouldRetry: (err) =>
        !opts.signal?.aborted &&
        !(err instanceof NoControllerError) &&
        asBerthError(err).code !== "ERR_FENCED" &&
        isRetryable(asBerthError(err).code) &&
        !isFinalForMethod(method, asBerthError(err)),
      onRetry: (err, attempt, delayMs) =>
        this.log.warn("controller call failed on every candidate; retrying", {
          plugin: pluginId,
          method,
          attempt,
          delayMs,
          code: asBerthError(err).code,
        }),
    });
  }

  /** One round over the candidates. */
  private async callOnce<M extends ControllerMethod>(
    pluginId: string,
    method: M,
    params: ClientMethods[M][0],
    opts: ControllerCallOptions,
  ): Promise<ClientMethods[M][1]> {
    const seen = { healthy: false, supporting: false };
    let tried = 0;
    let last: BerthError | undefined;
    for (const nodeId of this.candidates(pluginId, opts.requires, seen)) {
      tried++;
      let answer: unknown;
      try {
        answer = await this.conns.call(nodeId, method, params, {
          timeoutMs: opts.timeoutMs ?? this.defaultTimeoutMs,
          signal: opts.signal,
        });
      } catch (err) {
        const e = asBerthError(err);
        if (
          !isRetryable(e.code) ||
          e.code === "ERR_FENCED" ||
          isFinalForMethod(method, e) ||
          opts.signal?.aborted
        )
          throw e;
        this.log.warn("controller call failed, trying another controller", {
          plugin: pluginId,
          method,
          node: nodeId,
          code: e.code,
        });
        last = e;
        continue;
      }
      return this.checked(pluginId, method, nodeId, answer);
    }
    if (tried === 0) {
      // Asked only now: a plugin with a candidate exists, and this read is a fifth of a call.
      if (!this.state.pluginSummary(pluginId))
        throw new BerthError("ERR_NOT_FOUND", `plugin ${JSON.stringify(pluginId)} not found`);
      // The walk saw every healthy controller: refused up front when none has the capability.
      if (opts.requires && seen.healthy && !seen.supporting) {
        throw new BerthError(
          "ERR_CSI_NOT_SUPPORTED",
          `plugin ${JSON.stringify(pluginId)} does not support ${opts.requires.replace(/^Supports/, "")}`,
        );
      }
      throw new NoControllerError(
        `no healthy controller for plugin ${JSON.stringify(pluginId)} is connected to take ${method}`,
      );
    }
    // The last failure's own code when there was one, so a caller sees e.g. ABORTED, not a guess.
    throw new BerthError(
      last?.code ?? "ERR_CSI_PLUGIN_UNAVAILABLE",
      `no healthy controller for plugin ${JSON.stringify(pluginId)} could take ${method}${last ? `: ${last.message}` : ""}`,
    );
  }

  /**
   * The node's answer, checked before anyone uses or stores it (controller_answer_validate.ts). A
   * malformed one fails the call with ERR_CSI_BAD_ANSWER (final: another candidate is not asked,
   * so the operator sees the node that answered it) and a warning naming the node and the field.
   */
  private checked<M extends ControllerMethod>(
    pluginId: string,
    method: M,
    nodeId: string,
    answer: unknown,
  ): ClientMethods[M][1] {
    try {
      return checkControllerAnswer(method, answer);
    } catch (err) {
      const e = asBerthError(err);
      this.log.warn("refused a malformed controller answer from a node; nothing of it was stored", {
        plugin: pluginId,
        method,
        node: nodeId,
        field: e.field,
        error: e.message,
      });
      throw new BerthError(e.code, `${method} on node ${nodeId}: ${e.message}`, {
        field: e.field,
        cause: err,
      });
    }
  }

  /**
   * Connected nodes with a healthy controller instance of the plugin (with `requires`, one that
   * advertises it), lazily, in node ID order starting after the node the plugin's previous round
   * started on and wrapping around once, so rounds rotate over the candidates and load spreads.
   * It pages through the healthy-controller index (controller_pages.ts) and stops as soon
   * as a call succeeds: a round costs O(log n + the candidates it tries), never a read of every
   * controller. Only a round that finds no candidate walks them all; `seen` then tells whether
   * any was healthy and any had the capability. The start moves when the round yields its first
   * candidate (synchronously), so concurrent rounds start on different nodes.
   */
  private *candidates(
    pluginId: string,
    requires: keyof CSIControllerInfo | undefined,
    seen: { healthy: boolean; supporting: boolean },
  ): Generator<string> {
    const from = this.rotation.get(pluginId) ?? "";
    let first = true;
    // The ring as two ranges: node IDs after `from`, then from the lowest up to `from` itself.
    for (const [after, upTo] of [
      [from, undefined],
      ["", from],
    ] as const) {
      if (after === "" && upTo === "") break; // `from` was "": the first range was the whole ring
      let cursor: string = after;
      let limit = FIRST_PAGE;
      for (;;) {
        const page = this.pages.after(pluginId, cursor, limit);
        for (const [nodeId, info] of page) {
          // Node IDs are ASCII (structs/ids.ts), so JS order here is SQLite's BINARY order.
          if (upTo !== undefined && nodeId > upTo) return;
          seen.healthy = true;
          if (requires && info.ControllerInfo?.[requires] !== true) continue;
          seen.supporting = true;
          if (!this.conns.isConnected(nodeId)) continue;
          if (first) {
            first = false;
            this.rotation.set(pluginId, nodeId);
          }
          yield nodeId;
        }
        if (page.length < limit) break;
        cursor = page[page.length - 1]![0];
        limit = Math.min(limit * 2, MAX_PAGE);
      }
    }
  }
}
