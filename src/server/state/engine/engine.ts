/**
 * The SQLite engine under both stores: one SQLite database with the schema (schema.ts), its
 * prepared statements (statements.ts and the per-table files), the row codecs (allocs' job copies,
 * secrets at rest) and every read query. The local store holds one over its file, the etcd store
 * one over its in-memory replica; each serves its reads from it (reads.ts) and runs a txn's fn
 * with the one writer both stores share (writer.ts, `runWrite`).
 *
 * Indexes: the engine keeps the store's write index and per-table indexes in memory, as the
 * committed state reads them. A store moves them (`advance`) as each txn of a batch takes its
 * index, persists them inside its transaction (`persistIndexes`), and puts them back (`rewind`)
 * when the batch is rolled back; `loadIndexes` reads them again after the rows were replaced.
 */
import type Database from "better-sqlite3";
import type { Allocation } from "../../../structs/alloc.js";
import type { Deployment } from "../../../structs/deployment.js";
import type { Evaluation } from "../../../structs/eval.js";
import type { Job } from "../../../structs/job.js";
import type { Namespace } from "../../../structs/namespace.js";
import type { Node } from "../../../structs/node.js";
import type { CSIInfo, CSIPlugin, CSIPluginSummary } from "../../../structs/plugin.js";
import type { CSIVolume } from "../../../structs/volume.js";
import type { VolumeCreateIntent } from "../../../structs/volume_intent.js";
import { prepareDeploymentStatements, type DeploymentStatements } from "./deployments.js";
import { prepareNamespaceStatements, type NamespaceStatements } from "./namespaces.js";
import { prepareIntentStatements, type IntentStatements } from "./intents.js";
import { preparePeriodicStatements, type PeriodicStatements } from "./periodic.js";
import { prepareCapacityStatements, type CapacityStatements } from "./capacity.js";
import type { PluginCapacity } from "../../../structs/capacity.js";
import type { PeriodicLaunch } from "../../../structs/periodic.js";
import { parseRow, parseRows, prepareStatements, type Statements } from "./statements.js";
import { AllocJobs, prepareAllocJobStatements } from "./alloc_jobs.js";
import type { RecordRange, Table } from "../store.js";
import type { StoreReads } from "./reads.js";
import { preparePageStatements, rangeNamespaces, rangeRows } from "./pages.js";
import { prepareAclStatements, SqliteAclReader, type AclStatements } from "./acl.js";
import type { SecretsAtRest } from "../secrets/secrets_at_rest.js";
import { idsModifiedSince, prepareChangeStatements, type ChangeStatements } from "./changes.js";
import {
  healthyInstances,
  healthyInstancesAfter,
  listSummaries,
  preparePluginStatements,
  readPlugin,
  readSummary,
  type PluginSide,
  type PluginStatements,
} from "./plugins.js";

/** The engine's indexes at one moment, for `rewind`. */
export interface IndexMark {
  index: number;
  tables: Map<Table, number>;
}

export class SqliteEngine implements StoreReads {
  private currentIndex = 0;
  private readonly tableIndexes = new Map<Table, number>();
  readonly statements: Statements;
  readonly intentStatements: IntentStatements;
  readonly deploymentStatements: DeploymentStatements;
  readonly periodicStatements: PeriodicStatements;
  readonly capacityStatements: CapacityStatements;
  readonly namespaceStatements: NamespaceStatements;
  readonly aclStatements: AclStatements;
  readonly pluginStatements: PluginStatements;
  private readonly acl: SqliteAclReader;
  /** Allocs' job copies (alloc_jobs.ts). */
  readonly allocJobs: AllocJobs;
  private readonly pages: ReturnType<typeof preparePageStatements>;
  /** Seals secrets on write and opens them on read (secrets_at_rest.ts); null when nothing is at rest. */
  readonly atRest: SecretsAtRest | null;
  /** ChangeReader's lookups (changes.ts). */
  readonly changeStatements: ChangeStatements;

  /**
   * `db` migrated (schema.ts) and holding the `default` namespace; `now` (unix ms) stamps
   * CSIPlugin.EmptySince and is injectable for tests; `atRest` null for an in-memory database.
   */
  constructor(
    readonly db: Database.Database,
    readonly now: () => number,
    atRest: SecretsAtRest | null = null,
  ) {
    this.atRest = atRest;
    this.statements = prepareStatements(db);
    this.allocJobs = new AllocJobs(prepareAllocJobStatements(db));
    this.intentStatements = prepareIntentStatements(db);
    this.deploymentStatements = prepareDeploymentStatements(db);
    this.periodicStatements = preparePeriodicStatements(db);
    this.capacityStatements = prepareCapacityStatements(db);
    this.namespaceStatements = prepareNamespaceStatements(db);
    this.aclStatements = prepareAclStatements(db);
    this.pluginStatements = preparePluginStatements(db);
    this.acl = new SqliteAclReader(this.aclStatements);
    this.changeStatements = prepareChangeStatements(db);
    this.pages = preparePageStatements(db);
    this.loadIndexes();
  }

