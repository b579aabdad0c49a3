/**
 * The checks a stored record must pass to be loaded (quarantine.ts runs them once when the store
 * opens). Pure. A record is checked with the same validator that guards the way in where there is
 * one (validateJob for jobs, validateVolumeSpec for volumes), and otherwise for the fields the
 * server's loops, its derivations and the node agents dereference (a node's plugin maps, an
 * alloc's copy of its job, a claim's IDs and state, an eval's WaitUntil). Its identity fields must
 * also match the row's key columns, which every lookup goes by. Each check throws a coded
 * validation error naming the field; messages never carry a secret's value (the validators never
 * echo map values).
 */
import { BerthError, asBerthError, validationError } from "../../../structs/errors.js";
import { isObject, optNumber, optString, optStringMap } from "../../../structs/json_check.js";
import { validateJob } from "../../../structs/job_validate.js";
import { validateVolumeSpec } from "../../../structs/volume_validate.js";
import { validateReportedNode } from "../../../structs/node_validate.js";
import { validateReportOrder } from "../../../structs/node_report.js";
import { TABLES, type Table } from "../store.js";
import { checkNamespaceRecord } from "./namespace_checks.js";
import { checkAclPolicy, checkAclToken } from "./acl_checks.js";

/** The tables whose records are checked: every table of records, as the quarantine names them. */
export const CHECKED_TABLES = TABLES;
export type CheckedTable = Table;

/** Tables whose key is (namespace, id); the others are keyed by ID alone. */
export const NAMESPACED_TABLES: readonly CheckedTable[] = ["jobs", "volumes", "intents", "versions"];

/** A row as read for the check: its key columns (strings), and the stored JSON. */
export type StoredRow = Record<string, unknown> & { json: string };

/**
 * Parses the stored JSON. The parser's own message is not kept: V8 quotes the start of the text,
 * which may hold a volume's Secrets.
 */
export function parseStored(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch (err) {
    const at = /position (\d+)/.exec(err instanceof Error ? err.message : "")?.[1];
    throw new BerthError("ERR_VALIDATION", `stored JSON does not parse${at ? ` (at position ${at})` : ""}`);
  }
}

function obj(field: string, v: unknown): Record<string, unknown> {
  if (!isObject(v)) throw validationError(field, "must be an object");
  return v;
}

/** An optional map whose values must each be objects (null and absent read as empty). */
function objMap(field: string, v: unknown): Record<string, Record<string, unknown>> {
  if (v === undefined || v === null) return {};
  const m = obj(field, v);
  for (const [k, val] of Object.entries(m)) obj(`${field}.${k}`, val);
  return m as Record<string, Record<string, unknown>>;
}

function str(field: string, v: unknown): string {
  if (typeof v !== "string") throw validationError(field, "must be a string");
  return v;
}

function oneOfStr(field: string, v: unknown, allowed: readonly string[]): string {
  const s = str(field, v);
  if (!allowed.includes(s)) throw validationError(field, `unknown value ${JSON.stringify(s)}`);
  return s;
}

function int(field: string, v: unknown): number {
  if (v === undefined || v === null) throw validationError(field, "is required");
  return optNumber(field, v, 0, { integer: true, min: 0 });
}

/** The record's identity field must equal the row's key column. */
function sameKey(field: string, v: unknown, column: unknown): void {
  if (v !== column) {
    throw validationError(
      field,
      `${JSON.stringify(v)} does not match the row's key ${JSON.stringify(column)}`,
    );
  }
}

const NODE_STATUSES = ["initializing", "ready", "down", "disconnected"];
const DESIRED = ["run", "stop", "evict"];
const CLIENT = ["pending", "running", "complete", "failed", "lost"];
const EVAL_STATUSES = ["pending", "blocked", "complete", "failed", "cancelled"];
const CLAIM_MODES = ["read", "write"];
const CLAIM_STATES = ["taken", "node-detached", "controller-detached", "ready-to-free"];

function checkJob(v: unknown, row: StoredRow): void {
  const j = obj("Job", v);
  validateJob(j);
  sameKey("Job.Namespace", j.Namespace, row.namespace);
  sameKey("Job.ID", j.ID, row.id);
  oneOfStr("Job.Status", j.Status, ["pending", "running", "dead"]);
  int("Job.Version", j.Version);
  int("Job.CreateIndex", j.CreateIndex);
}

