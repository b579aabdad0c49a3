/**
 * Jobspecs in Nomad's JSON shape → normalised Job records, as Nomad's `Job.Canonicalize` (api
 * package, which Nomad's HTTP agent runs on every submitted job) and `Job.Validate` do. Pure.
 * Defaults follow Nomad: Namespace "default", Type "service", Count 1, Datacenters ["*"] (glob
 * patterns, structs/datacenter.ts),
 * Priority 50, NodePool "default", the update strategy's defaults (update_validate.ts). Every key
 * is checked against Nomad's field names (job_fields.ts): Nomad's own fields are accepted — the
 * server-set ones (Status, Version, indexes…) are recomputed, `ConsulToken`/`VaultToken` are never
 * stored — and anything else is refused by name. Stanzas berth keeps but does not act on are stored
 * as written; job_warnings.ts names them. Tasks: task_validate.ts.
 */
import { DEFAULT_DATACENTERS } from "./datacenter.js";
import { validationError } from "./errors.js";
import { checkId } from "./ids.js";
import {
  checkFields,
  GROUP_FIELDS,
  JOB_FIELDS,
  MOUNT_OPTIONS_FIELDS,
  RESCHEDULE_FIELDS,
  VOLUME_REQUEST_FIELDS,
} from "./job_fields.js";
import type { Job, JobType, TaskGroup, VolumeRequest } from "./job.js";
import {
  asObject,
  oneOf,
  optArray,
  optBool,
  optNumber,
  optObject,
  optOneOf,
  optString,
  optStringArray,
  optStringMap,
} from "./json_check.js";
import { keptFields } from "./kept_validate.js";
import { checkLogStorage } from "./log_config.js";
import { validateParameterized } from "./parameterized.js";
import { validatePeriodic } from "./periodic.js";
import { checkDisconnect } from "./disconnect_validate.js";
import { affinities, spreads } from "./placement_prefs_validate.js";
import { defaultRestart, groupReschedulePolicy, jobReschedule } from "./policy_validate.js";
import { checkedConstraints, restart, task } from "./task_validate.js";
import { groupUpdate, jobUpdate } from "./update_validate.js";
import { ACCESS_MODES, ATTACHMENT_MODES } from "./volume.js";
import { mountOptions } from "./volume_validate.js";
import { volumeCreateSpec } from "./job_volume_create.js";
import { DEFAULT_EPHEMERAL_DISK_MB } from "./resources_fit.js";

const JOB_TYPES: readonly JobType[] = ["service", "batch", "system", "sysbatch"];
/**
 * berth's limit on one group's Count: a scheduler pass places a group whole, in one write, so a
 * count far past any cluster (Nomad sets none) would stall the server instead of being refused.
 */
export const MAX_GROUP_COUNT = 10_000;

const JOB_KEPT_OBJECTS = ["Multiregion", "Migrate", "UI"] as const;
const GROUP_KEPT_OBJECTS = ["EphemeralDisk", "Migrate", "Disconnect", "Scaling", "Consul"] as const;
const GROUP_KEPT_LISTS = ["Networks", "Services"] as const;

const nanos = (field: string, v: unknown) => optNumber(field, v, 0, { integer: true, min: 0 });

export function validateJob(input: unknown): Job {
  const j = asObject("Job", input);
  checkFields("Job", j, JOB_FIELDS);
  const ID = checkId("Job.ID", j.ID);
  const Type = optOneOf("Job.Type", j.Type, JOB_TYPES, "job type", "service");
  const groupsIn = optArray("Job.TaskGroups", j.TaskGroups);
  if (groupsIn.length === 0) throw validationError("Job.TaskGroups", "Missing job task groups");
  checkReschedule("Job.Reschedule", j.Reschedule);
  const Reschedule = jobReschedule(Type, j.Reschedule);
  const Update = jobUpdate("Job.Update", Type, j.Update);
  const TaskGroups = groupsIn.map((g, i) => taskGroup(`Job.TaskGroups[${i}]`, g, Type, j));
  noDuplicates(
    "Job.TaskGroups",
    TaskGroups,
    (i, name, first) => `Job task group ${i} redefines '${name}' from group ${first}`,
  );
  const Datacenters = datacenters(j.Datacenters);
  systemJobRules(Type, TaskGroups, j);
  // Secrets Nomad's older clients send with every job; berth uses neither and never stores them.
  optString("Job.ConsulToken", j.ConsulToken, "");
  optString("Job.VaultToken", j.VaultToken, "");
  return {
    ID,
    Name: optString("Job.Name", j.Name, "") || ID,
    Namespace: checkId("Job.Namespace", j.Namespace ?? "default"),
    Type,
    Datacenters,
    // Nomad's range: 1 to its default maximum job priority, 100.
    Priority: optNumber("Job.Priority", j.Priority, 50, { integer: true, min: 1, max: 100 }),
    Stop: optBool("Job.Stop", j.Stop, false),
    Status: "pending",
    TaskGroups,
    ...(Reschedule ? { Reschedule } : {}),
    Constraints: checkedConstraints("Job.Constraints", j.Constraints),
    Affinities: affinities("Job.Affinities", j.Affinities),
    Spreads: spreads("Job.Spreads", j.Spreads),
    Update,
    Meta: optStringMap("Job.Meta", j.Meta),
    Region: optString("Job.Region", j.Region, "") || "global",
    AllAtOnce: optBool("Job.AllAtOnce", j.AllAtOnce, false),
    NodePool: optString("Job.NodePool", j.NodePool, "") || "default",
    ...launchConfigs(j, Type),
    ...keptFields("Job", j, JOB_KEPT_OBJECTS, []),
    Version: 0,
    SubmitTime: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
  };
}

