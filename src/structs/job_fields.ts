/**
 * The JSON field names of Nomad's `api` package structs (api/jobs.go, api/tasks.go,
 * api/resources.go, api/constraint.go, api/csi.go), so a job body is checked key by key: a key that
 * is none of Nomad's is a typo (`Drvier`) and is refused by name instead of being dropped, while
 * every field Nomad's Go client sends — it sends all of them, zero values and nulls included — is
 * accepted. Fields older Nomad clients still send (`ConsulToken`, `VaultToken`) are listed too.
 * Pure.
 */
import { validationError } from "./errors.js";
import type { JsonObject } from "./json_check.js";

export const JOB_FIELDS = new Set([
  "Region",
  "Namespace",
  "ID",
  "Name",
  "Type",
  "Priority",
  "AllAtOnce",
  "Datacenters",
  "NodePool",
  "Constraints",
  "Affinities",
  "TaskGroups",
  "Update",
  "Multiregion",
  "Spreads",
  "Periodic",
  "ParameterizedJob",
  "Reschedule",
  "Migrate",
  "Meta",
  "UI",
  "ConsulToken",
  "VaultToken",
  // Set by the server; a client echoing a job it read back sends them.
  "Stop",
  "ParentID",
  "Dispatched",
  "DispatchIdempotencyToken",
  "Payload",
  "ConsulNamespace",
  "VaultNamespace",
  "NomadTokenID",
  "Status",
  "StatusDescription",
  "Stable",
  "Version",
  "SubmitTime",
  "CreateIndex",
  "ModifyIndex",
  "JobModifyIndex",
  "VersionTag",
]);

export const GROUP_FIELDS = new Set([
  "Name",
  "Count",
  "Constraints",
  "Affinities",
  "Tasks",
  "Spreads",
  "Volumes",
  "RestartPolicy",
  "Disconnect",
  "ReschedulePolicy",
  "EphemeralDisk",
  "Update",
  "Migrate",
  "Networks",
  "Meta",
  "Services",
  "ShutdownDelay",
  "MaxRunDuration",
  "StopAfterClientDisconnect",
  "MaxClientDisconnect",
  "Scaling",
  "Consul",
  "PreventRescheduleOnLost",
]);

export const TASK_FIELDS = new Set([
  "Name",
  "Driver",
  "User",
  "Lifecycle",
  "Config",
  "Constraints",
  "Affinities",
  "Env",
  "Services",
  "Resources",
  "RestartPolicy",
  "Meta",
  "KillTimeout",
  "LogConfig",
  "Artifacts",
  "Vault",
  "Consul",
  "Templates",
  "DispatchPayload",
  "VolumeMounts",
  "CSIPluginConfig",
  "Leader",
  "ShutdownDelay",
  "KillSignal",
  "Kind",
  "ScalingPolicies",
  "Secrets",
  "Identity",
  "Identities",
  "Actions",
  "Schedule",
]);

export const VOLUME_REQUEST_FIELDS = new Set([
  "Name",
  "Type",
  "Source",
  "ReadOnly",
  "Sticky",
  "AccessMode",
  "AttachmentMode",
  "MountOptions",
  "PerAlloc",
  "Create",
]);
/** "FsType": what older berth clients wrote, read as Go's case-insensitive decoder does. */
export const MOUNT_OPTIONS_FIELDS = new Set([
  "FSType",
  "FsType",
  "MountFlags",
  "MountGroup",
  "MountGroupPolicy",
]);
export const VOLUME_MOUNT_FIELDS = new Set([
  "Volume",
  "Destination",
  "ReadOnly",
  "PropagationMode",
  "SELinuxLabel",
]);
export const CSI_PLUGIN_FIELDS = new Set(["ID", "Type", "MountDir", "StagePublishBaseDir", "HealthTimeout"]);
export const RESTART_FIELDS = new Set(["Interval", "Attempts", "Delay", "Mode", "RenderTemplates"]);
export const RESCHEDULE_FIELDS = new Set([
  "Attempts",
  "Interval",
  "Delay",
  "DelayFunction",
  "MaxDelay",
  "Unlimited",
]);
export const CONSTRAINT_FIELDS = new Set(["LTarget", "RTarget", "Operand"]);
export const AFFINITY_FIELDS = new Set(["LTarget", "RTarget", "Operand", "Weight"]);
export const SPREAD_FIELDS = new Set(["Attribute", "Weight", "SpreadTarget"]);
export const SPREAD_TARGET_FIELDS = new Set(["Value", "Percent"]);
export const UPDATE_FIELDS = new Set([
  "Stagger",
  "MaxParallel",
  "HealthCheck",
  "MinHealthyTime",
  "HealthyDeadline",
  "ProgressDeadline",
  "Canary",
  "AutoRevert",
  "AutoPromote",
]);
export const RESOURCES_FIELDS = new Set([
  "CPU",
  "Cores",
  "MemoryMB",
  "MemoryMaxMB",
  "DiskMB",
  "Networks",
  "Devices",
  "NUMA",
  "SecretsMB",
  "IOPS",
]);
export const LIFECYCLE_FIELDS = new Set(["Hook", "Sidecar"]);
export const TEMPLATE_FIELDS = new Set([
  "SourcePath",
  "DestPath",
  "EmbeddedTmpl",
  "ChangeMode",
  "ChangeScript",
  "ChangeSignal",
  "Once",
  "Splay",
  "Perms",
  "Uid",
  "Gid",
  "LeftDelim",
  "RightDelim",
  "Envvars",
  "VaultGrace",
  "Wait",
  "ErrMissingKey",
]);

/**
 * Throws `field.Key: unknown field` for the first key of `obj` that `known` lacks, naming the field
 * meant when only the letter case differs (`Driver` for `driver`).
 */
export function checkFields(field: string, obj: JsonObject, known: ReadonlySet<string>): void {
  for (const key of Object.keys(obj)) {
    if (known.has(key)) continue;
    const meant = [...known].find((k) => k.toLowerCase() === key.toLowerCase());
    throw validationError(
      `${field}.${key}`,
      meant ? `unknown field (did you mean "${meant}"?)` : "unknown field",
    );
  }
}
