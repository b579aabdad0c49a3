/**
 * A jobspec's `task` block → Nomad's JSON Task. Fields berth acts on are typed; stanzas it keeps
 * but does not act on decode by their schemas (jobspec_kept.ts). A `vault` or `secret` block given
 * at job or group level applies to every task that has none, as in Nomad's jobspec2; an
 * `identity` block without a name (or named "default") is the task's `Identity`.
 */
import type { Body } from "./body.js";
import {
  ACTION,
  ARTIFACT,
  CONSUL,
  decodeKept,
  DISPATCH_PAYLOAD,
  IDENTITY,
  LOGS,
  normalizeVault,
  SCALING,
  SCHEDULE,
  SECRET,
  SERVICE,
  VAULT,
} from "./jobspec_kept.js";
import {
  affinitiesFrom,
  constraintsFrom,
  lifecycleFrom,
  resourcesFrom,
  restartFrom,
  templatesFrom,
} from "./jobspec_stanzas.js";
import type { KeptStanza, RestartPolicy, Task, TaskCSIPluginConfig, VolumeMount } from "../types.js";

const NS_PER_S = 1e9;

/** What a task inherits from its job and group. */
export interface TaskDefaults {
  restart: RestartPolicy;
  vault?: KeptStanza;
  secrets: KeptStanza[];
}

export function vaultFrom(b: Body): KeptStanza | undefined {
  const v = b.block("vault");
  return v ? normalizeVault(decodeKept(v, VAULT)) : undefined;
}

export function secretsFrom(b: Body): KeptStanza[] {
  return b.labelled("secret").map(([Name, s]) => ({ Name, ...decodeKept(s, SECRET) }));
}

export function taskFrom(name: string, b: Body, d: TaskDefaults): Task {
  const plugin = b.block("csi_plugin");
  const task: Task = {
    Name: name,
    Driver: b.string("driver") ?? "",
    Config: b.raw("config") ?? {},
    Env: b.stringMap("env") ?? {},
    VolumeMounts: b.blocks("volume_mount").map(volumeMountFrom),
    CSIPluginConfig: plugin ? pluginFrom(plugin) : null,
    KillTimeout: b.duration("kill_timeout") ?? 5 * NS_PER_S,
    RestartPolicy: restartFrom(b.block("restart"), d.restart),
    ...constraintsFrom(b),
    ...affinitiesFrom(b),
  };
  const opt = <K extends keyof Task>(key: K, v: Task[K] | undefined) => {
    if (v !== undefined) task[key] = v;
  };
  opt("User", b.string("user"));
  opt("Lifecycle", lifecycleFrom(b));
  opt("Resources", resourcesFrom(b));
  opt("Meta", b.stringMap("meta"));
  opt("KillSignal", b.string("kill_signal"));
  opt("ShutdownDelay", b.duration("shutdown_delay"));
  opt("Leader", b.bool("leader"));
  opt("Kind", b.string("kind"));
  const templates = templatesFrom(b);
  if (templates.length > 0) task.Templates = templates;
  const list = <K extends keyof Task>(key: K, v: KeptStanza[]) => {
    if (v.length > 0) task[key] = v as Task[K];
  };
  list(
    "Services",
    b.blocks("service").map((s) => decodeKept(s, SERVICE)),
  );
  list(
    "Artifacts",
    b.blocks("artifact").map((a) => decodeKept(a, ARTIFACT)),
  );
  // `scaling "cpu"` / `scaling "mem"`: Nomad's vertical policies (jobspec2 decodeTaskScalingPolicies).
  list(
    "ScalingPolicies",
    b.labelled("scaling").map(([label, s]) => ({
      ...decodeKept(s, SCALING),
      Type: label === "mem" ? "vertical_mem" : label === "cpu" ? "vertical_cpu" : label,
    })),
  );
  list(
    "Actions",
    b.labelled("action").map(([Name, a]) => ({ Name, ...decodeKept(a, ACTION) })),
  );
  const logs = b.block("logs");
  if (logs) task.LogConfig = decodeKept(logs, LOGS);
  const vault = vaultFrom(b) ?? d.vault;
  if (vault) task.Vault = vault;
  const consul = b.block("consul");
  if (consul) task.Consul = decodeKept(consul, CONSUL);
  const payload = b.block("dispatch_payload");
  if (payload) task.DispatchPayload = decodeKept(payload, DISPATCH_PAYLOAD);
  const schedule = b.block("schedule");
  if (schedule) task.Schedule = decodeKept(schedule, SCHEDULE);
  list("Secrets", [...secretsFrom(b), ...d.secrets]);
  const identities = b.blocks("identity").map((i) => decodeKept(i, IDENTITY));
  const def = identities.findIndex((i) => i.Name === undefined || i.Name === "" || i.Name === "default");
  if (def >= 0) task.Identity = identities.splice(def, 1)[0]!;
  list("Identities", identities);
  b.finish();
  return task;
}

function volumeMountFrom(b: Body): VolumeMount {
  const m: VolumeMount = {
    Volume: b.string("volume") ?? "",
    Destination: b.string("destination") ?? "",
    ReadOnly: b.bool("read_only") ?? false,
    PropagationMode: b.string("propagation_mode") ?? "private",
  };
  const label = b.string("selinux_label");
  if (label) m.SELinuxLabel = label;
  b.finish();
  return m;
}

/** Nomad's defaults (api TaskCSIPluginConfig.Canonicalize): /csi, /local/csi, 30s. */
function pluginFrom(b: Body): TaskCSIPluginConfig {
  const p: TaskCSIPluginConfig = {
    ID: b.string("id") ?? "",
    Type: b.string("type") ?? "",
    MountDir: b.string("mount_dir") || "/csi",
    StagePublishBaseDir: b.string("stage_publish_base_dir") || "/local/csi",
    HealthTimeout: b.duration("health_timeout") || 30 * NS_PER_S,
  };
  b.finish();
  return p;
}
