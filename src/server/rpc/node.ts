/**
 * Node endpoints, called by node agents over their RPC connection. All idempotent: registering or
 * reporting the same thing twice writes nothing the second time (the store skips no-op puts; an
 * ordered report seen again is refused as stale, structs/node_report.ts).
 */
import { BerthError, notFound, validationError } from "../../structs/errors.js";
import { checkId } from "../../structs/ids.js";
import {
  applyDrainRequest,
  applyEligibility,
  markNodeReady,
  type Node,
  type SchedulingEligibility,
} from "../../structs/node.js";
import { validateAllocUpdates, validateGetAllocs } from "../../structs/node_alloc_validate.js";
import { validateFingerprint, validateReportedNode, type DrainRequest } from "../../structs/node_validate.js";
import { isStaleReportError, refuseStaleReport, validateReportOrder } from "../../structs/node_report.js";
import type {
  NodeFingerprintRequest,
  NodeGetAllocsRequest,
  NodeGetAllocsResponse,
  NodeHeartbeatRequest,
  NodeHeartbeatResponse,
  NodeRegisterRequest,
  NodeRegisterResponse,
  NodeUpdateAllocsRequest,
} from "../../structs/rpc.js";
import { isObject } from "../../structs/json_check.js";
import type { ServerDeps } from "../deps.js";
import { watchKeys } from "../state/watch_keys.js";
import type { HeartbeatMonitor } from "../heartbeat.js";
import { nodeWake } from "../scheduler/blocked_wait.js";
import { applyAllocReports, type AppliedReports } from "./node_alloc_reports.js";
import { boundSecretHash, presentedSecretHash } from "./node_auth.js";
import type { IntroTokenRequest, NodeIntroTokens } from "./node_intro.js";

/** Nomad's NodeDrainUpdateResponse and NodeEligibilityUpdateResponse. */
export interface NodeUpdateResponse {
  NodeModifyIndex: number;
  EvalIDs: string[];
  EvalCreateIndex: number;
  Index: number;
}

/** Longest a GetAllocs blocking query may wait. */
const MAX_WAIT_MS = 5 * 60_000;

export class NodeEndpoint {
  constructor(
    private readonly deps: ServerDeps,
    /** The leader's monitor, or the cluster's relay to it (server/leader/liveness.ts). */
    private readonly liveness: Pick<HeartbeatMonitor, "reset" | "ttlMs">,
    /** Why this server cannot vouch for a node's liveness now (leader/contact.ts); undefined: it can. */
    private readonly cannotVouch: () => string | undefined = () => undefined,
    /** Node introduction (node_intro.ts); absent: any new node ID registers (enforcement "none"). */
    private readonly intro?: NodeIntroTokens,
  ) {}

  /** A new node introduction token (PUT /v1/acl/identity/client-introduction-token); never logged. */
  createIntroToken(req: IntroTokenRequest): { JWT: string } {
    if (!this.intro) throw new BerthError("ERR_NOT_FOUND", "node introduction is not enabled on this server");
    const t = this.intro.create(req);
    this.deps.log.info("node introduction token created", {
      token_id: t.ID,
      node_name: req.NodeName || undefined,
      expires_at: new Date(t.ExpiresAt).toISOString(),
    });
    return { JWT: t.JWT };
  }

  /**
   * Registers (or re-registers) the node from what its agent reports, validated first
   * (validateReportedNode): a peer that sends junk gets a validation error naming the field and
   * nothing is stored, so no odd record can reach the scheduler. The node must then prove who it
   * is with its secret (node_auth.ts), checked against the stored record in the same transaction
   * that writes it: of two first registrations racing for one new ID, only one binds its secret,
   * and a refused registration changes nothing. A node ID never seen before must also be
   * introduced (node_intro.ts): under "strict" enforcement one without a valid introduction token
   * is refused (ERR_PERMISSION_DENIED) in that transaction, so nothing is stored; an ID on record
   * never needs a token again.
   */
  async register(req: NodeRegisterRequest): Promise<NodeRegisterResponse> {
    if (!isObject(req)) throw validationError("body", "must be an object");
    const reported = validateReportedNode(req.Node);
    const presented = presentedSecretHash(req.Node);
    const order = validateReportOrder("ReportOrder", req.ReportOrder);
    let unintroduced: string | undefined;
    const node = await this.deps.store
      .txn((tx) => {
        const prev = tx.getNode(reported.ID);
        unintroduced = prev ? undefined : this.intro?.admitNewNode(req.IntroToken, reported.Name);
        const secretHash = boundSecretHash(prev?.SecretIDHash, presented);
        // A registration that waited in this server's socket (paused, hung) while the agent reported
        // again elsewhere must not roll the node back (structs/node_report.ts).
        refuseStaleReport(reported.ID, prev?.ReportOrder, order);
        // The drain and the eligibility are the operator's, kept by the server: an agent's
        // (re-)registration neither sets nor clears them. A registration brings the node's plugin
        // instances back onto the plugin records (no CSIPluginsDetachedAt).
        const next: Node = {
          ...reported,
          Status: "ready",
          StatusDescription: "",
          SchedulingEligibility: prev?.SchedulingEligibility ?? reported.SchedulingEligibility,
          DrainStrategy: prev?.DrainStrategy ?? null,
          LastDrain: prev?.LastDrain ?? null,
          StatusUpdatedAt: Date.now(),
          SecretIDHash: secretHash,
          ...reportOrder(order ?? prev?.ReportOrder),
          CreateIndex: prev?.CreateIndex ?? 0,
          ModifyIndex: prev?.ModifyIndex ?? 0,
        };
        return tx.putNode(next);
      })
      .catch((err: unknown) => this.logStale(err));
    this.liveness.reset(node.ID);
    this.deps.log.info("node registered", { node: node.ID, name: node.Name });
    if (unintroduced !== undefined) {
      this.deps.log.warn(
        'a new node registered without a valid introduction token (client_introduction enforcement is "warn"; "strict" would refuse it)',
        { node: node.ID, name: node.Name, reason: unintroduced },
      );
    }
    void this.deps.scheduler.retryBlocked([nodeWake(node)]);
    return { HeartbeatTTL: this.liveness.ttlMs, Index: this.deps.store.index() };
  }

