/**
 * The garbage collector: every `intervalMs` one pass removes collectable jobs, allocs, nodes, plugins,
 * evaluations and deployments (decide.ts) in a single write transaction. A pass reads every alloc, node and plugin — it is
 * periodic background work, never per request. Nodes go before plugins, so a plugin whose last
 * instance was on a collected node is stamped empty in this pass and removed a threshold later.
 *
 * Plugins are also collected as soon as they become empty: a second loop wakes on every change of
 * the plugins table and removes the plugins that have had no instance and no job for
 * `pluginThresholdMs` — 0 by default, as Nomad deletes an empty plugin in the same write that
 * empties it (its state store's updateOrGCPlugin). A plugin whose job only restarts its tasks is
 * never empty (the job still declares it), so a purged plugin job's record goes once its last
 * instance is gone, instead of staying listed as 0/0 until the next periodic pass. The wake reads
 * the plugins only; it writes only when there is something to remove.
 */
import type { Allocation } from "../../structs/alloc.js";
import { isAbortError, sleep } from "../../internal/abort.js";
import type { Logger } from "../../internal/log.js";
import type { StateStore, StateWriter } from "../state/store.js";
import {
  allocCollectable,
  deploymentCollectable,
  evalCollectable,
  nodeCollectable,
  pluginCollectable,
} from "./decide.js";
import { withDefaults } from "../../internal/with_defaults.js";
import { collectJobsIn } from "./jobs.js";
import { holdsClaim } from "./claims.js";

export interface GcOptions {
  intervalMs: number;
  /** How long a collectable alloc stays after it last changed. */
  allocThresholdMs: number;
  /** How long a node stays down before it is removed. */
  nodeThresholdMs: number;
  /** How long a plugin stays with no instance and no job before it is removed (0: at once). */
  pluginThresholdMs: number;
  /** How long the evaluations of a job that is gone stay after they last changed. */
  evalThresholdMs: number;
  /** How long a terminal deployment stays after it last changed (Nomad's deployment_gc_threshold). */
  deploymentThresholdMs: number;
  /** How long a dead, stopped (or finished batch) job stays after it last changed (job_gc_threshold). */
  jobThresholdMs: number;
}

/** `berth system gc` (Nomad's force GC): every threshold 0, the interval unused. */
export const FORCE_GC: Omit<GcOptions, "intervalMs"> = {
  allocThresholdMs: 0,
  nodeThresholdMs: 0,
  pluginThresholdMs: 0,
  evalThresholdMs: 0,
  deploymentThresholdMs: 0,
  jobThresholdMs: 0,
};

export const DEFAULT_GC_OPTIONS: GcOptions = {
  intervalMs: 5 * 60_000,
  allocThresholdMs: 60 * 60_000,
  nodeThresholdMs: 24 * 60 * 60_000,
  pluginThresholdMs: 0,
  evalThresholdMs: 60 * 60_000,
  deploymentThresholdMs: 60 * 60_000,
  jobThresholdMs: 4 * 60 * 60_000,
};

export interface GcResult {
  /** `namespace/id` of each job removed. */
  jobs: string[];
  allocs: string[];
  nodes: string[];
  plugins: string[];
}

export class GarbageCollector {
  private readonly opts: GcOptions;
  private ctl = new AbortController();
  private loop: Promise<void> | undefined;
  private pluginLoop: Promise<void> | undefined;

  constructor(
    private readonly store: StateStore,
    private readonly log: Logger,
    opts: Partial<GcOptions> = {},
  ) {
    this.opts = withDefaults(DEFAULT_GC_OPTIONS, opts);
  }

  start(): void {
    if (this.loop) return;
    this.ctl = new AbortController();
    this.loop = this.run(this.ctl.signal);
    this.pluginLoop = this.watchPlugins(this.ctl.signal);
  }

  async stop(): Promise<void> {
    this.ctl.abort();
    await this.loop;
    await this.pluginLoop;
    this.loop = undefined;
    this.pluginLoop = undefined;
  }

  /** Removes the plugins that are collectable now; reads only when there are none. */
  async collectPlugins(nowMs = Date.now()): Promise<string[]> {
    const due = (p: Parameters<typeof pluginCollectable>[0]) =>
      pluginCollectable(p, nowMs, this.opts.pluginThresholdMs);
    if (!this.store.listPlugins().some(due)) return [];
    const removed = await this.store.txn((tx) =>
      tx
        .listPlugins()
        .filter((p) => due(p) && tx.deletePlugin(p.ID))
        .map((p) => p.ID),
    );
    if (removed.length > 0) this.log.info("garbage collected empty plugins", { plugins: removed });
    return removed;
  }

