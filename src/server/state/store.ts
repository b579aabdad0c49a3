/**
 * The server's state store contract. Nothing outside src/server/state/ knows how it is kept: the
 * default is embedded SQLite; multi-server HA will put etcd behind this same interface.
 *
 * Contracts:
 * - Reads are synchronous and consistent as of `index()`: an implementation serves them from a
 *   local view (SQLite file, or a watch-fed replica for etcd), as Nomad serves reads from memdb.
 * - Writes go through `txn(fn)`. `fn` is synchronous, sees its own writes, and must be re-runnable
 *   (an optimistic backend may retry it on conflict): it may read and write through `tx` but must
 *   not do I/O or mutate anything outside. Throwing from `fn` aborts and writes nothing.
 * - A txn's promise settles only once its writes are durable (committed to disk), and a rejected
 *   one wrote nothing. Txns asked for together may share one commit (group commit, as the SQLite
 *   store does): they still run one after another in the order they were asked for, each sees the
 *   writes of those before it, and each that writes still takes its own index.
 * - The write index is monotonic. A txn that writes anything commits at exactly one new index,
 *   which becomes the ModifyIndex of every record it put (CreateIndex too for new ones) and the
 *   index of every table it touched. A txn that writes nothing changes no index.
 * - Plugins are derived, as deltas every implementation computes with engine/derive_plugins.ts (pure):
 *   putting or deleting a node updates the plugins whose instances on it, as counted, change, and
 *   putting or deleting a job the plugins whose use by its `csi_plugin` blocks changes (buildPlugin,
 *   jobPluginUses). An instance on a down node counts as unhealthy (instanceOnNode), so a node's
 *   status change moves its plugins' counts. Expected counts are the declaring jobs' (expectedOf):
 *   a system job's are its live allocs, so an alloc of one becoming live or terminal (or deleted)
 *   updates its plugins too, by the commit or the txn's next plugin read, whichever is first. A
 *   plugin left with no instance and no job is kept, stamped EmptySince, until deletePlugin (the
 *   garbage collector) removes it. Their index moves only when the derived record actually changes
 *   (a count, a job, or any instance).
 * - A plugin is kept as a small summary (CSIPluginSummary: counts, jobs, provider, flags) and its
 *   instances one per (plugin, node): a node write costs O(plugins on the node × log n), never
 *   O(nodes). Everything but the plugin API reads the summary (pluginSummary, listPlugins) or an
 *   index (healthyPluginInstances); only getPlugin assembles every instance, O(nodes of the plugin).
 *   At any index the summary equals what buildPlugin counts from the instances and jobs.
 * - Evaluations are plain records kept by the scheduler, which also bounds how many a job keeps;
 *   the garbage collector removes those of jobs that are gone.
 * - Records are returned as fresh copies; mutating one never changes the store.
 */
import type { Allocation } from "../../structs/alloc.js";
import type { Deployment } from "../../structs/deployment.js";
import type { Evaluation } from "../../structs/eval.js";
import type { Job } from "../../structs/job.js";
import type { Namespace } from "../../structs/namespace.js";
import type { PeriodicLaunch } from "../../structs/periodic.js";
import type { PluginCapacity } from "../../structs/capacity.js";
import type { Node } from "../../structs/node.js";
import type { CSIInfo, CSIPlugin, CSIPluginSummary } from "../../structs/plugin.js";
import type { CSIVolume } from "../../structs/volume.js";
import type { VolumeCreateIntent } from "../../structs/volume_intent.js";
import type { AclStateReader, AclStateWriter } from "./acl_store.js";
import type { WatchKey } from "./watch_keys.js";
import type { CommitListener } from "./commit_feed.js";

// The tables live in their own module, so the commit feed (commit_feed.ts) names them without
// importing this one (which names the feed): no import cycle.
export { TABLES, type Table } from "./tables.js";
import type { Table } from "./tables.js";

/** A stored record that could not be loaded when the store opened (never with its content). */
export interface QuarantinedRecord {
  table: Table;
  /** The record's namespace for jobs and volumes, "" for the tables keyed by ID alone. */
  namespace: string;
  key: string;
  /** Why it could not be loaded, naming the field. */
  error: string;
  /** When it was quarantined, unix ms. */
  timeMs: number;
}

export interface StateReader extends AclStateReader {
  /** The latest committed write index (0 for an empty store). */
  index(): number;
  /** The index of the last write that touched `table`. */
  tableIndex(table: Table): number;

  getNode(id: string): Node | undefined;
  listNodes(): Node[];

  getJob(namespace: string, id: string): Job | undefined;
  /** All namespaces when `namespace` is undefined. */
  listJobs(namespace?: string): Job[];

  getAlloc(id: string): Allocation | undefined;
  listAllocs(namespace?: string): Allocation[];
  allocsByNode(nodeId: string): Allocation[];
  allocsByJob(namespace: string, jobId: string): Allocation[];
  /**
   * Whether the job has a live (non-terminal) alloc of the incarnation created at
   * `jobCreateIndex`, answered from the store's index without reading the allocs: a big job's
   * status after a pass that placed nothing stays O(1) in its size.
   */
  hasLiveAllocOfJob(namespace: string, jobId: string, jobCreateIndex: number): boolean;
  /** Allocs whose task group requests the CSI volume (per_alloc sources resolved to `Source[N]`). */
  allocsByVolume(namespace: string, volumeId: string): Allocation[];