  async heartbeat(req: NodeHeartbeatRequest): Promise<NodeHeartbeatResponse> {
    if (!isObject(req)) throw validationError("body", "must be an object");
    checkId("NodeID", req.NodeID);
    // An acknowledged heartbeat renews the node's lease (its self-fence counts from it): only a
    // server in contact with its cluster may give one.
    const refusal = this.cannotVouch();
    if (refusal !== undefined)
      throw new BerthError("ERR_RPC_UNAVAILABLE", `heartbeat not accepted: ${refusal}`);
    const node = this.deps.store.getNode(req.NodeID);
    if (!node) throw notFound("node", req.NodeID);
    this.liveness.reset(node.ID);
    if (node.Status !== "ready") {
      await this.deps.store.txn((tx) => {
        const cur = tx.getNode(node.ID);
        if (cur && cur.Status !== "ready") tx.putNode(markNodeReady(cur, Date.now()));
      });
      void this.deps.scheduler.retryBlocked([nodeWake(node)]);
    }
    return { HeartbeatTTL: this.liveness.ttlMs, Index: this.deps.store.index() };
  }

  async updateFingerprint(input: NodeFingerprintRequest): Promise<{ Index: number }> {
    const req = validateFingerprint(input);
    const order = validateReportOrder("ReportOrder", input.ReportOrder);
    const changed = await this.deps.store
      .txn((tx) => {
        const node = tx.getNode(req.NodeID);
        if (!node) throw notFound("node", req.NodeID);
        refuseStaleReport(req.NodeID, node.ReportOrder, order);
        const next = tx.putNode({
          ...node,
          Drivers: req.Drivers ?? node.Drivers,
          CSIControllerPlugins: req.CSIControllerPlugins,
          CSINodePlugins: req.CSINodePlugins,
          ...reportOrder(order ?? node.ReportOrder),
        });
        return next.ModifyIndex !== node.ModifyIndex ? next : undefined;
      })
      .catch((err: unknown) => this.logStale(err));
    if (changed) void this.deps.scheduler.retryBlocked([nodeWake(changed)]);
    return { Index: this.deps.store.index() };
  }

  /**
   * Starts, updates or cancels the node's drain (Nomad's Node.UpdateDrain). The drainer does the
   * rest from the stored strategy; a cancel with MarkEligible lets the node take work again.
   */
  async updateDrain(nodeId: string, req: DrainRequest): Promise<NodeUpdateResponse> {
    const { before, after } = await this.deps.store.txn((tx) => {
      const cur = tx.getNode(nodeId);
      if (!cur) throw notFound("node", nodeId);
      return { before: cur, after: tx.putNode(applyDrainRequest(cur, req, Date.now())) };
    });
    this.deps.log.info(req.DrainSpec ? "node drain set" : "node drain unset", {
      node: nodeId,
      deadline_ns: req.DrainSpec?.Deadline,
      ignore_system_jobs: req.DrainSpec?.IgnoreSystemJobs,
      eligibility: after.SchedulingEligibility,
    });
    await this.afterEligibilityChange(before, after);
    return this.updateResponse(after);
  }

  /** Nomad's Node.UpdateEligibility; a draining node cannot be made eligible. */
  async updateEligibility(nodeId: string, eligibility: SchedulingEligibility): Promise<NodeUpdateResponse> {
    const { before, after } = await this.deps.store.txn((tx) => {
      const cur = tx.getNode(nodeId);
      if (!cur) throw notFound("node", nodeId);
      return { before: cur, after: tx.putNode(applyEligibility(cur, eligibility)) };
    });
    await this.afterEligibilityChange(before, after);
    return this.updateResponse(after);
  }