function checkAlloc(v: unknown, row: StoredRow): void {
  const a = obj("Allocation", v);
  sameKey("Allocation.ID", a.ID, row.id);
  sameKey("Allocation.Namespace", a.Namespace, row.namespace);
  sameKey("Allocation.NodeID", a.NodeID, row.node_id);
  sameKey("Allocation.JobID", a.JobID, row.job_id);
  sameKey("Allocation.TaskGroup", a.TaskGroup, row.task_group);
  str("Allocation.Name", a.Name);
  oneOfStr("Allocation.DesiredStatus", a.DesiredStatus, DESIRED);
  oneOfStr("Allocation.ClientStatus", a.ClientStatus, CLIENT);
  objMap("Allocation.TaskStates", a.TaskStates);
  checkJobCopy("Allocation.Job", a.Job, a.JobID);
  int("Allocation.CreateIndex", a.CreateIndex);
}

function arr(field: string, v: unknown): unknown[] {
  if (!Array.isArray(v)) throw validationError(field, "must be an array");
  return v;
}

function optObj(field: string, v: unknown): void {
  if (v != null) obj(field, v);
}

/**
 * An alloc's copy of its job, for what the server and the node agent read of it (type, version,
 * groups, their volumes, restart and reschedule policies, tasks). Structural on purpose, not
 * validateJob: an alloc is running work, and a quarantined alloc disappears from its node's list,
 * so the agent stops it. A copy that only fails a rule a newer berth made stricter still loads;
 * the job record itself is checked with validateJob.
 */
function checkJobCopy(field: string, v: unknown, jobId: unknown): void {
  const j = obj(field, v);
  sameKey(`${field}.ID`, j.ID, jobId);
  str(`${field}.Name`, j.Name);
  oneOfStr(`${field}.Type`, j.Type, ["service", "batch", "system", "sysbatch"]);
  int(`${field}.Version`, j.Version);
  int(`${field}.CreateIndex`, j.CreateIndex);
  arr(`${field}.TaskGroups`, j.TaskGroups).forEach((gv, i) => {
    const gf = `${field}.TaskGroups[${i}]`;
    const g = obj(gf, gv);
    str(`${gf}.Name`, g.Name);
    int(`${gf}.Count`, g.Count);
    for (const [name, req] of Object.entries(objMap(`${gf}.Volumes`, g.Volumes))) {
      str(`${gf}.Volumes.${name}.Type`, req.Type);
      str(`${gf}.Volumes.${name}.Source`, req.Source);
    }
    optObj(`${gf}.RestartPolicy`, g.RestartPolicy);
    optObj(`${gf}.ReschedulePolicy`, g.ReschedulePolicy);
    arr(`${gf}.Tasks`, g.Tasks).forEach((tv, k) => {
      const tf = `${gf}.Tasks[${k}]`;
      const t = obj(tf, tv);
      str(`${tf}.Name`, t.Name);
      str(`${tf}.Driver`, t.Driver);
      optObj(`${tf}.Config`, t.Config);
      optStringMap(`${tf}.Env`, t.Env);
      if (t.VolumeMounts != null)
        arr(`${tf}.VolumeMounts`, t.VolumeMounts).forEach((m, n) => obj(`${tf}.VolumeMounts[${n}]`, m));
      optObj(`${tf}.RestartPolicy`, t.RestartPolicy);
      optObj(`${tf}.CSIPluginConfig`, t.CSIPluginConfig);
    });
  });
}

function checkClaims(field: string, v: unknown): void {
  for (const [allocId, c] of Object.entries(objMap(field, v))) {
    const f = `${field}.${allocId}`;
    sameKey(`${f}.AllocationID`, c.AllocationID, allocId);
    str(`${f}.NodeID`, c.NodeID);
    oneOfStr(`${f}.Mode`, c.Mode, CLAIM_MODES);
    oneOfStr(`${f}.State`, c.State, CLAIM_STATES);
  }
}