  /** Reads the indexes from the database (at open, and after its rows were replaced). */
  loadIndexes(): void {
    this.currentIndex = (this.statements.getMeta.get() as { value: number } | undefined)?.value ?? 0;
    this.tableIndexes.clear();
    for (const r of this.statements.allTableIdx.all() as { name: Table; idx: number }[]) {
      this.tableIndexes.set(r.name, r.idx);
    }
  }

  /** The indexes now, to put back with `rewind` if what follows is rolled back. */
  mark(): IndexMark {
    return { index: this.currentIndex, tables: new Map(this.tableIndexes) };
  }

  rewind(mark: IndexMark): void {
    this.currentIndex = mark.index;
    this.tableIndexes.clear();
    for (const [t, i] of mark.tables) this.tableIndexes.set(t, i);
  }

  /** A txn wrote at `index` (the next one): the store's index and its tables' move to it. */
  advance(index: number, touched: Iterable<Table>): void {
    this.currentIndex = index;
    for (const t of touched) this.tableIndexes.set(t, index);
  }

  /** Writes the index and the tables' indexes as they are now, inside the caller's transaction. */
  persistIndexes(tables: Iterable<Table>): void {
    this.statements.setMeta.run(this.currentIndex);
    for (const t of tables) this.statements.setTableIdx.run(t, this.tableIndexes.get(t) ?? 0);
  }

  index(): number {
    return this.currentIndex;
  }
  getAclPolicy(name: string) {
    return this.acl.getAclPolicy(name);
  }
  listAclPolicies() {
    return this.acl.listAclPolicies();
  }
  getAclToken(accessorId: string) {
    return this.acl.getAclToken(accessorId);
  }
  aclTokenBySecretHash(secretHash: string) {
    return this.acl.aclTokenBySecretHash(secretHash);
  }
  listAclTokens() {
    return this.acl.listAclTokens();
  }
  aclBootstrapIndex() {
    return this.acl.aclBootstrapIndex();
  }
  tableIndex(table: Table): number {
    return this.tableIndexes.get(table) ?? 0;
  }

