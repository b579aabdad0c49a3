/**
 * One SQLite transaction's writes (StateWriter). Records are stamped as store.ts's index contract
 * says; plugin summaries and instances follow from node, job and alloc writes as deltas computed
 * by derive_plugins.ts, written inside the same transaction (plugin_writer.ts). While the
 * commit feed has listeners, every record put or deleted is recorded with what it was before
 * (commit_recorder.ts); job versions and plugin instance rows, kept beside their job and plugin
 * records, are not records of their own in the feed.
 */
import { allocIndex, isAllocTerminal, type Allocation } from "../../../structs/alloc.js";
import type { Deployment } from "../../../structs/deployment.js";
import type { Evaluation } from "../../../structs/eval.js";
import { volumeSourceForAlloc, type Job } from "../../../structs/job.js";
import type { Namespace } from "../../../structs/namespace.js";
import type { Node } from "../../../structs/node.js";
import type { CSIPlugin, CSIPluginSummary } from "../../../structs/plugin.js";
import { jobPluginUses } from "../../../structs/plugin_jobs.js";
import type { CSIVolume } from "../../../structs/volume.js";
import type { VolumeCreateIntent } from "../../../structs/volume_intent.js";
import type { PeriodicLaunch } from "../../../structs/periodic.js";
import type { PluginCapacity } from "../../../structs/capacity.js";
import { allocLiveJobs } from "./derive_plugins.js";
import { contentOf, stamp } from "./records.js";
import type { SqliteEngine } from "./engine.js";
import { upsertJobVersion } from "./deployments.js";
import { SqlitePluginWriter } from "./plugin_writer.js";
import type { PutAllocOptions, StateWriter, Table } from "../store.js";
import { SqliteAclWriter } from "./acl.js";
import type { ACLPolicy, ACLToken } from "../../../structs/acl_records.js";
import { allocWatchKeys, watchKeys, type WatchKey } from "../watch_keys.js";
import type { TxnChanges } from "../commit_recorder.js";
import { putVolumeByText } from "./volume_put.js";
import { READER_READS, withEngineReads } from "./reads.js";

type AllocKeys = { namespace: string; job_id: string; live: number; node_id: string; job_key: string | null };

/** Whether two versions of an alloc differ only in their indexes and job copy. */
function sameAllocBesideJob(a: Allocation, b: Allocation): boolean {
  return contentOf({ ...a, Job: undefined }) === contentOf({ ...b, Job: undefined });
}

/** What one txn's fn did: its result, and (when it wrote) the index it took and what it touched. */
export interface Written<T> {
  result: T;
  writeIndex: number;
  touched: Set<Table>;
  /** The objects it put or deleted, for the blocking queries waiting on them (watch.ts). */
  keys: Set<WatchKey>;
  changes: TxnChanges | undefined;
}

/**
 * Runs one txn's `fn` with a writer at the engine's next index, inside the caller's transaction or
 * savepoint, and flushes the plugin deltas it left. The engine's indexes do not move: the caller
 * `advance`s them when the txn wrote (`touched` not empty). `changes` records the txn for the
 * commit feed, only while someone listens.
 */
export function runWrite<T>(
  engine: SqliteEngine,
  fn: (tx: StateWriter) => T,
  changes?: TxnChanges,
): Written<T> {
  const touched = new Set<Table>();
  const keys = new Set<WatchKey>();
  const writeIndex = engine.index() + 1;
  const writer = new SqliteWriter(engine, writeIndex, touched, keys, changes);
  const result = fn(writer);
  writer.flushPlugins();
  return { result, writeIndex, touched, keys, changes };
}

/** The writes; its reads are the engine's (reads.ts), but for the plugin reads below. */
class TxnWriter implements Omit<StateWriter, Exclude<(typeof READER_READS)[number], PluginRead>> {
  private readonly acl: SqliteAclWriter;
  private readonly plugins: SqlitePluginWriter;

  constructor(
    readonly engine: SqliteEngine,
    readonly writeIndex: number,
    private readonly touched: Set<Table>,
    /** The objects this txn puts or deletes, for the blocking queries waiting on them (watch.ts). */
    private readonly keys: Set<WatchKey>,
    /** The commit feed's record of this txn (commit_recorder.ts); absent while no one listens. */
    private readonly changes?: TxnChanges,
  ) {
    this.acl = new SqliteAclWriter(engine.aclStatements, engine, writeIndex, touched, changes);
    this.plugins = new SqlitePluginWriter(
      engine.statements,
      engine.pluginStatements,
      writeIndex,
      engine.now,
      touched,
      keys,
      changes,
    );
  }

