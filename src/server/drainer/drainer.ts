/**
 * The node drainer (Nomad's name): moves the work off every node that has a DrainStrategy, in the
 * order decide.ts gives — ordinary allocs first, then system allocs, then the CSI plugin allocs
 * once no volume claim is left on the node — and completes the drain when nothing is left to stop.
 * Runs on the server (the leader, once there are several).
 *
 * - Event-driven: blocks on the nodes/allocs/volumes table indexes (a claim's release moves the
 *   volumes index) and on the nearest force deadline; bursts coalesce into one pass per `settleMs`.
 * - Per-node work only: a pass reads the draining nodes' allocs (allocsByNode) and the volumes those
 *   allocs use, never the cluster's allocs. The set of draining nodes follows the nodes written
 *   since the last pass (followDraining), never a read of every node after the first pass.
 * - Resumable: the drain lives in the node record and a mark in the alloc (DesiredTransition), so a
 *   restarted server's first pass picks every drain up where it stopped; nothing but the loop is
 *   kept in memory.
 * - Marks, does not stop: an alloc is marked for migration and its job evaluated; the reconciler
 *   stops it and places the replacement (never on this node: it is ineligible).
 */
import { followTables } from "../follow_tables.js";
import type { Logger } from "../../internal/log.js";
import { BerthError } from "../../structs/errors.js";
import {
  allocIndex,
  allocTaskGroup,
  isAllocTerminal,
  shouldMigrate,
  type Allocation,
} from "../../structs/alloc.js";
import { NS_PER_MS, volumeSourceForAlloc } from "../../structs/job.js";
import { completeDrain, drainStrategyOf, isDraining } from "../../structs/node.js";
import type { VolumeClaim } from "../../structs/volume.js";
import { volumeKey } from "../deps.js";
import { claimsOnNode } from "../rpc/volume_claims.js";
import { MIGRATE_DESCRIPTION } from "../scheduler/plan_types.js";
import type { StateReader, StateStore, Table } from "../state/store.js";
import { decideDrain, type DrainDecision } from "./decide.js";
import { withDefaults } from "../../internal/with_defaults.js";

/** What the drainer needs of the scheduler: an evaluation triggered by the drain (Nomad's TriggeredBy). */
export interface JobEvaluator {
  evaluate(namespace: string, id: string, trigger: "node-drain"): Promise<unknown>;
}

export interface DrainerOptions {
  /** Least time between two passes (coalesces bursts of writes). */
  settleMs: number;
  /** Pause after a failed pass. */
  errorBackoffMs: number;
}

export const DEFAULT_DRAINER_OPTIONS: DrainerOptions = { settleMs: 50, errorBackoffMs: 500 };

const WATCHED: readonly Table[] = ["nodes", "allocs", "volumes"];
/** Longest a blocking wait lasts before an unprompted pass (a safety net, not the mechanism). */
const MAX_WAIT_MS = 5 * 60_000;

/** Every claim `nodeId` holds on the volumes the node's allocs use, in any state short of freed. */
export function claimsHeldOnNode(state: StateReader, nodeId: string, allocs: Allocation[]): VolumeClaim[] {
  const seen = new Set<string>();
  const out: VolumeClaim[] = [];
  for (const a of allocs) {
    for (const req of Object.values(allocTaskGroup(a)?.Volumes ?? {})) {
      if (req.Type !== "csi") continue;
      const id = volumeSourceForAlloc(req, allocIndex(a));
      const key = volumeKey(a.Namespace, id);
      if (seen.has(key)) continue;
      seen.add(key);
      const vol = state.getVolume(a.Namespace, id);
      if (vol) out.push(...claimsOnNode(vol, nodeId));
    }
  }
  return out;
}

