/**
 * The plugin half of one SQLite transaction's writes: a node write moves that node's instance rows
 * and the summaries of the plugins on it, a job write its plugin uses and those plugins' expected
 * counts, an alloc write (through flush) the expected counts of the plugins a system job declares.
 * Each plugin touched costs O(log n) row writes plus its summary, never a pass over its instances.
 */
import type { Node } from "../../../structs/node.js";
import { isPluginEmpty } from "../../../structs/plugin.js";
import { expectedOf, type PluginJobUse } from "../../../structs/plugin_jobs.js";
import { applyPluginDelta, jobPluginDeltas, nodePluginDeltas, type PluginDelta } from "./derive_plugins.js";
import { identityOf, readSummary, writeInstance, type PluginStatements } from "./plugins.js";
import { liveAllocsByGroup } from "./schema.js";
import type { Statements } from "./statements.js";
import type { Table } from "../store.js";
import { watchKeys, type WatchKey } from "../watch_keys.js";
import type { TxnChanges } from "../commit_recorder.js";

export class SqlitePluginWriter {
  /**
   * System jobs whose live allocs an alloc write moved, so the expected counts of the plugins they
   * declare, brought up to date once before the next plugin read of this txn or its commit: a
   * scheduler pass that places an alloc on each of N nodes updates each plugin once, not N times.
   */
  private readonly staleJobs = new Map<string, { namespace: string; jobId: string }>();

  constructor(
    private readonly s: Statements,
    private readonly ps: PluginStatements,
    private readonly writeIndex: number,
    private readonly now: () => number,
    private readonly touched: Set<Table>,
    /** The txn's watch keys (watch_keys.ts): every plugin written names its own. */
    private readonly keys: Set<WatchKey>,
    /** The commit feed's record of the txn: plugins appear in it as their summaries. */
    private readonly changes?: TxnChanges,
  ) {}

  /** Brings up to date the plugins of the system jobs alloc writes left stale (see staleJobs). */
  flush(): void {
    const jobs = [...this.staleJobs.values()];
    this.staleJobs.clear();
    for (const { namespace, jobId } of jobs) {
      for (const use of this.usesOfJob(namespace, jobId)) {
        if (use.system) this.updatePlugin(use.pluginId, { jobs: [this.expectation(use)] });
      }
    }
  }

  markStale(jobs: { namespace: string; jobId: string }[]): void {
    for (const j of jobs) this.staleJobs.set(JSON.stringify([j.namespace, j.jobId]), j);
  }

  /** Records the node's changed plugin instances (plugin_instances) and moves those plugins. */
  applyNodeDeltas(nodeId: string, prev: Node | undefined, next: Node | undefined): void {
    for (const [pluginId, change] of nodePluginDeltas(nodeId, prev, next)) {
      writeInstance(this.ps, pluginId, change.after);
      this.updatePlugin(pluginId, { nodes: [change], identity: identityOf(this.ps, pluginId) });
    }
  }

  /** Replaces the job's plugin uses with `uses`, updating every plugin whose use changed. */
  syncPluginUses(namespace: string, jobId: string, uses: PluginJobUse[]): void {
    for (const { pluginId, use } of jobPluginDeltas(this.usesOfJob(namespace, jobId), uses)) {
      if (use) this.s.putUse.run(pluginId, namespace, jobId, JSON.stringify(use));
      else this.s.delUse.run(pluginId, namespace, jobId);
      const expected = use ? this.expectation(use) : { namespace, jobId, expected: undefined };
      this.updatePlugin(pluginId, { jobs: [expected] });
    }
  }

  /** Deletes the plugin only while it is empty; its instances are gone then too. */
  deletePlugin(id: string): boolean {
    this.flush();
    const cur = readSummary(this.ps, id);
    if (!cur || !isPluginEmpty(cur)) return false;
    this.s.delPlugin.run(id);
    this.changes?.delete("plugins", "", id, cur);
    this.touched.add("plugins");
    this.keys.add(watchKeys.plugin(id));
    return true;
  }

  private usesOfJob(namespace: string, jobId: string): PluginJobUse[] {
    const rows = this.s.usesOfJob.all(namespace, jobId) as { json: string }[];
    return rows.map((r) => JSON.parse(r.json) as PluginJobUse);
  }

  /** What `use`'s job expects of its plugin now (a system job: its live allocs per group). */
  private expectation(use: PluginJobUse) {
    const live = use.system ? liveAllocsByGroup(this.s.liveAllocsOfJob, use.namespace, use.jobId) : {};
    return { namespace: use.namespace, jobId: use.jobId, expected: expectedOf(use, live) };
  }

  private updatePlugin(id: string, delta: PluginDelta): void {
    const prev = readSummary(this.ps, id);
    const next = applyPluginDelta(prev, id, delta, {
      writeIndex: this.writeIndex,
      nowMs: this.now(),
    });
    if (!next) return;
    const json = JSON.stringify(next);
    this.s.putPlugin.run(id, json);
    this.changes?.put("plugins", "", id, json, prev);
    this.touched.add("plugins");
    this.keys.add(watchKeys.plugin(id));
  }
}