/** Nomad's Job.Canonicalize and Validate: none (or an empty list) is `["*"]`; no empty name. */
function datacenters(input: unknown): string[] {
  const list = optStringArray("Job.Datacenters", input, [...DEFAULT_DATACENTERS]);
  list.forEach((dc, i) => {
    if (dc === "") throw validationError(`Job.Datacenters[${i}]`, "Job datacenter must be non-empty string");
  });
  return list.length > 0 ? list : [...DEFAULT_DATACENTERS];
}

/**
 * Nomad's Job.Validate and TaskGroup.Validate for system jobs: a group's count is 0 or 1 (the
 * scheduler runs `count` allocs per node), and no affinity or spread block (a system job's node
 * is not chosen). Sysbatch jobs take any count, as in Nomad.
 */
function systemJobRules(type: JobType, groups: TaskGroup[], j: Record<string, unknown>): void {
  if (type !== "system") return;
  // Nomad refuses a non-nil list; an empty list here is what a jobspec without the block decodes to.
  if (Array.isArray(j.Affinities) && j.Affinities.length > 0)
    throw validationError("Job.Affinities", "System jobs may not have an affinity block");
  if (Array.isArray(j.Spreads) && j.Spreads.length > 0)
    throw validationError("Job.Spreads", "System jobs may not have a spread block");
  groups.forEach((g, i) => {
    const field = `Job.TaskGroups[${i}]`;
    if (g.Count > 1)
      throw validationError(
        `${field}.Count`,
        `Job task group ${g.Name} has count ${g.Count}. Count cannot exceed 1 with system scheduler`,
      );
    if ((g.Affinities ?? []).length > 0)
      throw validationError(`${field}.Affinities`, "System jobs may not have an affinity block");
    if ((g.Spreads ?? []).length > 0)
      throw validationError(`${field}.Spreads`, "System jobs may not have a spread block");
  });
}

/**
 * The `periodic` and `parameterized` blocks, validated (periodic.ts, parameterized.ts); Nomad
 * allows both on batch jobs only ("Periodic can only be used with "batch" scheduler").
 */
function launchConfigs(
  j: Record<string, unknown>,
  type: JobType,
): Pick<Job, "Periodic" | "ParameterizedJob"> {
  const out: Pick<Job, "Periodic" | "ParameterizedJob"> = {};
  if (j.Periodic !== undefined && j.Periodic !== null) {
    out.Periodic = validatePeriodic("Job.Periodic", j.Periodic);
    if (out.Periodic.Enabled && type !== "batch")
      throw validationError("Job.Periodic", `Periodic can only be used with "batch" scheduler`);
  }
  if (j.ParameterizedJob !== undefined && j.ParameterizedJob !== null) {
    out.ParameterizedJob = validateParameterized("Job.ParameterizedJob", j.ParameterizedJob);
    if (type !== "batch")
      throw validationError(
        "Job.ParameterizedJob",
        `Parameterized job can only be used with "batch" scheduler`,
      );
  }
  return out;
}

/**
 * Nomad's Job.Validate and TaskGroup.Validate: a second group or task of a name is refused, the
 * text counting from 1 as Nomad's does ("Task 3 redefines 'x' from task 1").
 */
function noDuplicates(
  field: string,
  items: { Name: string }[],
  text: (index: number, name: string, first: number) => string,
): void {
  const seen = new Map<string, number>();
  for (const [i, it] of items.entries()) {
    const first = seen.get(it.Name);
    if (first !== undefined) throw validationError(`${field}[${i}].Name`, text(i + 1, it.Name, first + 1));
    seen.set(it.Name, i);
  }
}

function checkReschedule(field: string, input: unknown): void {
  const r = optObject(field, input);
  if (r) checkFields(field, r, RESCHEDULE_FIELDS);
}

