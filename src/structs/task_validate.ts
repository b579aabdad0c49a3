/**
 * One task of a job in Nomad's JSON → the normalised Task, as Nomad's `Task.Canonicalize` (api
 * package) and `Task.Validate` do: KillTimeout 5s, Resources 100 MHz / 300 MiB, templates and the
 * csi_plugin block (mount_dir "/csi", stage_publish_base_dir "/local/csi", health_timeout 30s) with
 * Nomad's defaults, the group's restart policy under the task's. Stanzas berth keeps but does not
 * act on are stored as written (kept_validate.ts). Any key that is not one of Nomad's is refused by
 * name (job_fields.ts). The driver is not checked against this cluster's drivers: a task no node can
 * run is registered and fails placement (`missing drivers`), as in Nomad. Pure.
 */
import { posix } from "node:path";
import { constraints, type ConstraintLevel } from "./constraint_validate.js";
import { checkDriverConfig } from "./driver_config_validate.js";
import { validationError } from "./errors.js";
import { checkId } from "./ids.js";
import {
  checkFields,
  CONSTRAINT_FIELDS,
  CSI_PLUGIN_FIELDS,
  RESTART_FIELDS,
  TASK_FIELDS,
  VOLUME_MOUNT_FIELDS,
} from "./job_fields.js";
import { checkTaskPath } from "./job_paths_validate.js";
import type { DispatchPayloadConfig } from "./job_stanzas.js";
import {
  NS_PER_S,
  type RestartPolicy,
  type Task,
  type TaskCSIPluginConfig,
  type VolumeMount,
  type VolumeRequest,
} from "./job.js";
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
  optStringMap,
} from "./json_check.js";
import { keptFields } from "./kept_validate.js";
import { logConfig } from "./log_config.js";
import { affinities } from "./placement_prefs_validate.js";
import { PLUGIN_TYPES } from "./plugin.js";
import { restartPolicy } from "./policy_validate.js";
import { taskResources } from "./resources_validate.js";
import { killSignal, lifecycle } from "./task_stanzas_validate.js";
import { templates } from "./template_validate.js";

const PROPAGATION_MODES = ["private", "host-to-task", "bidirectional"] as const;

const TASK_KEPT_OBJECTS = ["Vault", "Consul", "Identity", "Schedule"] as const;
const TASK_KEPT_LISTS = [
  "Services",
  "Artifacts",
  "ScalingPolicies",
  "Secrets",
  "Identities",
  "Actions",
] as const;

/** Every element of a constraint list checked for unknown keys before constraint_validate reads it. */
export function checkedConstraints(field: string, input: unknown, level: ConstraintLevel = "group") {
  optArray(field, input).forEach((c, i) => {
    if (isObject(c)) checkFields(`${field}[${i}]`, c, CONSTRAINT_FIELDS);
  });
  return constraints(field, input, level);
}

/**
 * A restart policy over `base` (policy_validate.ts), its keys checked, Nomad's `RenderTemplates`
 * kept when true; null when `input` is absent.
 */
export function restart(field: string, input: unknown, base: RestartPolicy): RestartPolicy | null {
  const r = optObject(field, input);
  if (r) checkFields(field, r, RESTART_FIELDS);
  const p = restartPolicy(field, input, base);
  if (!p || !r) return p;
  const render = optBool(`${field}.RenderTemplates`, r.RenderTemplates, base.RenderTemplates ?? false);
  return render ? { ...p, RenderTemplates: true } : p;
}