  getNode(id: string): Node | undefined {
    return parseRow<Node>(this.statements.getNode.get(id));
  }
  listNodes(): Node[] {
    return parseRows<Node>(this.statements.listNodes.all());
  }
  getJob(namespace: string, id: string): Job | undefined {
    return parseRow<Job>(this.statements.getJob.get(namespace, id));
  }
  listJobs(namespace?: string): Job[] {
    const s = this.statements;
    return parseRows<Job>(namespace === undefined ? s.listJobs.all() : s.listJobsNs.all(namespace));
  }
  getAlloc(id: string): Allocation | undefined {
    return this.allocJobs.readOne(this.statements.getAlloc.get(id));
  }
  listAllocs(namespace?: string): Allocation[] {
    const s = this.statements;
    return this.allocJobs.readAll(
      namespace === undefined ? s.listAllocs.all() : s.listAllocsNs.all(namespace),
    );
  }
  allocsByNode(nodeId: string): Allocation[] {
    return this.allocJobs.readAll(this.statements.allocsByNode.all(nodeId));
  }
  allocsByJob(namespace: string, jobId: string): Allocation[] {
    return this.allocJobs.readAll(this.statements.allocsByJob.all(namespace, jobId));
  }
  hasLiveAllocOfJob(namespace: string, jobId: string, jobCreateIndex: number): boolean {
    return this.statements.liveAllocOfIncarnation.get(namespace, jobId, jobCreateIndex) !== undefined;
  }
  allocsByVolume(namespace: string, volumeId: string): Allocation[] {
    return this.allocJobs.readAll(this.statements.allocsByVolume.all(namespace, volumeId));
  }
  getVolume(namespace: string, id: string): CSIVolume | undefined {
    const v = parseRow<CSIVolume>(this.statements.getVolume.get(namespace, id));
    return v && this.atRest ? this.atRest.openVolume(v) : v;
  }
  listVolumes(filter: { namespace?: string; pluginId?: string } = {}): CSIVolume[] {
    const s = this.statements;
    let vols: CSIVolume[];
    if (filter.pluginId !== undefined) {
      vols = parseRows<CSIVolume>(s.volumesByPlugin.all(filter.pluginId));
      if (filter.namespace !== undefined) vols = vols.filter((v) => v.Namespace === filter.namespace);
    } else if (filter.namespace !== undefined) {
      vols = parseRows<CSIVolume>(s.listVolumesNs.all(filter.namespace));
    } else {
      vols = parseRows<CSIVolume>(s.listVolumes.all());
    }
    const atRest = this.atRest;
    return atRest ? vols.map((v) => atRest.openVolume(v)) : vols;
  }
  /** StateStore.volumeRange and the others (the store's, not a txn's: lists page outside one). */
  volumeRange(q: RecordRange): CSIVolume[] {
    const vols = rangeRows<CSIVolume>(this.pages, "volumes", q);
    const atRest = this.atRest;
    return atRest ? vols.map((v) => atRest.openVolume(v)) : vols;
  }
  jobRange(q: RecordRange): Job[] {
    return rangeRows<Job>(this.pages, "jobs", q);
  }
  nodeRange(q: RecordRange): Node[] {
    return rangeRows<Node>(this.pages, "nodes", q);
  }
  rangeNamespaces(table: "volumes" | "jobs"): string[] {
    return rangeNamespaces(this.pages, table);
  }
  getPlugin(id: string): CSIPlugin | undefined {
    return readPlugin(this.pluginStatements, id);
  }
  pluginSummary(id: string): CSIPluginSummary | undefined {
    return readSummary(this.pluginStatements, id);
  }
  listPlugins(): CSIPluginSummary[] {
    return listSummaries(this.pluginStatements);
  }
  healthyPluginInstances(pluginId: string, side: PluginSide): Map<string, CSIInfo> {
    return healthyInstances(this.pluginStatements, pluginId, side);
  }
  healthyPluginInstancesAfter(
    pluginId: string,
    side: PluginSide,
    afterNodeId: string,
    limit: number,
  ): [string, CSIInfo][] {
    return healthyInstancesAfter(this.pluginStatements, pluginId, side, afterNodeId, limit);
  }
  getEval(id: string): Evaluation | undefined {
    return parseRow<Evaluation>(this.statements.getEval.get(id));
  }
  listEvals(namespace?: string): Evaluation[] {
    const s = this.statements;
    return parseRows<Evaluation>(namespace === undefined ? s.listEvals.all() : s.listEvalsNs.all(namespace));
  }
  evalsByJob(namespace: string, jobId: string): Evaluation[] {
    return parseRows<Evaluation>(this.statements.evalsByJob.all(namespace, jobId));
  }
  getVolumeIntent(namespace: string, id: string): VolumeCreateIntent | undefined {
    const i = parseRow<VolumeCreateIntent>(this.intentStatements.get.get(namespace, id));
    return i && this.atRest ? this.atRest.openIntent(i) : i;
  }
  listVolumeIntents(): VolumeCreateIntent[] {
    const intents = parseRows<VolumeCreateIntent>(this.intentStatements.list.all());
    const atRest = this.atRest;
    return atRest ? intents.map((i) => atRest.openIntent(i)) : intents;
  }
  getPeriodicLaunch(namespace: string, id: string): PeriodicLaunch | undefined {
    return parseRow<PeriodicLaunch>(this.periodicStatements.get.get(namespace, id));
  }
  getPluginCapacity(pluginId: string): PluginCapacity | undefined {
    return parseRow<PluginCapacity>(this.capacityStatements.get.get(pluginId));
  }
  listPluginCapacities(): PluginCapacity[] {
    return parseRows<PluginCapacity>(this.capacityStatements.list.all());
  }
  getDeployment(id: string): Deployment | undefined {
    return parseRow<Deployment>(this.deploymentStatements.get.get(id));
  }
  listDeployments(namespace?: string): Deployment[] {
    const s = this.deploymentStatements;
    return parseRows<Deployment>(namespace === undefined ? s.list.all() : s.listNs.all(namespace));
  }
  deploymentsByJob(namespace: string, jobId: string): Deployment[] {
    return parseRows<Deployment>(this.deploymentStatements.byJob.all(namespace, jobId));
  }
  jobVersions(namespace: string, jobId: string): Job[] {
    return parseRows<Job>(this.deploymentStatements.versions.all(namespace, jobId));
  }
  getNamespace(name: string): Namespace | undefined {
    return parseRow<Namespace>(this.namespaceStatements.get.get(name));
  }
  listNamespaces(): Namespace[] {
    return parseRows<Namespace>(this.namespaceStatements.list.all());
  }

  // ChangeReader (store.ts), served by the ModifyIndex indexes of changes.ts.
  volumesModifiedSince(index: number): CSIVolume[] {
    const vols = parseRows<CSIVolume>(this.changeStatements.volumes.all(index));
    const atRest = this.atRest;
    return atRest ? vols.map((v) => atRest.openVolume(v)) : vols;
  }
  allocsModifiedSince(index: number): string[] {
    return idsModifiedSince(this.changeStatements.allocIds, index);
  }
  nodesModifiedSince(index: number): string[] {
    return idsModifiedSince(this.changeStatements.nodeIds, index);
  }
  nodesDeletedAt(): number {
    return (this.changeStatements.nodesDeletedAt.get() as number | undefined) ?? 0;
  }
}