  private get s() {
    return this.engine.statements;
  }

  putAclPolicy(p: ACLPolicy) {
    return this.acl.putAclPolicy(p);
  }
  deleteAclPolicy(name: string) {
    return this.acl.deleteAclPolicy(name);
  }
  putAclToken(t: ACLToken) {
    return this.acl.putAclToken(t);
  }
  deleteAclToken(accessorId: string) {
    return this.acl.deleteAclToken(accessorId);
  }
  markAclBootstrapped() {
    this.acl.markAclBootstrapped();
  }

  // The plugin reads see the txn's plugin deltas: those alloc writes left pending are flushed first.
  getPlugin(id: string): CSIPlugin | undefined {
    this.flushPlugins();
    return this.engine.getPlugin(id);
  }
  pluginSummary(id: string): CSIPluginSummary | undefined {
    this.flushPlugins();
    return this.engine.pluginSummary(id);
  }
  listPlugins(): CSIPluginSummary[] {
    this.flushPlugins();
    return this.engine.listPlugins();
  }

  /** Brings up to date the plugins of the system jobs alloc writes left stale (SqlitePluginWriter). */
  flushPlugins(): void {
    this.plugins.flush();
  }

  putNode(node: Node): Node {
    const prev = this.engine.getNode(node.ID);
    if (prev && contentOf(prev) === contentOf(node)) return prev;
    const rec = stamp(node, prev, this.writeIndex);
    const json = JSON.stringify(rec);
    this.s.putNode.run(rec.ID, json);
    this.changes?.put("nodes", "", rec.ID, json, prev);
    this.touched.add("nodes");
    this.keys.add(watchKeys.node(rec.ID));
    this.plugins.applyNodeDeltas(rec.ID, prev, rec);
    return rec;
  }

  deleteNode(id: string): void {
    const prev = this.engine.getNode(id);
    if (!prev) return;
    this.s.delNode.run(id);
    this.engine.changeStatements.markNodesDeleted.run(this.writeIndex);
    this.changes?.delete("nodes", "", id, prev);
    this.touched.add("nodes");
    this.keys.add(watchKeys.node(id));
    this.plugins.applyNodeDeltas(id, prev, undefined);
  }

  putJob(job: Job): Job {
    const prev = this.engine.getJob(job.Namespace, job.ID);
    if (prev && contentOf(prev) === contentOf(job)) return prev;
    const rec = stamp(job, prev, this.writeIndex);
    const json = JSON.stringify(rec);
    this.s.putJob.run(rec.Namespace, rec.ID, json);
    this.changes?.put("jobs", rec.Namespace, rec.ID, json, prev);
    this.touched.add("jobs");
    this.keys.add(watchKeys.job(rec.Namespace, rec.ID));
    this.plugins.syncPluginUses(rec.Namespace, rec.ID, jobPluginUses(rec));
    upsertJobVersion(this.engine.deploymentStatements, rec);
    this.touched.add("versions");
    return rec;
  }

  deleteJob(namespace: string, id: string): void {
    if (this.changes) this.recordJobDelete(namespace, id);
    if (this.s.delJob.run(namespace, id).changes === 0) return;
    this.touched.add("jobs");
    this.keys.add(watchKeys.job(namespace, id));
    if (this.engine.deploymentStatements.delVersions.run(namespace, id).changes > 0)
      this.touched.add("versions");
    if (this.engine.deploymentStatements.delByJob.run(namespace, id).changes > 0)
      this.touched.add("deployments");
    this.plugins.syncPluginUses(namespace, id, []);
  }

  /** The commit feed's view of a purge: the job and its deployments, as they were. */
  private recordJobDelete(namespace: string, id: string): void {
    const prev = this.engine.getJob(namespace, id);
    if (!prev) return;
    this.changes!.delete("jobs", namespace, id, prev);
    for (const d of this.engine.deploymentsByJob(namespace, id))
      this.changes!.delete("deployments", d.Namespace, d.ID, d);
  }

  deletePlugin(id: string): boolean {
    return this.plugins.deletePlugin(id);
  }