  /** The volume as stored; the plugin-derived fields are not filled (see volumeView). */
  getVolume(namespace: string, id: string): CSIVolume | undefined;
  listVolumes(filter?: { namespace?: string; pluginId?: string }): CSIVolume[];

  /** The full record with every instance (the plugin API): O(nodes that run the plugin). */
  getPlugin(id: string): CSIPlugin | undefined;
  /** The plugin without its instances: O(1) in the cluster's size; what hot paths read. */
  pluginSummary(id: string): CSIPluginSummary | undefined;
  /** Every plugin's summary, by ID. */
  listPlugins(): CSIPluginSummary[];
  /**
   * Node ID → the healthy instance of that side of the plugin (as the plugin counts it: none on a
   * down node), from an index: O(healthy instances), never a scan of nodes.
   */
  healthyPluginInstances(pluginId: string, side: "controller" | "node"): Map<string, CSIInfo>;
  /**
   * Up to `limit` entries of healthyPluginInstances whose node ID sorts after `afterNodeId` ("" for
   * the first), in node ID order, from the same index: O(log n + limit). A caller that needs one
   * instance (a controller to call) pages through these instead of reading them all.
   */
  healthyPluginInstancesAfter(
    pluginId: string,
    side: "controller" | "node",
    afterNodeId: string,
    limit: number,
  ): [string, CSIInfo][];

  getEval(id: string): Evaluation | undefined;
  /** Oldest first (by CreateIndex, then the order they were put); all namespaces when `namespace` is undefined. */
  listEvals(namespace?: string): Evaluation[];
  /** The job's evals, oldest first (as listEvals). Evals outlive their job until collected. */
  evalsByJob(namespace: string, jobId: string): Evaluation[];

  /** Volume creates started and not yet recorded (structs/volume_intent.ts); table `intents`. */
  getVolumeIntent(namespace: string, id: string): VolumeCreateIntent | undefined;
  listVolumeIntents(): VolumeCreateIntent[];

  /** A periodic job's last launch (Nomad's PeriodicLaunch), kept beside the job; see putPeriodicLaunch. */
  getPeriodicLaunch(namespace: string, id: string): PeriodicLaunch | undefined;

  /** What the leader's capacity poll last measured for the plugin (structs/capacity.ts); kept beside it. */
  getPluginCapacity(pluginId: string): PluginCapacity | undefined;
  /** Every plugin's capacities, by plugin ID. */
  listPluginCapacities(): PluginCapacity[];

  getDeployment(id: string): Deployment | undefined;
  /** Oldest first (by CreateIndex); all namespaces when `namespace` is undefined. */
  listDeployments(namespace?: string): Deployment[];
  /** The job's deployments, oldest first; deleteJob (a purge) deletes them, the GC old ones. */
  deploymentsByJob(namespace: string, jobId: string): Deployment[];
  /**
   * The job's stored versions, newest first (table `versions`): every putJob stores the record
   * under its Version, at most JOB_TRACKED_VERSIONS kept (the newest stable one is never the one
   * dropped); deleteJob deletes them.
   */
  jobVersions(namespace: string, jobId: string): Job[];

  /** Namespaces (table `namespaces`), by name; `default` always exists. */
  getNamespace(name: string): Namespace | undefined;
  /** Ordered by name, as Nomad's memdb iterates them. */
  listNamespaces(): Namespace[];
}

export interface PutAllocOptions {
  /** The node's report of its own alloc: AllocModifyIndex keeps its value. */
  fromClient?: boolean;
}

export interface StateWriter extends StateReader, AclStateWriter {
  /** The index this transaction commits at. */
  readonly writeIndex: number;
  putNode(node: Node): Node;
  /** Deletes the node and its plugin instances (updating the plugins they named). */
  deleteNode(id: string): void;
  putJob(job: Job): Job;
  /** Deletes the job with its versions and its deployments (every incarnation's), as Nomad's purge. */
  deleteJob(namespace: string, id: string): void;
  /**
   * Writes an alloc. AllocModifyIndex moves with every write except a client's report of its
   * alloc (`fromClient`: status, task states), as Nomad's: it tells a node what the *server*
   * changed, so a node's GetAllocs wakes for those writes only (watchKeys.serverAllocsOfNode).
   */
  putAlloc(alloc: Allocation, opts?: PutAllocOptions): Allocation;
  deleteAlloc(id: string): void;
  putVolume(vol: CSIVolume): CSIVolume;
  deleteVolume(namespace: string, id: string): void;
  /** Deletes the plugin only while it is empty (isPluginEmpty); returns whether it did. */
  deletePlugin(id: string): boolean;
  putEval(ev: Evaluation): Evaluation;
  deleteEval(id: string): void;
  putVolumeIntent(intent: VolumeCreateIntent): VolumeCreateIntent;
  deleteVolumeIntent(namespace: string, id: string): void;
  /**
   * Records a periodic job's last launch, in the txn that puts its child (or registers the job):
   * kept beside the job as its versions are, so it counts as a write of `jobs`.
   */
  putPeriodicLaunch(launch: PeriodicLaunch): PeriodicLaunch;
  deletePeriodicLaunch(namespace: string, id: string): void;
  /**
   * Records a plugin's measured capacities (the leader's capacity poll). Kept beside the plugin as
   * its instances are: counts as a write of `plugins`, not a record of the commit feed.
   */
  putPluginCapacity(capacity: PluginCapacity): PluginCapacity;
  deletePluginCapacity(pluginId: string): void;
  putDeployment(d: Deployment): Deployment;
  deleteDeployment(id: string): void;
  putNamespace(ns: Namespace): Namespace;
  /** Deletes the record only; the endpoint checks first that nothing lives in it. */
  deleteNamespace(name: string): void;
}