function taskGroup(field: string, input: unknown, type: JobType, job: Record<string, unknown>): TaskGroup {
  const g = asObject(field, input);
  checkFields(field, g, GROUP_FIELDS);
  const Name = checkId(`${field}.Name`, g.Name);
  const Volumes: Record<string, VolumeRequest> = {};
  const vols = optObject(`${field}.Volumes`, g.Volumes) ?? {};
  for (const [key, v] of Object.entries(vols)) {
    Volumes[key] = volumeRequest(`${field}.Volumes.${key}`, key, v);
  }
  const tasksIn = optArray(`${field}.Tasks`, g.Tasks);
  if (tasksIn.length === 0) throw validationError(`${field}.Tasks`, "Missing tasks for task group");
  const RestartPolicy =
    restart(`${field}.RestartPolicy`, g.RestartPolicy, defaultRestart(type)) ?? defaultRestart(type);
  const Tasks = tasksIn.map((t, i) => task(`${field}.Tasks[${i}]`, t, Volumes, RestartPolicy));
  noDuplicates(
    `${field}.Tasks`,
    Tasks,
    (i, name, first) => `Task ${i} redefines '${name}' from task ${first}`,
  );
  checkReschedule(`${field}.ReschedulePolicy`, g.ReschedulePolicy);
  const disk = optObject(`${field}.EphemeralDisk`, g.EphemeralDisk)?.SizeMB;
  checkLogStorage(
    `${field}.Tasks`,
    Tasks,
    typeof disk === "number" && disk >= 0 ? disk : DEFAULT_EPHEMERAL_DISK_MB,
  );
  const out: TaskGroup = {
    Name,
    Count: optNumber(`${field}.Count`, g.Count, 1, { integer: true, min: 0, max: MAX_GROUP_COUNT }),
    Volumes,
    Tasks,
    RestartPolicy,
    ReschedulePolicy: groupReschedulePolicy(
      type,
      job.Reschedule,
      `${field}.ReschedulePolicy`,
      g.ReschedulePolicy,
    ),
    Constraints: checkedConstraints(`${field}.Constraints`, g.Constraints),
    Affinities: affinities(`${field}.Affinities`, g.Affinities),
    Spreads: spreads(`${field}.Spreads`, g.Spreads),
    Update: groupUpdate(`${field}.Update`, type, job.Update, g.Update),
    Meta: optStringMap(`${field}.Meta`, g.Meta),
    ShutdownDelay: nanos(`${field}.ShutdownDelay`, g.ShutdownDelay),
    ...keptFields(field, g, GROUP_KEPT_OBJECTS, GROUP_KEPT_LISTS),
  };
  for (const k of ["MaxRunDuration", "StopAfterClientDisconnect", "MaxClientDisconnect"] as const) {
    if (g[k] !== undefined && g[k] !== null) out[k] = nanos(`${field}.${k}`, g[k]);
  }
  if (optBool(`${field}.PreventRescheduleOnLost`, g.PreventRescheduleOnLost, false)) {
    out.PreventRescheduleOnLost = true;
  }
  checkDisconnect(field, out, type);
  return out;
}

function volumeRequest(field: string, key: string, input: unknown): VolumeRequest {
  const v = asObject(field, input);
  checkFields(field, v, VOLUME_REQUEST_FIELDS);
  const mo = optObject(`${field}.MountOptions`, v.MountOptions);
  if (mo) checkFields(`${field}.MountOptions`, mo, MOUNT_OPTIONS_FIELDS);
  const Type = oneOf(`${field}.Type`, v.Type, ["csi", "host"] as const, "volume type");
  const PerAlloc = optBool(`${field}.PerAlloc`, v.PerAlloc, false);
  const Source =
    Type === "csi" ? checkId(`${field}.Source`, v.Source) : optString(`${field}.Source`, v.Source, "");
  if (Type === "host" && Source === "") throw validationError(`${field}.Source`, "is required");
  if (Type === "csi" && PerAlloc) checkId(`${field}.Source`, `${Source}[0]`);
  const csi = Type === "csi";
  const out: VolumeRequest = {
    Name: optString(`${field}.Name`, v.Name, "") || key,
    Type,
    Source,
    ReadOnly: optBool(`${field}.ReadOnly`, v.ReadOnly, false),
    AccessMode: csi ? oneOf(`${field}.AccessMode`, v.AccessMode, ACCESS_MODES, "access mode") : "",
    AttachmentMode: csi
      ? oneOf(`${field}.AttachmentMode`, v.AttachmentMode, ATTACHMENT_MODES, "attachment mode")
      : "",
    MountOptions: mountOptions(`${field}.MountOptions`, v.MountOptions),
    PerAlloc,
  };
  if (optBool(`${field}.Sticky`, v.Sticky, false)) out.Sticky = true;
  const create = volumeCreateSpec(`${field}.Create`, v.Create, out);
  if (create) out.Create = create;
  return out;
}