export class NodeDrainer {
  private readonly opts: DrainerOptions;
  private draining = new Set<string>();
  private nodesSeen = -1;
  private ctl = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly scheduler: JobEvaluator,
    private readonly log: Logger,
    opts: Partial<DrainerOptions> = {},
  ) {
    this.opts = withDefaults(DEFAULT_DRAINER_OPTIONS, opts);
  }

  start(): void {
    if (this.loop) return;
    this.ctl = new AbortController();
    this.nodesSeen = -1;
    this.loop = this.watch(this.ctl.signal);
  }

  /** Stops the loop and waits for the pass in flight; every drain stays in the store. */
  async stop(): Promise<void> {
    this.ctl.abort();
    await this.loop;
    this.loop = undefined;
  }

  private watch(signal: AbortSignal): Promise<void> {
    return followTables(
      {
        store: this.store,
        tables: WATCHED,
        pass: (s) => this.pass(s),
        name: "node drainer",
        log: this.log,
        settleMs: this.opts.settleMs,
        errorBackoffMs: this.opts.errorBackoffMs,
        maxWaitMs: MAX_WAIT_MS,
      },
      signal,
    );
  }

  /** Takes every draining node one step; answers the nearest force deadline still ahead. */
  private async pass(signal: AbortSignal): Promise<number | null> {
    this.followDraining();
    let wakeAt: number | null = null;
    let failures = 0;
    for (const id of this.draining) {
      if (signal.aborted) break;
      // One node whose step fails is logged and retried after the pass's backoff; the other
      // draining nodes still take their step.
      try {
        const next = await this.step(id);
        if (next !== null && (wakeAt === null || next < wakeAt)) wakeAt = next;
      } catch (err) {
        failures++;
        this.log.error("node drain step failed", { node: id, error: err });
      }
    }
    if (failures > 0) {
      throw new BerthError(
        "ERR_INTERNAL",
        `${failures} of ${this.draining.size} draining nodes failed their step`,
      );
    }
    return wakeAt;
  }

  /**
   * Brings the set of draining nodes up to date: the first pass (nodesSeen -1) reads every node,
   * later ones only the nodes written since the last (nodesModifiedSince), O(changed · log n), so
   * a burst of node registrations or heartbeat status writes never costs a read of every node.
   * A deleted node is not listed as changed: those in the set are re-read, and dropped when gone.
   */
  private followDraining(): void {
    const nodesIndex = this.store.tableIndex("nodes");
    if (nodesIndex === this.nodesSeen) return;
    if (this.nodesSeen < 0) {
      this.draining = new Set(
        this.store
          .listNodes()
          .filter(isDraining)
          .map((n) => n.ID),
      );
    } else {
      for (const id of this.store.nodesModifiedSince(this.nodesSeen)) {
        const node = this.store.getNode(id);
        if (node && isDraining(node)) this.draining.add(id);
        else this.draining.delete(id);
      }
      for (const id of this.draining) {
        const node = this.store.getNode(id);
        if (!node || !isDraining(node)) this.draining.delete(id);
      }
    }
    this.nodesSeen = nodesIndex;
  }

  /** One step of one node's drain, in one transaction; then evaluates the jobs it marked allocs of. */
  private async step(nodeId: string): Promise<number | null> {
    const nowMs = Date.now();
    const outcome = await this.store.txn((tx) => {
      const node = tx.getNode(nodeId);
      const strategy = node ? drainStrategyOf(node) : null;
      if (!node || !strategy) return null;
      const allocs = tx.allocsByNode(nodeId);
      const decision = decideDrain({
        strategy,
        allocs,
        claims: claimsHeldOnNode(tx, nodeId, allocs),
        nowMs,
      });
      const nowNs = nowMs * NS_PER_MS;
      const jobs = new Map<string, { namespace: string; id: string }>();
      const marked = new Set(decision.migrate.map((a) => a.ID));
      // Marked now, or marked before but not stopped yet (the server stopped in between).
      const pending = allocs.filter(
        (a) => marked.has(a.ID) || (shouldMigrate(a) && a.DesiredStatus === "run" && !isAllocTerminal(a)),
      );
      for (const a of pending) {
        const mark: Allocation = {
          ...a,
          DesiredTransition: { ...a.DesiredTransition, Migrate: true },
          ModifyTime: marked.has(a.ID) ? nowNs : a.ModifyTime,
        };
        if (tx.getJob(a.Namespace, a.JobID)) {
          // One already marked is only evaluated again: rewriting it unchanged would wake this loop.
          if (marked.has(a.ID)) tx.putAlloc(mark);
          jobs.set(`${a.Namespace}/${a.JobID}`, { namespace: a.Namespace, id: a.JobID });
        } else {
          // No job to reconcile (purged): nothing would stop it, so the drain does.
          tx.putAlloc({ ...mark, DesiredStatus: "stop", DesiredDescription: MIGRATE_DESCRIPTION });
        }
      }
      if (decision.done) tx.putNode(completeDrain(node, nowMs));
      return { decision, jobs: [...jobs.values()] };
    });
    if (!outcome) return null;
    this.report(nodeId, outcome.decision);
    for (const j of outcome.jobs) {
      try {
        await this.scheduler.evaluate(j.namespace, j.id, "node-drain");
      } catch (err) {
        this.log.error("evaluating a drained job failed", { node: nodeId, job: j.id, error: err });
      }
    }
    return outcome.decision.wakeAtMs;
  }

  private report(nodeId: string, d: DrainDecision): void {
    if (d.migrate.length > 0) {
      this.log.info("node drain: allocs marked for migration", {
        node: nodeId,
        allocs: d.migrate.map((a) => a.ID),
        forced: d.forced,
      });
    }
    if (d.done) this.log.info("node drain complete", { node: nodeId });
  }
}