function checkVolume(v: unknown, row: StoredRow): void {
  const vol = obj("Volume", v);
  // "create": a created volume's ExternalID may be empty; every other spec field is checked.
  // Unbounded: size bounds are for what is submitted, not for records already stored.
  validateVolumeSpec(vol, "create", "Volume", { bounded: false });
  sameKey("Volume.Namespace", vol.Namespace, row.namespace);
  sameKey("Volume.ID", vol.ID, row.id);
  sameKey("Volume.PluginID", vol.PluginID, row.plugin_id);
  for (const side of ["ReadClaims", "WriteClaims", "PastClaims"]) checkClaims(`Volume.${side}`, vol[side]);
  int("Volume.CreateIndex", vol.CreateIndex);
}

/** A plugin instance as a node reports it and a plugin record counts it (buildPlugin reads these). */
export function checkPluginInfo(v: unknown, field = "CSIInfo"): void {
  const info = obj(field, v);
  if (typeof info.Healthy !== "boolean") throw validationError(`${field}.Healthy`, "must be a boolean");
  if (info.ControllerInfo != null) obj(`${field}.ControllerInfo`, info.ControllerInfo);
  if (info.NodeInfo != null) obj(`${field}.NodeInfo`, info.NodeInfo);
}

function checkPluginInfos(field: string, v: unknown): void {
  for (const [id, info] of Object.entries(objMap(field, v))) checkPluginInfo(info, `${field}.${id}`);
}

/** A plugin_jobs row (PluginJobUse): what expectedOf and the writer's plugin updates read. */
export function checkPluginUse(v: unknown, row: StoredRow): void {
  const u = obj("PluginJobUse", v);
  sameKey("PluginJobUse.pluginId", u.pluginId, row.plugin_id);
  sameKey("PluginJobUse.namespace", u.namespace, row.namespace);
  sameKey("PluginJobUse.jobId", u.jobId, row.job_id);
  if (typeof u.system !== "boolean") throw validationError("PluginJobUse.system", "must be a boolean");
  int("PluginJobUse.version", u.version);
  for (const side of ["controllerGroups", "nodeGroups"]) {
    for (const [g, n] of Object.entries(obj(`PluginJobUse.${side}`, u[side])))
      int(`PluginJobUse.${side}.${g}`, n);
  }
}

function checkNode(v: unknown, row: StoredRow): void {
  const n = obj("Node", v);
  sameKey("Node.ID", n.ID, row.id);
  // What the agent reported: the validator Node.Register uses on the way in.
  validateReportedNode(n);
  // The server-owned fields, and the plugin maps the derivation reads of every node it touches
  // (present in every stored record, even where a registration may leave them out).
  str("Node.Name", n.Name);
  oneOfStr("Node.Status", n.Status, NODE_STATUSES);
  obj("Node.CSIControllerPlugins", n.CSIControllerPlugins);
  obj("Node.CSINodePlugins", n.CSINodePlugins);
  checkPluginInfos("Node.CSIControllerPlugins", n.CSIControllerPlugins);
  checkPluginInfos("Node.CSINodePlugins", n.CSINodePlugins);
  if (n.DrainStrategy != null) obj("Node.DrainStrategy", n.DrainStrategy);
  // Compared with every report's order (rpc/node.ts): a malformed one would refuse them all.
  validateReportOrder("Node.ReportOrder", n.ReportOrder);
  int("Node.CreateIndex", n.CreateIndex);
}

function checkEval(v: unknown, row: StoredRow): void {
  const e = obj("Evaluation", v);
  sameKey("Evaluation.ID", e.ID, row.id);
  sameKey("Evaluation.Namespace", e.Namespace, row.namespace);
  sameKey("Evaluation.JobID", e.JobID, row.job_id);
  sameKey("Evaluation.CreateIndex", e.CreateIndex, row.create_index);
  oneOfStr("Evaluation.Status", e.Status, EVAL_STATUSES);
  str("Evaluation.TriggeredBy", e.TriggeredBy);
  if (!Array.isArray(e.PlacedAllocIDs) || !e.PlacedAllocIDs.every((id) => typeof id === "string")) {
    throw validationError("Evaluation.PlacedAllocIDs", "must be an array of strings");
  }
  objMap("Evaluation.FailedTGAllocs", e.FailedTGAllocs);
  const wait = optString("Evaluation.WaitUntil", e.WaitUntil, "");
  if (wait !== "" && !Number.isFinite(Date.parse(wait))) {
    throw validationError("Evaluation.WaitUntil", "must be an RFC 3339 time");
  }
}