  /**
   * A node that became eligible may take work again: the system and sysbatch jobs (which run on
   * every eligible node; the scheduler re-evaluates them with the blocked jobs), and the blocked
   * jobs. Answered once that round has run, so the caller's next read sees the node's new allocs.
   */
  private async afterEligibilityChange(before: Node, after: Node): Promise<void> {
    if (after.SchedulingEligibility !== "eligible" || before.SchedulingEligibility === "eligible") return;
    await this.deps.scheduler.retryBlocked([nodeWake(after)]);
  }

  /** Logs a refused stale report (refuseStaleReport) before passing any error on. */
  private logStale(err: unknown): never {
    if (isStaleReportError(err))
      this.deps.log.warn("refused a node report older than the one applied", { error: err.message });
    throw err;
  }

  private updateResponse(node: Node): NodeUpdateResponse {
    return {
      NodeModifyIndex: node.ModifyIndex,
      EvalIDs: [],
      EvalCreateIndex: 0,
      Index: this.deps.store.index(),
    };
  }

  /**
   * Blocking query: answers as soon as one of the node's allocs was modified after MinIndex (at
   * once when MinIndex is 0), or after WaitMs with whatever is there. Index is the allocs table
   * index at the read, so the next call with it waits for the next change.
   */
  async getAllocs(input: NodeGetAllocsRequest, signal: AbortSignal): Promise<NodeGetAllocsResponse> {
    const req = validateGetAllocs(input);
    const { store } = this.deps;
    if (!store.getNode(req.NodeID)) throw notFound("node", req.NodeID);
    const deadline = Date.now() + Math.min(Math.max(req.WaitMs ?? 0, 0), MAX_WAIT_MS);
    for (;;) {
      const index = store.tableIndex("allocs");
      const allocs = store.allocsByNode(req.NodeID);
      // AllocModifyIndex, not ModifyIndex: the node's own status reports do not move it (store.ts
      // putAlloc), so they do not send the node its whole alloc list back.
      const newest = allocs.reduce((m, a) => Math.max(m, a.AllocModifyIndex), 0);
      const left = deadline - Date.now();
      if (req.MinIndex <= 0 || newest > req.MinIndex || left <= 0) {
        return { Allocs: allocs, Index: Math.max(index, 1) };
      }
      // Only a server write to this node's allocs wakes it: with thousands of nodes waiting, an
      // alloc update wakes the one agent it concerns, not every node's GetAllocs (watch.ts), and a
      // node's own report (100 allocs starting: hundreds of them) wakes no one.
      await store.waitFor(["allocs"], index, signal, left, [watchKeys.serverAllocsOfNode(req.NodeID)]);
    }
  }

  /** Applies the client's view of its allocs; an alloc of another node is refused. */
  async updateAllocs(input: NodeUpdateAllocsRequest): Promise<{ Index: number }> {
    const req = validateAllocUpdates(input);
    const applied = await this.deps.store.txn((tx) => applyAllocReports(tx, req));
    if (applied.stale > 0)
      this.deps.log.warn("refused alloc reports older than the ones applied", {
        node: req.NodeID,
        allocs: applied.stale,
      });
    await this.evaluateAfterReports(req.NodeID, applied);
    return { Index: this.deps.store.index() };
  }

  /**
   * The passes a node's alloc reports call for. A terminal alloc frees capacity and may need a
   * replacement (batch allocs that completed are not replaced). Nomad's Node.UpdateAlloc creates
   * an eval ("alloc-failure") only for a failed alloc; a finished one creates none. Here a finished
   * alloc's job gets a quiet pass: it records an eval only when it places, stops or fails to place
   * something (a slot the alloc's exit left empty), labelled "queued-allocs" as Nomad's unblocked
   * work is; a pass with nothing to do leaves no record, so finished allocs no longer crowd the
   * job's evaluations. A failed system or sysbatch alloc starts no pass (Nomad creates no eval for
   * an alloc without a reschedule policy): its node's restart policy was its retry, and it is
   * placed again on its node only by the job's next pass (a node change, a new version), never in
   * a tight loop. A reconnect evaluates its job (unless an ended alloc did already).
   */
  private async evaluateAfterReports(nodeId: string, applied: AppliedReports): Promise<void> {
    const ended = applied.endedJobs;
    for (const j of ended) {
      if (j.failed && j.everyNode) continue;
      if (j.failed) await this.deps.scheduler.evaluate(j.namespace, j.id, "alloc-failure");
      else await this.deps.scheduler.evaluate(j.namespace, j.id, "queued-allocs", { quiet: true });
    }
    for (const [k, j] of applied.reconnects) {
      if (!ended.some((t) => `${t.namespace}/${t.id}` === k))
        await this.deps.scheduler.evaluate(j.namespace, j.id, "reconnect");
    }
    if (ended.length > 0) {
      const node = this.deps.store.getNode(nodeId);
      void this.deps.scheduler.retryBlocked(node ? [nodeWake(node), ...applied.freedVolumes] : undefined);
    }
  }
}

/** The ReportOrder field to store: absent when there is none (no `undefined` key in the record). */
function reportOrder(order: [number, number] | undefined): Pick<Node, "ReportOrder"> {
  return order ? { ReportOrder: order } : {};
}