  private async watchPlugins(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const seen = this.store.tableIndex("plugins");
        await this.collectPlugins();
        await this.store.waitFor(["plugins"], seen, signal, this.opts.intervalMs);
      } catch (err) {
        if (isAbortError(err)) return;
        this.log.error("plugin garbage collection failed", { error: err });
        await sleep(this.opts.intervalMs, signal).catch(() => undefined);
      }
    }
  }

  /** One pass; `nowMs` is injectable for tests. */
  collect(nowMs = Date.now()): Promise<GcResult> {
    return collectOnce(this.store, this.log, nowMs, this.opts);
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await sleep(this.opts.intervalMs, signal);
        await this.collect();
      } catch (err) {
        if (!isAbortError(err)) this.log.error("garbage collection failed", { error: err });
      }
    }
  }
}

/**
 * One pass in one write transaction: jobs first (their allocs and evals are then those of a gone
 * job), then allocs, nodes and plugins, evaluations, deployments. Logged when it removed anything.
 */
export async function collectOnce(
  store: StateStore,
  log: Logger,
  nowMs: number,
  opts: Omit<GcOptions, "intervalMs">,
): Promise<GcResult & { evals: string[]; deployments: string[] }> {
  const out = await store.txn((tx) => {
    const jobs = collectJobsIn(tx, nowMs, opts.jobThresholdMs);
    const result = collectIn(tx, nowMs, opts);
    return {
      ...result,
      jobs,
      evals: collectEvalsIn(tx, nowMs, opts),
      deployments: collectDeploymentsIn(tx, nowMs, opts),
    };
  });
  const count = out.jobs.length + out.allocs.length + out.nodes.length + out.plugins.length;
  if (count + out.evals.length + out.deployments.length > 0) {
    log.info("garbage collected", {
      jobs: out.jobs,
      allocs: out.allocs.length,
      nodes: out.nodes,
      plugins: out.plugins,
      evals: out.evals.length,
      deployments: out.deployments.length,
    });
  }
  return out;
}

/** The allocs, nodes and plugins of one pass (inside its transaction). */
export function collectIn(
  tx: StateWriter,
  nowMs: number,
  opts: Pick<GcOptions, "allocThresholdMs" | "nodeThresholdMs" | "pluginThresholdMs">,
): GcResult {
  const result: GcResult = { jobs: [], allocs: [], nodes: [], plugins: [] };
  for (const a of tx.listAllocs()) {
    const stored = tx.getJob(a.Namespace, a.JobID);
    // An alloc of a purged job whose ID was registered again belongs to no live job.
    const job = stored && stored.CreateIndex === a.Job.CreateIndex ? stored : undefined;
    if (!allocCollectable(a, job, holdsClaim(tx, a), nowMs, opts.allocThresholdMs)) continue;
    tx.deleteAlloc(a.ID);
    result.allocs.push(a.ID);
  }
  for (const n of tx.listNodes()) {
    if (!nodeCollectable(n, tx.allocsByNode(n.ID), nowMs, opts.nodeThresholdMs)) continue;
    tx.deleteNode(n.ID);
    result.nodes.push(n.ID);
  }
  for (const p of tx.listPlugins()) {
    if (pluginCollectable(p, nowMs, opts.pluginThresholdMs) && tx.deletePlugin(p.ID))
      result.plugins.push(p.ID);
  }
  return result;
}

/**
 * Removes the evaluations of jobs that are gone (purged) once old enough; a live job's history is
 * bounded by the scheduler instead. Returns their IDs.
 */
export function collectEvalsIn(tx: StateWriter, nowMs: number, opts: Pick<GcOptions, "evalThresholdMs">) {
  const out: string[] = [];
  const jobExists = new Map<string, boolean>();
  for (const e of tx.listEvals()) {
    const k = `${e.Namespace}\u0000${e.JobID}`;
    if (!jobExists.has(k)) jobExists.set(k, tx.getJob(e.Namespace, e.JobID) !== undefined);
    if (!evalCollectable(e, jobExists.get(k)!, nowMs, opts.evalThresholdMs)) continue;
    tx.deleteEval(e.ID);
    out.push(e.ID);
  }
  return out;
}

/** Removes the terminal deployments that are old enough and named by no live alloc; their IDs. */
export function collectDeploymentsIn(
  tx: StateWriter,
  nowMs: number,
  opts: Pick<GcOptions, "deploymentThresholdMs">,
): string[] {
  const out: string[] = [];
  const byJob = new Map<string, Allocation[]>();
  for (const d of tx.listDeployments()) {
    const k = `${d.Namespace}\u0000${d.JobID}`;
    if (!byJob.has(k)) byJob.set(k, tx.allocsByJob(d.Namespace, d.JobID));
    const allocs = byJob.get(k)!.filter((a) => a.DeploymentID === d.ID);
    if (!deploymentCollectable(d, allocs, nowMs, opts.deploymentThresholdMs)) continue;
    tx.deleteDeployment(d.ID);
    out.push(d.ID);
  }
  return out;
}