function checkJobDescriptions(field: string, v: unknown): void {
  for (const [ns, byId] of Object.entries(objMap(field, v))) {
    for (const [id, d] of Object.entries(objMap(`${field}.${ns}`, byId))) {
      int(`${field}.${ns}.${id}.Expected`, d.Expected);
    }
  }
}

function checkPlugin(v: unknown, row: StoredRow): void {
  // The summary (CSIPluginSummary); its instances are checked in their own rows.
  const p = obj("Plugin", v);
  sameKey("Plugin.ID", p.ID, row.id);
  const counts = obj("Plugin.Instances", p.Instances);
  for (const f of ["Controllers", "Nodes", "RequireController"]) int(`Plugin.Instances.${f}`, counts[f]);
  checkJobDescriptions("Plugin.ControllerJobs", p.ControllerJobs);
  checkJobDescriptions("Plugin.NodeJobs", p.NodeJobs);
  for (const f of [
    "ControllersHealthy",
    "ControllersExpected",
    "NodesHealthy",
    "NodesExpected",
    "EmptySince",
  ]) {
    int(`Plugin.${f}`, p[f]);
  }
  int("Plugin.CreateIndex", p.CreateIndex);
}

/** A volume create intent (structs/volume_intent.ts): adopt and delete repeat its Spec's create. */
function checkIntent(v: unknown, row: StoredRow): void {
  const intent = obj("VolumeCreateIntent", v);
  sameKey("VolumeCreateIntent.Namespace", intent.Namespace, row.namespace);
  sameKey("VolumeCreateIntent.ID", intent.ID, row.id);
  str("VolumeCreateIntent.PluginID", intent.PluginID);
  str("VolumeCreateIntent.Name", intent.Name);
  validateVolumeSpec(obj("VolumeCreateIntent.Spec", intent.Spec), "create", "Volume", { bounded: false });
  // Unix nanoseconds: past 2^53, so a finite number, not a safe integer.
  if (typeof intent.CreateTime !== "number" || !Number.isFinite(intent.CreateTime)) {
    throw validationError("VolumeCreateIntent.CreateTime", "must be a number");
  }
}

function checkDeployment(v: unknown, row: StoredRow): void {
  const d = obj("Deployment", v);
  sameKey("Deployment.ID", d.ID, row.id);
  sameKey("Deployment.Namespace", d.Namespace, row.namespace);
  sameKey("Deployment.JobID", d.JobID, row.job_id);
  sameKey("Deployment.CreateIndex", d.CreateIndex, row.create_index);
  oneOfStr("Deployment.Status", d.Status, ["running", "paused", "failed", "successful", "cancelled"]);
  int("Deployment.JobVersion", d.JobVersion);
  for (const [name, s] of Object.entries(objMap("Deployment.TaskGroups", d.TaskGroups))) {
    for (const f of ["DesiredTotal", "DesiredCanaries", "HealthyAllocs", "UnhealthyAllocs"] as const) {
      int(`Deployment.TaskGroups.${name}.${f}`, s[f]);
    }
    arr(`Deployment.TaskGroups.${name}.PlacedCanaries`, s.PlacedCanaries);
  }
}

/** A stored job version: a job record as checkJob wants it, under its (namespace, job, version) row. */
function checkJobVersion(v: unknown, row: StoredRow): void {
  checkJob(v, { ...row, id: row.job_id });
  sameKey("Job.Version", obj("Job", v).Version, row.version);
}

/** One table's check: `check` throws a coded error naming the field when the record cannot load. */
export const RECORD_CHECKS: Readonly<Record<CheckedTable, (value: unknown, row: StoredRow) => void>> = {
  nodes: checkNode,
  jobs: checkJob,
  allocs: checkAlloc,
  volumes: checkVolume,
  evals: checkEval,
  plugins: checkPlugin,
  intents: checkIntent,
  deployments: checkDeployment,
  versions: checkJobVersion,
  namespaces: checkNamespaceRecord,
  acl_policies: checkAclPolicy,
  acl_tokens: checkAclToken,
};

/** Parses and checks one row; returns the problem, or undefined when it loads. */
export function recordProblem(table: CheckedTable, row: StoredRow): string | undefined {
  try {
    RECORD_CHECKS[table](parseStored(row.json), row);
    return undefined;
  } catch (err) {
    return asBerthError(err).message;
  }
}
