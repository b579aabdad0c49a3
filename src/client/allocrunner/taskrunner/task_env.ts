/**
 * The task's environment and `${...}` interpolation. Paths are in the task's view for drivers
 * that chroot (exec: /local, /alloc, /secrets) and host paths otherwise (raw_exec). Unknown
 * `${...}` references are left as written, as Nomad does.
 */
import type { AllocDir } from "../../allocdir/alloc_dir.js";
import { allocIndex, type Allocation } from "../../../structs/alloc.js";
import type { Task } from "../../../structs/job.js";

export interface TaskEnvInput {
  alloc: Allocation;
  task: Task;
  allocDir: AllocDir;
  node: { id: string; name: string };
  /** The driver chroots into the task dir, so paths are given in the task's view. */
  taskView: boolean;
}

/** The NOMAD_* variables set in every task's environment. */
export function nomadEnv(i: TaskEnvInput): Record<string, string> {
  const name = i.task.Name;
  return {
    NOMAD_TASK_DIR: i.taskView ? "/local" : i.allocDir.taskLocalDir(name),
    NOMAD_ALLOC_DIR: i.taskView ? "/alloc" : i.allocDir.sharedDir,
    NOMAD_SECRETS_DIR: i.taskView ? "/secrets" : i.allocDir.taskSecretsDir(name),
    NOMAD_ALLOC_ID: i.alloc.ID,
    NOMAD_ALLOC_NAME: i.alloc.Name,
    NOMAD_ALLOC_INDEX: String(allocIndex(i.alloc)),
    NOMAD_JOB_ID: i.alloc.JobID,
    NOMAD_JOB_NAME: i.alloc.Job.Name,
    NOMAD_NAMESPACE: i.alloc.Namespace,
    NOMAD_TASK_NAME: name,
    NOMAD_GROUP_NAME: i.alloc.TaskGroup,
  };
}

/** Every name `${...}` may reference. */
export function interpolationVars(i: TaskEnvInput): Record<string, string> {
  return { ...nomadEnv(i), "node.unique.id": i.node.id, "node.unique.name": i.node.name };
}

export function interpolate(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\{([^}]+)\}/g, (whole, key: string) => vars[key.trim()] ?? whole);
}

/** The task's env: its own (interpolated), then NOMAD_*, then what hooks add (e.g. CSI_ENDPOINT). */
export function buildTaskEnv(i: TaskEnvInput, hookEnv: Record<string, string>): Record<string, string> {
  const vars = interpolationVars(i);
  const own = Object.fromEntries(Object.entries(i.task.Env).map(([k, v]) => [k, interpolate(v, vars)]));
  return { ...own, ...nomadEnv(i), ...hookEnv };
}
