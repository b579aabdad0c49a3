/**
 * Jobspecs in Nomad's JSON shape → normalised Job records. Pure. Defaults follow Nomad: Namespace
 * "default", Type "service", Count 1, Datacenters ["dc1"], Priority 50, KillTimeout 5s.
 */
import { validationError } from "./errors.js";
import { checkId } from "./ids.js";
import { checkTaskPath } from "./job_paths_validate.js";
import {
  asObject,
  isObject,
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
import {
  NS_PER_S,
  type Job,
  type JobType,
  type RestartPolicy,
  type Task,
  type TaskCSIPluginConfig,
  type TaskGroup,
  type VolumeMount,
  type VolumeRequest,
} from "./job.js";
import { PLUGIN_TYPES } from "./plugin.js";
import { constraints } from "./constraint_validate.js";
import { effectiveUpdate } from "./update_validate.js";
import { ACCESS_MODES, ATTACHMENT_MODES } from "./volume.js";
import { mountOptions } from "./volume_validate.js";
import { defaultRestart, groupReschedulePolicy, jobReschedule, restartPolicy } from "./policy_validate.js";

const JOB_TYPES: readonly JobType[] = ["service", "batch", "system"];
/**
 * berth's limit on one group's Count: a scheduler pass places a group whole, in one write, so a
 * count far past any cluster (Nomad sets none) would stall the server instead of being refused.
 */
export const MAX_GROUP_COUNT = 10_000;
const PROPAGATION_MODES = ["private", "host-to-task", "bidirectional"] as const;

export function validateJob(input: unknown): Job {
  const j = asObject("Job", input);
  const ID = checkId("Job.ID", j.ID);
  const Type = optOneOf("Job.Type", j.Type, JOB_TYPES, "job type", "service");
  const groupsIn = optArray("Job.TaskGroups", j.TaskGroups);
  if (groupsIn.length === 0) throw validationError("Job.TaskGroups", "at least one task group is required");
  const Reschedule = jobReschedule(Type, j.Reschedule);
  const TaskGroups = groupsIn.map((g, i) => taskGroup(`Job.TaskGroups[${i}]`, g, Type, j.Reschedule));
  // `update`: each group's effective strategy, the job's as written (update_validate.ts).
  TaskGroups.forEach((tg, i) => {
    const u = effectiveUpdate(
      `Job.TaskGroups[${i}].Update`,
      j.Update,
      (groupsIn[i] as { Update?: unknown }).Update,
    );
    if (u && Type === "service") tg.Update = u;
  });
  noDuplicates("Job.TaskGroups", TaskGroups);
  const Datacenters = optStringArray("Job.Datacenters", j.Datacenters, ["dc1"]);
  return {
    ID,
    Name: optString("Job.Name", j.Name, "") || ID,
    Namespace: checkId("Job.Namespace", j.Namespace ?? "default"),
    Type,
    Datacenters: Datacenters.length > 0 ? Datacenters : ["dc1"],
    // Nomad's range: 1 to its default maximum job priority, 100.
    Priority: optNumber("Job.Priority", j.Priority, 50, { integer: true, min: 1, max: 100 }),
    Stop: optBool("Job.Stop", j.Stop, false),
    Status: "pending",
    TaskGroups,
    ...(Reschedule ? { Reschedule } : {}),
    ...(Type === "service" && isObject(j.Update)
      ? { Update: effectiveUpdate("Job.Update", j.Update, null) }
      : {}),
    Constraints: constraints("Job.Constraints", j.Constraints),
    Version: 0,
    SubmitTime: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
  };
}

function noDuplicates(field: string, items: { Name: string }[]): void {
  const seen = new Set<string>();
  for (const [i, it] of items.entries()) {
    if (seen.has(it.Name))
      throw validationError(`${field}[${i}].Name`, `duplicate name ${JSON.stringify(it.Name)}`);
    seen.add(it.Name);
  }
}

function taskGroup(field: string, input: unknown, type: JobType, jobReschedule: unknown): TaskGroup {
  const g = asObject(field, input);
  const Name = checkId(`${field}.Name`, g.Name);
  const Volumes: Record<string, VolumeRequest> = {};
  const vols = optObject(`${field}.Volumes`, g.Volumes) ?? {};
  for (const [key, v] of Object.entries(vols)) {
    Volumes[key] = volumeRequest(`${field}.Volumes.${key}`, key, v);
  }
  const tasksIn = optArray(`${field}.Tasks`, g.Tasks);
  if (tasksIn.length === 0) throw validationError(`${field}.Tasks`, "at least one task is required");
  const RestartPolicy =
    restartPolicy(`${field}.RestartPolicy`, g.RestartPolicy, defaultRestart(type)) ?? defaultRestart(type);
  const Tasks = tasksIn.map((t, i) => task(`${field}.Tasks[${i}]`, t, Volumes, RestartPolicy));
  noDuplicates(`${field}.Tasks`, Tasks);
  return {
    Name,
    Count: optNumber(`${field}.Count`, g.Count, 1, { integer: true, min: 0, max: MAX_GROUP_COUNT }),
    Volumes,
    Tasks,
    RestartPolicy,
    ReschedulePolicy: groupReschedulePolicy(
      type,
      jobReschedule,
      `${field}.ReschedulePolicy`,
      g.ReschedulePolicy,
    ),
    Constraints: constraints(`${field}.Constraints`, g.Constraints),
  };
}

function volumeRequest(field: string, key: string, input: unknown): VolumeRequest {
  const v = asObject(field, input);
  const Type = oneOf(`${field}.Type`, v.Type, ["csi", "host"] as const, "volume type");
  const PerAlloc = optBool(`${field}.PerAlloc`, v.PerAlloc, false);
  const Source =
    Type === "csi" ? checkId(`${field}.Source`, v.Source) : optString(`${field}.Source`, v.Source, "");
  if (Type === "host" && Source === "") throw validationError(`${field}.Source`, "is required");
  if (Type === "csi" && PerAlloc) checkId(`${field}.Source`, `${Source}[0]`);
  const csi = Type === "csi";
  return {
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
}

function task(
  field: string,
  input: unknown,
  volumes: Record<string, VolumeRequest>,
  groupRestart: RestartPolicy,
): Task {
  const t = asObject(field, input);
  const Driver = optString(`${field}.Driver`, t.Driver, "");
  if (Driver === "") throw validationError(`${field}.Driver`, "is required");
  const config = t.Config ?? {};
  if (!isObject(config)) throw validationError(`${field}.Config`, "must be an object");
  return {
    Name: checkId(`${field}.Name`, t.Name),
    Driver,
    Config: config,
    Env: optStringMap(`${field}.Env`, t.Env),
    VolumeMounts: optArray(`${field}.VolumeMounts`, t.VolumeMounts).map((m, i) =>
      volumeMount(`${field}.VolumeMounts[${i}]`, m, volumes),
    ),
    CSIPluginConfig: csiPlugin(`${field}.CSIPluginConfig`, t.CSIPluginConfig),
    KillTimeout: optNumber(`${field}.KillTimeout`, t.KillTimeout, 5 * NS_PER_S, { integer: true, min: 0 }),
    RestartPolicy: restartPolicy(`${field}.RestartPolicy`, t.RestartPolicy, groupRestart),
    Constraints: constraints(`${field}.Constraints`, t.Constraints),
  };
}

function volumeMount(field: string, input: unknown, volumes: Record<string, VolumeRequest>): VolumeMount {
  const m = asObject(field, input);
  const Volume = optString(`${field}.Volume`, m.Volume, "");
  if (Volume === "") throw validationError(`${field}.Volume`, "is required");
  if (!Object.hasOwn(volumes, Volume)) {
    throw validationError(`${field}.Volume`, `no group volume named ${JSON.stringify(Volume)}`);
  }
  const Destination = checkTaskPath(
    `${field}.Destination`,
    optString(`${field}.Destination`, m.Destination, ""),
  );
  return {
    Volume,
    Destination,
    ReadOnly: optBool(`${field}.ReadOnly`, m.ReadOnly, false),
    PropagationMode: optOneOf(
      `${field}.PropagationMode`,
      m.PropagationMode,
      PROPAGATION_MODES,
      "propagation mode",
      "private",
    ),
  };
}

function csiPlugin(field: string, input: unknown): TaskCSIPluginConfig | null {
  const p = optObject(field, input);
  if (!p) return null;
  const MountDir = checkTaskPath(`${field}.MountDir`, optString(`${field}.MountDir`, p.MountDir, ""));
  // Empty means Nomad's default (/local/csi, see plugin_layout.ts).
  const StagePublishBaseDir = optString(`${field}.StagePublishBaseDir`, p.StagePublishBaseDir, "");
  if (StagePublishBaseDir !== "") checkTaskPath(`${field}.StagePublishBaseDir`, StagePublishBaseDir);
  return {
    ID: checkId(`${field}.ID`, p.ID),
    Type: oneOf(`${field}.Type`, p.Type, PLUGIN_TYPES, "plugin type"),
    MountDir,
    StagePublishBaseDir,
    HealthTimeout: optNumber(`${field}.HealthTimeout`, p.HealthTimeout, 30 * NS_PER_S, {
      integer: true,
      min: 0,
    }),
  };
}

/**
 * Nomad's `{LTarget, RTarget, Operand}`. The left side must be a node attribute berth knows (an
 * unknown one would silently never match); the right side a literal or another attribute.
 */