/**
 * What changed since an index, for loops that follow the store by deltas (the volumewatcher).
 * Each lists the records put at an index above `index` (their ModifyIndex), oldest change first,
 * in O(changed · log n): an implementation keeps them ordered by ModifyIndex, never scans a table.
 * Deleted records are not listed (a deletion leaves nothing to list); a caller that must see
 * deletions re-reads the records it holds, or for nodes asks nodesDeletedAt whether it must.
 */
export interface ChangeReader {
  /** Volumes, as getVolume returns them. */
  volumesModifiedSince(index: number): CSIVolume[];
  /** IDs of the allocs. */
  allocsModifiedSince(index: number): string[];
  /** IDs of the nodes. */
  nodesModifiedSince(index: number): string[];
  /**
   * The index of the latest txn that deleted a node: a follower that read the nodes at index `i`
   * and then their changes has missed a deletion exactly when this is above `i`. Deletions older
   * than this store's record of them read as 0; a follower begins with a whole read.
   */
  nodesDeletedAt(): number;
}

/** One run of records in ID order, for the paged lists (StateStore.volumeRange and the others). */
export interface RecordRange {
  /** The namespace of a namespaced table (volumes, jobs); ignored for nodes. */
  namespace?: string;
  /** The first ID to consider (the last one with `reverse`), inclusive; "" starts at the end. */
  from: string;
  reverse: boolean;
  /** Only IDs that start with it ("" for all). */
  prefix: string;
  /** Only the volumes of this plugin (volumes only). */
  pluginId?: string;
  /** At most this many. */
  limit: number;
}

/**
 * What a store's `groupCommitStats()` reports (both stores have one; benchmarks and tests read it):
 * how many batches it committed, and the txns they carried.
 */
export interface GroupCommitStats {
  batches: number;
  ops: number;
  largestBatch: number;
}

export interface StateStore extends StateReader, ChangeReader {
  /**
   * Volumes as listVolumes returns them, of one namespace, in ID order (descending with
   * `reverse`), read from the store's (namespace, ID) index: the cost follows `limit`, not the
   * number of volumes stored. The paged lists walk it in runs (http/list_store_pages.ts).
   */
  volumeRange(q: RecordRange): CSIVolume[];
  /** As volumeRange, for the jobs of one namespace. */
  jobRange(q: RecordRange): Job[];
  /** As volumeRange, for the nodes (no namespace). */
  nodeRange(q: RecordRange): Node[];
  /** The namespaces that hold at least one record of the table, ascending. */
  rangeNamespaces(table: "volumes" | "jobs"): string[];
  txn<T>(fn: (tx: StateWriter) => T): Promise<T>;
  /**
   * Resolves with the current index once any of `tables` has an index above `minIndex`, or when
   * `timeoutMs` passes (then with the current index, which may not have moved). Rejects with an
   * AbortError when `signal` aborts.
   *
   * With `keys` (watch.ts watchKeys: objects within `tables`), the check when the call starts is
   * the same (any of `tables` already past `minIndex` resolves at once, as Nomad's blocking queries
   * compare the table index), but then only a commit that put or deleted one of those objects
   * wakes it: a waiter on node A's allocs sleeps through alloc writes on node B. Every txn reports
   * the keys of the objects it writes (watch.ts states that contract).
   */
  waitFor(
    tables: readonly Table[],
    minIndex: number,
    signal: AbortSignal | undefined,
    timeoutMs: number,
    keys?: readonly WatchKey[],
  ): Promise<number>;
  /**
   * Stored records that could not be loaded when the store opened, moved out of the live tables
   * (quarantine/quarantine.ts): what and why, never the record itself.
   */
  quarantined(): QuarantinedRecord[];
  /** Drops one quarantined record for good; false when there is none under that key. */
  dropQuarantined(table: string, namespace: string, key: string): Promise<boolean>;
  /**
   * The commit feed (commit_feed.ts states the contract): `listener` gets every txn committed from
   * now on, with its changes, in index order. Returns the function that unsubscribes it.
   */
  onCommit(listener: CommitListener): () => void;
  close(): void;
}