  putAlloc(alloc: Allocation, opts: PutAllocOptions = {}): Allocation {
    const prev = this.engine.getAlloc(alloc.ID);
    const jobs = this.engine.allocJobs;
    // The job copy is compared by key (a copy read from the store knows its key), the rest by text.
    const job = jobs.copyOf(alloc.Job);
    const prevKey = prev ? (jobs.copyOf(prev.Job)?.key ?? null) : null;
    if (prev && prevKey === (job?.key ?? null) && sameAllocBesideJob(prev, alloc)) return prev;
    const allocModifyIndex = opts.fromClient && prev ? prev.AllocModifyIndex : this.writeIndex;
    const rec = { ...stamp(alloc, prev, this.writeIndex), AllocModifyIndex: allocModifyIndex };
    const live = isAllocTerminal(rec) ? 0 : 1;
    const jobKey = jobs.store(job);
    const json = JSON.stringify({ ...rec, Job: undefined });
    this.s.putAlloc.run(rec.ID, rec.Namespace, rec.NodeID, rec.JobID, rec.TaskGroup, live, json, jobKey);
    if (prevKey !== jobKey) jobs.dropIfUnused(prevKey);
    this.changes?.put("allocs", rec.Namespace, rec.ID, json, prev);
    this.plugins.markStale(allocLiveJobs(prev, rec));
    this.s.delAllocVolumes.run(rec.ID);
    const group = rec.Job.TaskGroups.find((g) => g.Name === rec.TaskGroup);
    for (const req of Object.values(group?.Volumes ?? {})) {
      if (req.Type !== "csi") continue;
      this.s.putAllocVolume.run(rec.Namespace, volumeSourceForAlloc(req, allocIndex(rec)), rec.ID);
    }
    this.touched.add("allocs");
    for (const a of prev ? [prev, rec] : [rec]) {
      allocWatchKeys(a).forEach((k) => this.keys.add(k));
      if (allocModifyIndex === this.writeIndex) this.keys.add(watchKeys.serverAllocsOfNode(a.NodeID));
    }
    return rec;
  }

  deleteAlloc(id: string): void {
    const keys = this.s.allocKeys.get(id) as AllocKeys | undefined;
    if (!keys) return;
    if (this.changes) this.changes.delete("allocs", keys.namespace, id, this.engine.getAlloc(id));
    this.s.delAlloc.run(id);
    this.engine.allocJobs.dropIfUnused(keys.job_key);
    if (keys.live === 1) this.plugins.markStale([{ namespace: keys.namespace, jobId: keys.job_id }]);
    this.s.delAllocVolumes.run(id);
    this.touched.add("allocs");
    const gone = { ID: id, NodeID: keys.node_id, Namespace: keys.namespace, JobID: keys.job_id };
    allocWatchKeys(gone).forEach((k) => this.keys.add(k));
    this.keys.add(watchKeys.serverAllocsOfNode(keys.node_id));
  }

  putVolume(vol: CSIVolume): CSIVolume {
    const byText = this.putVolumeByText(vol);
    if (byText) return byText;
    const prev = this.engine.getVolume(vol.Namespace, vol.ID);
    if (prev && contentOf(prev) === contentOf(vol)) return prev;
    const rec = stamp(vol, prev, this.writeIndex);
    const stored = this.engine.atRest ? this.engine.atRest.sealVolume(rec) : rec;
    this.s.putVolume.run(rec.Namespace, rec.ID, rec.PluginID, JSON.stringify(stored));
    // The feed carries the record as the store holds it for reads: secrets open, not sealed.
    this.changes?.put("volumes", rec.Namespace, rec.ID, JSON.stringify(rec), prev);
    this.touched.add("volumes");
    this.keys.add(watchKeys.volume(rec.Namespace, rec.ID));
    return rec;
  }

  private putVolumeByText(vol: CSIVolume): CSIVolume | undefined {
    const put = putVolumeByText(this.s, vol, this.writeIndex);
    if (!put?.json) return put?.rec;
    // The commit feed, only while someone listens: the stored record is parsed when one reads it.
    this.changes?.putOverText("volumes", vol.Namespace, vol.ID, put.json, put.before!);
    this.touched.add("volumes");
    this.keys.add(watchKeys.volume(vol.Namespace, vol.ID));
    return put.rec;
  }

  deleteVolume(namespace: string, id: string): void {
    const prev = this.changes ? this.engine.getVolume(namespace, id) : undefined;
    if (this.s.delVolume.run(namespace, id).changes === 0) return;
    if (prev) this.changes!.delete("volumes", namespace, id, prev);
    this.touched.add("volumes");
    this.keys.add(watchKeys.volume(namespace, id));
  }

  putEval(ev: Evaluation): Evaluation {
    const prev = this.engine.getEval(ev.ID);
    if (prev && contentOf(prev) === contentOf(ev)) return prev;
    const rec = stamp(ev, prev, this.writeIndex);
    const json = JSON.stringify(rec);
    this.s.putEval.run(rec.ID, rec.Namespace, rec.JobID, rec.CreateIndex, json);
    this.changes?.put("evals", rec.Namespace, rec.ID, json, prev);
    this.touched.add("evals");
    return rec;
  }

