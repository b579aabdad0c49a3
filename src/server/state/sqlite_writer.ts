/**
 * One SQLite transaction's writes (StateWriter). Records are stamped as store.ts's index contract
 * says; plugin records follow from node, job and alloc writes as deltas computed by
 * derive_plugins.ts, written here inside the same transaction.
 */
import { allocIndex, isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import type { Deployment } from "../../structs/deployment.js";
import type { Evaluation } from "../../structs/eval.js";
import { volumeSourceForAlloc, type Job } from "../../structs/job.js";
import type { Namespace } from "../../structs/namespace.js";
import type { Node } from "../../structs/node.js";
import { isPluginEmpty, type CSIPlugin } from "../../structs/plugin.js";
import { expectedOf, jobPluginUses, type PluginJobUse } from "../../structs/plugin_jobs.js";
import type { CSIVolume } from "../../structs/volume.js";
import type { VolumeCreateIntent } from "../../structs/volume_intent.js";
import {
  allocLiveJobs,
  applyPluginDelta,
  jobPluginDeltas,
  nodePluginDeltas,
  type PluginDelta,
} from "./derive_plugins.js";
import { contentOf, stamp } from "./records.js";
import type { SqliteReader } from "./sqlite_reader.js";
import { upsertJobVersion } from "./sqlite_deployments.js";
import { liveAllocsByGroup } from "./sqlite_schema.js";
import type { StateWriter, Table } from "./store.js";
import { SqliteAclWriter } from "./sqlite_acl.js";
import type { ACLPolicy, ACLToken } from "../../structs/acl_records.js";
import { allocWatchKeys, watchKeys, type WatchKey } from "./watch_keys.js";

type AllocKeys = { namespace: string; job_id: string; live: number; node_id: string };

export class SqliteWriter implements StateWriter {
  /**
   * System jobs whose live allocs an alloc write moved, so the expected counts of the plugins they
   * declare, brought up to date once before the next plugin read of this txn or its commit: a
   * scheduler pass that places an alloc on each of N nodes updates each plugin once, not N times.
   */
  private readonly staleJobs = new Map<string, { namespace: string; jobId: string }>();

  private readonly acl: SqliteAclWriter;

  constructor(
    private readonly r: SqliteReader,
    readonly writeIndex: number,
    private readonly touched: Set<Table>,
    /** The objects this txn puts or deletes, for the blocking queries waiting on them (watch.ts). */
    private readonly keys: Set<WatchKey> = new Set(),
  ) {
    this.acl = new SqliteAclWriter(r.aclStatements, r, writeIndex, touched);
  }

  private get s() {
    return this.r.statements;
  }

  index(): number {
    return this.r.index();
  }
  getAclPolicy(name: string) {
    return this.r.getAclPolicy(name);
  }
  listAclPolicies() {
    return this.r.listAclPolicies();
  }
  getAclToken(accessorId: string) {
    return this.r.getAclToken(accessorId);
  }
  aclTokenBySecretHash(secretHash: string) {
    return this.r.aclTokenBySecretHash(secretHash);
  }
  listAclTokens() {
    return this.r.listAclTokens();
  }
  aclBootstrapIndex() {
    return this.r.aclBootstrapIndex();
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
  tableIndex(t: Table): number {
    return this.r.tableIndex(t);
  }
  getNode(id: string) {
    return this.r.getNode(id);
  }
  listNodes() {
    return this.r.listNodes();
  }
  getJob(ns: string, id: string) {
    return this.r.getJob(ns, id);
  }
  listJobs(ns?: string) {
    return this.r.listJobs(ns);
  }
  getAlloc(id: string) {
    return this.r.getAlloc(id);
  }
  listAllocs(ns?: string) {
    return this.r.listAllocs(ns);
  }
  allocsByNode(nodeId: string) {
    return this.r.allocsByNode(nodeId);
  }
  allocsByJob(ns: string, jobId: string) {
    return this.r.allocsByJob(ns, jobId);
  }
  allocsByVolume(ns: string, volumeId: string) {
    return this.r.allocsByVolume(ns, volumeId);
  }
  getVolume(ns: string, id: string) {
    return this.r.getVolume(ns, id);
  }
  listVolumes(filter?: { namespace?: string; pluginId?: string }) {
    return this.r.listVolumes(filter);
  }
  getEval(id: string) {
    return this.r.getEval(id);
  }
  listEvals(ns?: string) {
    return this.r.listEvals(ns);
  }
  evalsByJob(ns: string, jobId: string) {
    return this.r.evalsByJob(ns, jobId);
  }
  getDeployment(id: string) {
    return this.r.getDeployment(id);
  }
  listDeployments(ns?: string) {
    return this.r.listDeployments(ns);
  }
  deploymentsByJob(ns: string, jobId: string) {
    return this.r.deploymentsByJob(ns, jobId);
  }
  jobVersions(ns: string, jobId: string) {
    return this.r.jobVersions(ns, jobId);
  }
  getVolumeIntent(ns: string, id: string) {
    return this.r.getVolumeIntent(ns, id);
  }
  listVolumeIntents() {
    return this.r.listVolumeIntents();
  }
  getNamespace(name: string) {
    return this.r.getNamespace(name);
  }
  listNamespaces() {
    return this.r.listNamespaces();
  }
  getPlugin(id: string): CSIPlugin | undefined {
    this.flushPlugins();
    return this.r.getPlugin(id);
  }
  listPlugins(): CSIPlugin[] {
    this.flushPlugins();
    return this.r.listPlugins();
  }

  /** Brings up to date the plugins of the system jobs alloc writes left stale (see staleJobs). */
  flushPlugins(): void {
    const jobs = [...this.staleJobs.values()];
    this.staleJobs.clear();
    for (const { namespace, jobId } of jobs) {
      for (const use of this.usesOfJob(namespace, jobId)) {
        if (use.system) this.updatePlugin(use.pluginId, { jobs: [this.expectation(use)] });
      }
    }
  }

  putNode(node: Node): Node {
    const prev = this.getNode(node.ID);
    if (prev && contentOf(prev) === contentOf(node)) return prev;
    const rec = stamp(node, prev, this.writeIndex);
    this.s.putNode.run(rec.ID, JSON.stringify(rec));
    this.touched.add("nodes");
    this.keys.add(watchKeys.node(rec.ID));
    this.applyNodeDeltas(rec.ID, prev, rec);
    return rec;
  }

  deleteNode(id: string): void {
    const prev = this.getNode(id);
    if (!prev) return;
    this.s.delNode.run(id);
    this.touched.add("nodes");
    this.keys.add(watchKeys.node(id));
    this.applyNodeDeltas(id, prev, undefined);
  }

  putJob(job: Job): Job {
    const prev = this.getJob(job.Namespace, job.ID);
    if (prev && contentOf(prev) === contentOf(job)) return prev;
    const rec = stamp(job, prev, this.writeIndex);
    this.s.putJob.run(rec.Namespace, rec.ID, JSON.stringify(rec));
    this.touched.add("jobs");
    this.keys.add(watchKeys.job(rec.Namespace, rec.ID));
    this.syncPluginUses(rec.Namespace, rec.ID, jobPluginUses(rec));
    upsertJobVersion(this.r.deploymentStatements, rec);
    this.touched.add("versions");
    return rec;
  }

  deleteJob(namespace: string, id: string): void {
    if (this.s.delJob.run(namespace, id).changes === 0) return;
    this.touched.add("jobs");
    this.keys.add(watchKeys.job(namespace, id));
    if (this.r.deploymentStatements.delVersions.run(namespace, id).changes > 0) this.touched.add("versions");
    if (this.r.deploymentStatements.delByJob.run(namespace, id).changes > 0) this.touched.add("deployments");
    this.syncPluginUses(namespace, id, []);
  }

  deletePlugin(id: string): boolean {
    const cur = this.getPlugin(id);
    if (!cur || !isPluginEmpty(cur)) return false;
    this.s.delPlugin.run(id);
    this.touched.add("plugins");
    this.keys.add(watchKeys.plugin(id));
    return true;
  }

  putAlloc(alloc: Allocation): Allocation {
    const prev = this.getAlloc(alloc.ID);
    if (prev && contentOf(prev) === contentOf(alloc)) return prev;
    const rec = { ...stamp(alloc, prev, this.writeIndex), AllocModifyIndex: this.writeIndex };
    const live = isAllocTerminal(rec) ? 0 : 1;
    this.s.putAlloc.run(
      rec.ID,
      rec.Namespace,
      rec.NodeID,
      rec.JobID,
      rec.TaskGroup,
      live,
      JSON.stringify(rec),
    );
    this.markStale(allocLiveJobs(prev, rec));
    this.s.delAllocVolumes.run(rec.ID);
    const group = rec.Job.TaskGroups.find((g) => g.Name === rec.TaskGroup);
    for (const req of Object.values(group?.Volumes ?? {})) {
      if (req.Type !== "csi") continue;
      this.s.putAllocVolume.run(rec.Namespace, volumeSourceForAlloc(req, allocIndex(rec)), rec.ID);
    }
    this.touched.add("allocs");
    for (const a of prev ? [prev, rec] : [rec]) allocWatchKeys(a).forEach((k) => this.keys.add(k));
    return rec;
  }

  deleteAlloc(id: string): void {
    const keys = this.s.allocKeys.get(id) as AllocKeys | undefined;
    if (!keys) return;
    this.s.delAlloc.run(id);
    if (keys.live === 1) this.markStale([{ namespace: keys.namespace, jobId: keys.job_id }]);
    this.s.delAllocVolumes.run(id);
    this.touched.add("allocs");
    const gone = { ID: id, NodeID: keys.node_id, Namespace: keys.namespace, JobID: keys.job_id };
    allocWatchKeys(gone).forEach((k) => this.keys.add(k));
  }

  putVolume(vol: CSIVolume): CSIVolume {
    const prev = this.getVolume(vol.Namespace, vol.ID);
    if (prev && contentOf(prev) === contentOf(vol)) return prev;
    const rec = stamp(vol, prev, this.writeIndex);
    const stored = this.r.atRest ? this.r.atRest.sealVolume(rec) : rec;
    this.s.putVolume.run(rec.Namespace, rec.ID, rec.PluginID, JSON.stringify(stored));
    this.touched.add("volumes");
    this.keys.add(watchKeys.volume(rec.Namespace, rec.ID));
    return rec;
  }

  deleteVolume(namespace: string, id: string): void {
    if (this.s.delVolume.run(namespace, id).changes === 0) return;
    this.touched.add("volumes");
    this.keys.add(watchKeys.volume(namespace, id));
  }

  putEval(ev: Evaluation): Evaluation {
    const prev = this.getEval(ev.ID);
    if (prev && contentOf(prev) === contentOf(ev)) return prev;
    const rec = stamp(ev, prev, this.writeIndex);
    this.s.putEval.run(rec.ID, rec.Namespace, rec.JobID, rec.CreateIndex, JSON.stringify(rec));
    this.touched.add("evals");
    return rec;
  }

  deleteEval(id: string): void {
    if (this.s.delEval.run(id).changes > 0) this.touched.add("evals");
  }

  putVolumeIntent(intent: VolumeCreateIntent): VolumeCreateIntent {
    const prev = this.getVolumeIntent(intent.Namespace, intent.ID);
    const rec = stamp(intent, prev, this.writeIndex);
    const stored = this.r.atRest ? this.r.atRest.sealIntent(rec) : rec;
    this.r.intentStatements.put.run(rec.Namespace, rec.ID, JSON.stringify(stored));
    this.touched.add("intents");
    return rec;
  }

  deleteVolumeIntent(namespace: string, id: string): void {
    if (this.r.intentStatements.del.run(namespace, id).changes > 0) this.touched.add("intents");
  }

  putDeployment(d: Deployment): Deployment {
    const prev = this.getDeployment(d.ID);
    if (prev && contentOf(prev) === contentOf(d)) return prev;
    const rec = stamp(d, prev, this.writeIndex);
    this.r.deploymentStatements.put.run(
      rec.ID,
      rec.Namespace,
      rec.JobID,
      rec.CreateIndex,
      JSON.stringify(rec),
    );
    this.touched.add("deployments");
    return rec;
  }

  deleteDeployment(id: string): void {
    if (this.r.deploymentStatements.del.run(id).changes > 0) this.touched.add("deployments");
  }

  putNamespace(ns: Namespace): Namespace {
    const prev = this.getNamespace(ns.Name);
    if (prev && contentOf(prev) === contentOf(ns)) return prev;
    const rec = stamp(ns, prev, this.writeIndex);
    this.r.namespaceStatements.put.run(rec.Name, JSON.stringify(rec));
    this.touched.add("namespaces");
    return rec;
  }

  deleteNamespace(name: string): void {
    if (this.r.namespaceStatements.del.run(name).changes > 0) this.touched.add("namespaces");
  }

  /** Records the node's changed plugin instances (plugin_instances) and updates those plugins. */
  private applyNodeDeltas(nodeId: string, prev: Node | undefined, next: Node | undefined): void {
    for (const [pluginId, inst] of nodePluginDeltas(nodeId, prev, next)) {
      if (inst.controller || inst.node) {
        const json = (i: unknown) => (i ? JSON.stringify(i) : null);
        this.s.putInstance.run(pluginId, nodeId, json(inst.controller), json(inst.node));
      } else {
        this.s.delInstance.run(pluginId, nodeId);
      }
      this.updatePlugin(pluginId, { nodes: [inst] });
    }
  }

  /** Replaces the job's plugin uses with `uses`, updating every plugin whose use changed. */
  private syncPluginUses(namespace: string, jobId: string, uses: PluginJobUse[]): void {
    for (const { pluginId, use } of jobPluginDeltas(this.usesOfJob(namespace, jobId), uses)) {
      if (use) this.s.putUse.run(pluginId, namespace, jobId, JSON.stringify(use));
      else this.s.delUse.run(pluginId, namespace, jobId);
      const expected = use ? this.expectation(use) : { namespace, jobId, expected: undefined };
      this.updatePlugin(pluginId, { jobs: [expected] });
    }
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

  private markStale(jobs: { namespace: string; jobId: string }[]): void {
    for (const j of jobs) this.staleJobs.set(JSON.stringify([j.namespace, j.jobId]), j);
  }

  private updatePlugin(id: string, delta: PluginDelta): void {
    const next = applyPluginDelta(this.r.getPlugin(id), id, delta, {
      writeIndex: this.writeIndex,
      nowMs: this.r.now(),
    });
    if (!next) return;
    this.s.putPlugin.run(id, JSON.stringify(next));
    this.touched.add("plugins");
    this.keys.add(watchKeys.plugin(id));
  }
}