export function task(
  field: string,
  input: unknown,
  volumes: Record<string, VolumeRequest>,
  groupRestart: RestartPolicy,
): Task {
  const t = asObject(field, input);
  checkFields(field, t, TASK_FIELDS);
  const Driver = optString(`${field}.Driver`, t.Driver, "");
  if (Driver === "") throw validationError(`${field}.Driver`, "is required");
  const config = t.Config ?? {};
  if (!isObject(config)) throw validationError(`${field}.Config`, "must be an object");
  const Config = checkDriverConfig(`${field}.Config`, Driver, config);
  const out: Task = {
    Name: checkId(`${field}.Name`, t.Name),
    Driver,
    Config,
    Env: processEnv(`${field}.Env`, t.Env),
    VolumeMounts: optArray(`${field}.VolumeMounts`, t.VolumeMounts).map((m, i) =>
      volumeMount(`${field}.VolumeMounts[${i}]`, m, volumes),
    ),
    CSIPluginConfig: csiPlugin(`${field}.CSIPluginConfig`, t.CSIPluginConfig),
    KillTimeout: optNumber(`${field}.KillTimeout`, t.KillTimeout, 5 * NS_PER_S, { integer: true, min: 0 }),
    RestartPolicy: restart(`${field}.RestartPolicy`, t.RestartPolicy, groupRestart),
    Constraints: checkedConstraints(`${field}.Constraints`, t.Constraints, "task"),
    Resources: taskResources(`${field}.Resources`, t.Resources),
    Lifecycle: lifecycle(`${field}.Lifecycle`, t.Lifecycle),
    Templates: templates(`${field}.Templates`, t.Templates),
    KillSignal: killSignal(`${field}.KillSignal`, t.KillSignal),
    User: optString(`${field}.User`, t.User, ""),
    Meta: optStringMap(`${field}.Meta`, t.Meta),
    Affinities: affinities(`${field}.Affinities`, t.Affinities),
    LogConfig: logConfig(`${field}.LogConfig`, t.LogConfig),
    ShutdownDelay: optNumber(`${field}.ShutdownDelay`, t.ShutdownDelay, 0, { integer: true, min: 0 }),
    Leader: optBool(`${field}.Leader`, t.Leader, false),
    Kind: optString(`${field}.Kind`, t.Kind, ""),
    ...dispatchPayload(`${field}.DispatchPayload`, t.DispatchPayload),
    ...keptFields(field, t, TASK_KEPT_OBJECTS, TASK_KEPT_LISTS),
  };
  return out;
}

/**
 * A task's `dispatch_payload`: `File` is relative to the task's `local/` dir and may not climb out
 * of it (Nomad: "dispatch payload file name escapes allocation directory"). Absent when not set.
 */
function dispatchPayload(field: string, input: unknown): { DispatchPayload?: DispatchPayloadConfig } {
  const d = optObject(field, input);
  if (!d) return {};
  for (const k of Object.keys(d)) {
    if (k !== "File") throw validationError(`${field}.${k}`, "unknown field");
  }
  const File = optString(`${field}.File`, d.File, "");
  if (File === "") return {};
  const norm = posix.normalize(File);
  if (posix.isAbsolute(File) || norm === ".." || norm.startsWith("../") || File.includes("\0"))
    throw validationError(`${field}.File`, "dispatch payload file name escapes allocation directory");
  return { DispatchPayload: { File: norm } };
}

function volumeMount(field: string, input: unknown, volumes: Record<string, VolumeRequest>): VolumeMount {
  const m = asObject(field, input);
  checkFields(field, m, VOLUME_MOUNT_FIELDS);
  const Volume = optString(`${field}.Volume`, m.Volume, "");
  if (Volume === "") throw validationError(`${field}.Volume`, "is required");
  if (!Object.hasOwn(volumes, Volume)) {
    throw validationError(`${field}.Volume`, `no group volume named ${JSON.stringify(Volume)}`);
  }
  const Destination = checkTaskPath(
    `${field}.Destination`,
    optString(`${field}.Destination`, m.Destination, ""),
  );
  const out: VolumeMount = {
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
  const SELinuxLabel = optString(`${field}.SELinuxLabel`, m.SELinuxLabel, "");
  if (SELinuxLabel !== "") out.SELinuxLabel = SELinuxLabel;
  return out;
}

/** Nomad's TaskCSIPluginConfig.Canonicalize defaults: /csi, /local/csi, 30s. */
function csiPlugin(field: string, input: unknown): TaskCSIPluginConfig | null {
  const p = optObject(field, input);
  if (!p) return null;
  checkFields(field, p, CSI_PLUGIN_FIELDS);
  const MountDir = checkTaskPath(
    `${field}.MountDir`,
    optString(`${field}.MountDir`, p.MountDir, "") || "/csi",
  );
  const StagePublishBaseDir = checkTaskPath(
    `${field}.StagePublishBaseDir`,
    optString(`${field}.StagePublishBaseDir`, p.StagePublishBaseDir, "") || "/local/csi",
  );
  return {
    ID: checkId(`${field}.ID`, p.ID),
    Type: oneOf(`${field}.Type`, p.Type, PLUGIN_TYPES, "plugin type"),
    MountDir,
    StagePublishBaseDir,
    HealthTimeout:
      optNumber(`${field}.HealthTimeout`, p.HealthTimeout, 30 * NS_PER_S, { integer: true, min: 0 }) ||
      30 * NS_PER_S,
  };
}

/** The task's env: strings, none with a NUL (execve ends each entry at one, so none could be set). */
function processEnv(field: string, input: unknown): Record<string, string> {
  const env = optStringMap(field, input);
  for (const [k, v] of Object.entries(env)) {
    if (k.includes("\0") || v.includes("\0"))
      throw validationError(`${field}.${k.replaceAll("\0", "\\0")}`, "must not contain a NUL character");
  }
  return env;
}