  deleteEval(id: string): void {
    const prev = this.changes ? this.engine.getEval(id) : undefined;
    if (this.s.delEval.run(id).changes === 0) return;
    this.touched.add("evals");
    if (prev) this.changes!.delete("evals", prev.Namespace, id, prev);
  }

  putVolumeIntent(intent: VolumeCreateIntent): VolumeCreateIntent {
    const prev = this.engine.getVolumeIntent(intent.Namespace, intent.ID);
    const rec = stamp(intent, prev, this.writeIndex);
    const stored = this.engine.atRest ? this.engine.atRest.sealIntent(rec) : rec;
    this.engine.intentStatements.put.run(rec.Namespace, rec.ID, JSON.stringify(stored));
    this.changes?.put("intents", rec.Namespace, rec.ID, JSON.stringify(rec), prev);
    this.touched.add("intents");
    return rec;
  }

  deleteVolumeIntent(namespace: string, id: string): void {
    const prev = this.changes ? this.engine.getVolumeIntent(namespace, id) : undefined;
    if (this.engine.intentStatements.del.run(namespace, id).changes === 0) return;
    this.touched.add("intents");
    if (prev) this.changes!.delete("intents", namespace, id, prev);
  }

  /** Kept beside its job (periodic.ts): a write of the `jobs` table, not a record of the feed. */
  putPeriodicLaunch(launch: PeriodicLaunch): PeriodicLaunch {
    const prev = this.engine.getPeriodicLaunch(launch.Namespace, launch.ID);
    if (prev && contentOf(prev) === contentOf(launch)) return prev;
    const rec = stamp(launch, prev, this.writeIndex);
    this.engine.periodicStatements.put.run(rec.Namespace, rec.ID, JSON.stringify(rec));
    this.touched.add("jobs");
    return rec;
  }

  deletePeriodicLaunch(namespace: string, id: string): void {
    if (this.engine.periodicStatements.del.run(namespace, id).changes === 0) return;
    this.touched.add("jobs");
  }

  /** Kept beside its plugin (capacity.ts): a write of the `plugins` table, not a record of the feed. */
  putPluginCapacity(capacity: PluginCapacity): PluginCapacity {
    const prev = this.engine.getPluginCapacity(capacity.PluginID);
    if (prev && contentOf(prev) === contentOf(capacity)) return prev;
    const rec = stamp(capacity, prev, this.writeIndex);
    this.engine.capacityStatements.put.run(rec.PluginID, JSON.stringify(rec));
    this.touched.add("plugins");
    return rec;
  }

  deletePluginCapacity(pluginId: string): void {
    if (this.engine.capacityStatements.del.run(pluginId).changes === 0) return;
    this.touched.add("plugins");
  }

  putDeployment(d: Deployment): Deployment {
    const prev = this.engine.getDeployment(d.ID);
    if (prev && contentOf(prev) === contentOf(d)) return prev;
    const rec = stamp(d, prev, this.writeIndex);
    const json = JSON.stringify(rec);
    this.engine.deploymentStatements.put.run(rec.ID, rec.Namespace, rec.JobID, rec.CreateIndex, json);
    this.changes?.put("deployments", rec.Namespace, rec.ID, json, prev);
    this.touched.add("deployments");
    return rec;
  }

  deleteDeployment(id: string): void {
    const prev = this.changes ? this.engine.getDeployment(id) : undefined;
    if (this.engine.deploymentStatements.del.run(id).changes === 0) return;
    this.touched.add("deployments");
    if (prev) this.changes!.delete("deployments", prev.Namespace, id, prev);
  }

  putNamespace(ns: Namespace): Namespace {
    const prev = this.engine.getNamespace(ns.Name);
    if (prev && contentOf(prev) === contentOf(ns)) return prev;
    const rec = stamp(ns, prev, this.writeIndex);
    const json = JSON.stringify(rec);
    this.engine.namespaceStatements.put.run(rec.Name, json);
    this.changes?.put("namespaces", "", rec.Name, json, prev);
    this.touched.add("namespaces");
    return rec;
  }

  deleteNamespace(name: string): void {
    const prev = this.changes ? this.engine.getNamespace(name) : undefined;
    if (this.engine.namespaceStatements.del.run(name).changes === 0) return;
    this.touched.add("namespaces");
    if (prev) this.changes!.delete("namespaces", "", name, prev);
  }
}

type PluginRead = "getPlugin" | "pluginSummary" | "listPlugins";

/** One txn's StateWriter over the engine: TxnWriter's writes and plugin reads, the engine's other reads. */
const SqliteWriter = withEngineReads(TxnWriter, READER_READS);
