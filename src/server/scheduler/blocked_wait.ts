/**
 * What a blocked job waits for, and which writes can end the wait (Nomad's blocked evals, keyed by
 * class eligibility; keyed further here for CSI waits). A write that may free capacity names what
 * it changed as a `Wake` (a node, a volume); the scheduler re-runs only the blocked jobs whose
 * `BlockedWait` that wake matches (`wakes`), so with one job blocked on a volume's claim a node
 * registration costs no pass, and the cost of a write stays independent of the cluster's size.
 *
 * The contract is one-sided: a write that can unblock a job must match its wait; a match that
 * unblocks nothing only costs a pass. So every reason this file does not recognise, and every
 * failure on resources or on the lack of any node, waits for any node of the job's datacenters.
 * Pure: the store is read only through the `WaitReader` the caller passes.
 */
import { allocIndex, isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import { inAnyDatacenter } from "../../structs/datacenter.js";
import type { AllocMetric } from "../../structs/eval.js";
import { volumeSourceForAlloc, type Job } from "../../structs/job.js";
import type { Node } from "../../structs/node.js";
import type { CSIVolume } from "../../structs/volume.js";

/** A write that may let blocked jobs place: what it changed. JSON (it may cross to the leader). */
export type Wake =
  /**
   * A node registered, came back, changed its fingerprint, became eligible, or freed capacity (an
   * alloc on it ended). `Plugins`: the CSI plugin IDs it runs (node and controller).
   */
  | { Kind: "node"; NodeID: string; Datacenter: string; Plugins: string[] }
  /** A volume was registered, created, changed, adopted, or one of its claims was freed. */
  | { Kind: "volume"; Namespace: string; VolumeID: string; PluginID?: string }
  /** Unknown: every blocked job may place. */
  | { Kind: "all" };

/** What the failures of one pass say its job waits for (before the store is read). */
export interface WaitSignals {
  /** Some failure needs a node the pass did not find: any node of the job's datacenters may help. */
  anyNode: boolean;
  /** A node that runs one of these plugins may help (a plugin missing or unhealthy on every node). */
  nodePlugins: string[];
  /** A freed claim of a volume of one of these plugins may help (a node's max volumes reached). */
  volumePlugins: string[];
  /** A change of one of these volumes (by ID) may help (missing, claims exhausted, unschedulable). */
  volumes: string[];
  /** Of `volumes`, those refused as unschedulable: their plugin's nodes may help too. */
  unschedulable: string[];
}

/** A blocked job's wait, as the scheduler keeps it. */
export interface BlockedWait {
  datacenters: readonly string[];
  anyNode: boolean;
  nodePlugins: ReadonlySet<string>;
  /** Nodes where a claim on a waited volume lives: one that becomes eligible may take the job. */
  nodeIds: ReadonlySet<string>;
  volumePlugins: ReadonlySet<string>;
  /** `namespace\0volumeID` of the volumes waited for. */
  volumes: ReadonlySet<string>;
  /** `namespace\0source` of per_alloc volume requests: any `source[N]` matches. */
  perAllocSources: ReadonlySet<string>;
}

/** What the wait reads of the store. */
export interface WaitReader {
  getVolume(namespace: string, id: string): CSIVolume | undefined;
  allocsByVolume(namespace: string, volumeId: string): Allocation[];
}

const MISSING_VOLUME = /^missing CSI Volume (.+)$/;
const CLAIM_REFUSED =
  /^CSI volume (.+) (has exhausted its available writer claims|is unschedulable or is read-only|is unschedulable or has exhausted its available reader claims)$/;
const PLUGIN_ABSENT = /^CSI plugin (.+) is (?:missing from|unhealthy on) client \S+$/;
const PLUGIN_FULL = /^CSI plugin (.+) has the maximum number of volumes on client \S+$/;

export function noSignals(): WaitSignals {
  return { anyNode: false, nodePlugins: [], volumePlugins: [], volumes: [], unschedulable: [] };
}

/** The signals of one failed alloc's metrics (csi_feasibility.ts words the reasons parsed here). */
export function signalsOf(m: AllocMetric): WaitSignals {
  const s = noSignals();
  if (m.NodesEvaluated === 0 || m.NodesExhausted > 0 || m.QuotaExhausted.length > 0) s.anyNode = true;
  let reasons = 0;
  for (const reason of Object.keys(m.ConstraintFiltered)) {
    reasons++;
    let r: RegExpExecArray | null;
    if ((r = MISSING_VOLUME.exec(reason))) addOnce(s.volumes, r[1]!);
    else if ((r = CLAIM_REFUSED.exec(reason))) {
      addOnce(s.volumes, r[1]!);
      if (r[2]!.startsWith("is unschedulable")) addOnce(s.unschedulable, r[1]!);
    } else if ((r = PLUGIN_ABSENT.exec(reason))) addOnce(s.nodePlugins, r[1]!);
    else if ((r = PLUGIN_FULL.exec(reason))) {
      addOnce(s.nodePlugins, r[1]!);
      addOnce(s.volumePlugins, r[1]!);
    } else s.anyNode = true;
  }
  // Nodes evaluated, none filtered nor exhausted, and still no placement: a reason not counted.
  if (reasons === 0 && m.NodesExhausted === 0) s.anyNode = true;
  return s;
}

/** `into` widened by `more` (a coalesced failure of the same group). */
export function mergeSignals(into: WaitSignals, more: WaitSignals): WaitSignals {
  into.anyNode ||= more.anyNode;
  for (const p of more.nodePlugins) addOnce(into.nodePlugins, p);
  for (const p of more.volumePlugins) addOnce(into.volumePlugins, p);
  for (const v of more.volumes) addOnce(into.volumes, v);
  for (const v of more.unschedulable) addOnce(into.unschedulable, v);
  return into;
}

function addOnce(list: string[], v: string): void {
  if (!list.includes(v)) list.push(v);
}

function vkey(namespace: string, id: string): string {
  return `${namespace}\u0000${id}`;
}

/**
 * The wait of `job` after a pass that failed with `signals` (one per failed group) and left
 * `heldSlots` empty. Every CSI volume the job requests is waited for (a held slot, a proposed claim
 * that goes away, a volume re-registered: any change of one may matter; matching is exact and
 * cheap). A refused claim also waits for the nodes holding claims on the volume (a single-node
 * volume can only be used there, which may be ineligible now); an unschedulable volume for the
 * nodes of its plugin.
 */
export function waitOf(job: Job, signals: readonly WaitSignals[], r: WaitReader): BlockedWait {
  const volumes = new Set<string>();
  const perAllocSources = new Set<string>();
  for (const g of job.TaskGroups) {
    for (const v of Object.values(g.Volumes ?? {})) {
      if (v.Type !== "csi") continue;
      if (v.PerAlloc) perAllocSources.add(vkey(job.Namespace, v.Source));
      else volumes.add(vkey(job.Namespace, v.Source));
    }
  }
  const nodePlugins = new Set<string>();
  const volumePlugins = new Set<string>();
  const nodeIds = new Set<string>();
  let anyNode = false;
  for (const s of signals) {
    anyNode ||= s.anyNode;
    for (const p of s.nodePlugins) nodePlugins.add(p);
    for (const p of s.volumePlugins) volumePlugins.add(p);
    for (const id of s.volumes) {
      volumes.add(vkey(job.Namespace, id));
      const vol = r.getVolume(job.Namespace, id);
      if (vol) for (const n of claimNodes(vol, r)) nodeIds.add(n);
    }
    for (const id of s.unschedulable) {
      const vol = r.getVolume(job.Namespace, id);
      if (vol) nodePlugins.add(vol.PluginID);
      else anyNode = true;
    }
  }
  return {
    datacenters: job.Datacenters,
    anyNode,
    nodePlugins,
    nodeIds,
    volumePlugins,
    volumes,
    perAllocSources,
  };
}

/** The nodes of the volume's claims and of the live allocs that use it (proposed claims). */
function claimNodes(vol: CSIVolume, r: WaitReader): Set<string> {
  const out = new Set<string>();
  for (const claims of [vol.ReadClaims, vol.WriteClaims, vol.PastClaims])
    for (const c of Object.values(claims)) if (c.NodeID) out.add(c.NodeID);
  for (const a of r.allocsByVolume(vol.Namespace, vol.ID)) if (!isAllocTerminal(a)) out.add(a.NodeID);
  return out;
}

/** A per_alloc volume's ID without its `[N]`, or undefined when it has none. */
function perAllocBase(id: string): string | undefined {
  const m = /^(.*)\[\d+\]$/.exec(id);
  return m ? m[1] : undefined;
}

/** Whether `wake` may let a job waiting for `wait` place (never false when it can). */
export function wakes(wait: BlockedWait, wake: Wake): boolean {
  switch (wake.Kind) {
    case "all":
      return true;
    case "node":
      if (wait.nodeIds.has(wake.NodeID)) return true;
      if (!inAnyDatacenter(wait.datacenters, wake.Datacenter)) return false;
      return wait.anyNode || wake.Plugins.some((p) => wait.nodePlugins.has(p));
    case "volume": {
      if (wait.volumes.has(vkey(wake.Namespace, wake.VolumeID))) return true;
      const base = perAllocBase(wake.VolumeID);
      if (base !== undefined && wait.perAllocSources.has(vkey(wake.Namespace, base))) return true;
      if (wait.volumePlugins.size === 0) return false;
      return wake.PluginID === undefined || wait.volumePlugins.has(wake.PluginID);
    }
  }
}

/** The wake of a change to `node` (its ID, datacenter and every CSI plugin it runs). */
export function nodeWake(
  node: Pick<Node, "ID" | "Datacenter" | "CSINodePlugins" | "CSIControllerPlugins">,
): Wake {
  const plugins = new Set([
    ...Object.keys(node.CSINodePlugins ?? {}),
    ...Object.keys(node.CSIControllerPlugins ?? {}),
  ]);
  return { Kind: "node", NodeID: node.ID, Datacenter: node.Datacenter, Plugins: [...plugins] };
}

/** The wake of a change to a volume. */
export function volumeWake(namespace: string, volumeId: string, pluginId?: string): Wake {
  return pluginId === undefined
    ? { Kind: "volume", Namespace: namespace, VolumeID: volumeId }
    : { Kind: "volume", Namespace: namespace, VolumeID: volumeId, PluginID: pluginId };
}

/** The wakes of an alloc that ended: each CSI volume it requested (its claim, proposed or held, is gone). */
export function allocVolumeWakes(
  alloc: Pick<Allocation, "Namespace" | "Name" | "Job" | "TaskGroup">,
): Wake[] {
  const group = alloc.Job.TaskGroups.find((g) => g.Name === alloc.TaskGroup);
  const out: Wake[] = [];
  for (const v of Object.values(group?.Volumes ?? {}))
    if (v.Type === "csi") out.push(volumeWake(alloc.Namespace, volumeSourceForAlloc(v, allocIndex(alloc))));
  return out;
}
