/**
 * The task's environment and `${...}` interpolation, as Nomad's taskenv does it. Paths are in the
 * task's view for drivers that chroot (exec: /local, /alloc, /secrets) and host paths otherwise
 * (raw_exec).
 *
 * What `${...}` may name:
 * - any variable of the task's environment: `${NOMAD_ALLOC_ID}`, the task's own `env`, and what
 *   hooks set, e.g. `${CSI_ENDPOINT}`; also written `${env["NAME"]}` or `${env.NAME}`;
 * - the node: `${node.unique.id}`, `${node.unique.name}`, `${node.datacenter}`, `${node.class}`,
 *   `${node.region}`;
 * - `${attr.NAME}` (fingerprinted attributes, e.g. `${attr.kernel.name}`) and `${meta.NAME}`.
 * Unknown references are left as written, as Nomad does.
 *
 * The task's own `env` values are expanded against everything but the task's env itself (Nomad
 * builds them from node and NOMAD_* values); config.command, config.args and volume_mount
 * destinations against all of it, the final env included.
 */
import type { AllocDir } from "../../allocdir/alloc_dir.js";
import { allocIndex, allocTaskGroup, type Allocation } from "../../../structs/alloc.js";
import type { Task } from "../../../structs/job.js";
import type { ClientHostVolumeConfig } from "../../../structs/node.js";

/** What the task runner knows of its node. */
export interface TaskNode {
  id: string;
  name: string;
  datacenter?: string;
  nodeClass?: string;
  attributes?: Record<string, string>;
  meta?: Record<string, string>;
  hostVolumes?: Record<string, ClientHostVolumeConfig>;
}

export interface TaskEnvInput {
  alloc: Allocation;
  task: Task;
  allocDir: AllocDir;
  node: TaskNode;
  /** The driver chroots into the task dir, so paths are given in the task's view. */
  taskView: boolean;
}

/** Names `${...}` resolves: `vars` by their full name, `env` also through `env["NAME"]`. */
export interface InterpolationScope {
  vars: Record<string, string>;
  env: Record<string, string>;
}

/** The NOMAD_* variables set in every task's environment. */
export function nomadEnv(i: TaskEnvInput): Record<string, string> {
  const name = i.task.Name;
  return {
    NOMAD_TASK_DIR: i.taskView ? "/local" : i.allocDir.taskLocalDir(name),
    NOMAD_ALLOC_DIR: i.taskView ? "/alloc" : i.allocDir.sharedDir,
    NOMAD_SECRETS_DIR: i.taskView ? "/secrets" : i.allocDir.taskSecretsDir(name),
    NOMAD_ALLOC_ID: i.alloc.ID,
    NOMAD_SHORT_ALLOC_ID: i.alloc.ID.slice(0, 8),
    NOMAD_ALLOC_NAME: i.alloc.Name,
    NOMAD_ALLOC_INDEX: String(allocIndex(i.alloc)),
    NOMAD_JOB_ID: i.alloc.JobID,
    NOMAD_JOB_NAME: i.alloc.Job.Name,
    NOMAD_NAMESPACE: i.alloc.Namespace,
    NOMAD_TASK_NAME: name,
    NOMAD_GROUP_NAME: i.alloc.TaskGroup,
    NOMAD_DC: i.node.datacenter ?? "dc1",
    NOMAD_REGION: "global",
    ...(i.alloc.Job.ParentID ? { NOMAD_JOB_PARENT_ID: i.alloc.Job.ParentID } : {}),
    ...resourceEnv(i),
    ...metaEnv(i),
  };
}

/** Nomad's NOMAD_CPU_LIMIT, NOMAD_MEMORY_LIMIT and NOMAD_MEMORY_MAX_LIMIT, from what was set aside. */
function resourceEnv(i: TaskEnvInput): Record<string, string> {
  const r = i.alloc.AllocatedResources?.Tasks[i.task.Name];
  if (!r) return {};
  const out: Record<string, string> = {
    NOMAD_CPU_LIMIT: String(r.Cpu.CpuShares),
    NOMAD_MEMORY_LIMIT: String(r.Memory.MemoryMB),
  };
  if (r.Memory.MemoryMaxMB > 0) out.NOMAD_MEMORY_MAX_LIMIT = String(r.Memory.MemoryMaxMB);
  return out;
}

/**
 * NOMAD_META_<key> for the job's, group's and task's meta merged (the task's winning), each key
 * as written and upper-cased, characters other than letters, digits and `_` made `_` (Nomad's
 * taskenv). A dispatched job's optional meta keys it was not given are set, empty.
 */
function metaEnv(i: TaskEnvInput): Record<string, string> {
  const job = i.alloc.Job;
  const group = allocTaskGroup(i.alloc);
  const merged: Record<string, string> = {};
  if (job.Dispatched) for (const k of job.ParameterizedJob?.MetaOptional ?? []) merged[k] = "";
  Object.assign(merged, job.Meta, group?.Meta, i.task.Meta);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(merged)) {
    out[cleanEnvName(`NOMAD_META_${k.toUpperCase()}`)] = v;
    out[cleanEnvName(`NOMAD_META_${k}`)] = v;
  }
  return out;
}

function cleanEnvName(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, "_");
}

/** The node's names: node.*, attr.*, meta.*. */
export function nodeVars(node: TaskNode): Record<string, string> {
  const out: Record<string, string> = {
    "node.unique.id": node.id,
    "node.unique.name": node.name,
    "node.datacenter": node.datacenter ?? "dc1",
    "node.class": node.nodeClass ?? "",
    "node.region": "global",
  };
  for (const [k, v] of Object.entries(node.attributes ?? {})) out[`attr.${k}`] = v;
  for (const [k, v] of Object.entries(node.meta ?? {})) out[`meta.${k}`] = v;
  return out;
}

const ENV_INDEX = /^env\[\s*(?:"([^"]*)"|'([^']*)')\s*\]$/;
const ENV_ATTR = /^env\.([A-Za-z_][A-Za-z0-9_]*)$/;

/** Expands every known `${...}` in `text`; unknown ones stay as written. */
export function interpolate(text: string, scope: InterpolationScope): string {
  return text.replace(/\$\{([^}]+)\}/g, (whole, raw: string) => {
    const key = raw.trim();
    const m = ENV_INDEX.exec(key) ?? ENV_ATTR.exec(key);
    if (m) return scope.env[m[1] ?? m[2] ?? ""] ?? whole;
    return scope.vars[key] ?? scope.env[key] ?? whole;
  });
}

/**
 * The task's env: its own (interpolated), then NOMAD_*, then what hooks add (e.g. CSI_ENDPOINT),
 * later ones winning; and the scope to interpolate the rest of the task's config with.
 */
export function buildTaskEnv(
  i: TaskEnvInput,
  hookEnv: Record<string, string>,
): { env: Record<string, string>; scope: InterpolationScope } {
  const vars = nodeVars(i.node);
  const base = { ...nomadEnv(i), ...hookEnv };
  const ownScope: InterpolationScope = { vars, env: base };
  // Meta values may name the node and NOMAD_* values, as in Nomad.
  for (const [k, v] of Object.entries(base))
    if (k.startsWith("NOMAD_META_") && v.includes("${")) base[k] = interpolate(v, ownScope);
  const own = Object.fromEntries(Object.entries(i.task.Env).map(([k, v]) => [k, interpolate(v, ownScope)]));
  const env = { ...own, ...base };
  return { env, scope: { vars, env } };
}
