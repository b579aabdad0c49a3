/**
 * How one start of a task is configured: the env input (task_env.ts) and the driver's start config
 * built from the task's Config (`command`, `args`), the hooks' mounts and env, and the alloc dir;
 * and the start itself, with its handle persisted before the task runs (startPersisted).
 * Functions of the runner's config only, no runner state.
 */
import type { Task } from "../../../structs/job.js";
import { DEFAULT_TASK_USER_POLICY, disallowedTaskUser } from "../../../structs/task_user.js";
import type { TaskHandle, TaskMount, TaskStartConfig } from "../../drivers/driver.js";
import { taskResources } from "../../drivers/shared/cgroups/limits.js";
import { logPlan, taskLogPaths } from "../../logmon/log_plan.js";
import { logLimits } from "../../../structs/log_config.js";
import { NonRecoverableError } from "./hooks.js";
import { buildTaskEnv, interpolate, type TaskEnvInput } from "./task_env.js";
import type { TaskRunnerConfig } from "./task_runner_config.js";

/**
 * Drivers whose tasks see their dirs at /local, /alloc, /secrets (exec chroots into the task dir,
 * docker binds them into the container), so paths are given in the task's view.
 */
const CHROOTING_DRIVERS = new Set(["exec", "docker"]);

/** The inputs of the task's env (task_env.ts), paths in the task's view for chrooting drivers. */
export function taskEnvInput(cfg: TaskRunnerConfig): TaskEnvInput {
  return {
    alloc: cfg.alloc,
    task: cfg.task,
    allocDir: cfg.allocDir,
    node: cfg.node,
    taskView: CHROOTING_DRIVERS.has(cfg.driver.name),
  };
}

/** The driver's start config: command, args and env interpolated, the prestart hooks' mounts and env. */
export function buildStartConfig(
  cfg: TaskRunnerConfig,
  mounts: TaskMount[],
  hookEnv: Record<string, string>,
  emitEvent?: TaskStartConfig["emitEvent"],
): TaskStartConfig {
  const { task, allocDir } = cfg;
  checkTaskUser(cfg);
  const { env, scope } = buildTaskEnv(taskEnvInput(cfg), hookEnv);
  const { command, args } = parseConfig(task, cfg.driver.capabilities().readsConfig === true);
  const logs = allocDir.taskLogsDir(task.Name);
  return {
    allocId: cfg.alloc.ID,
    taskName: task.Name,
    taskDir: allocDir.taskDir(task.Name),
    allocSharedDir: allocDir.sharedDir,
    command: interpolate(command, scope),
    args: args.map((a) => interpolate(a, scope)),
    env,
    mounts,
    // Nomad runs CSI plugin tasks privileged: they need the host's devices.
    privileged: task.CSIPluginConfig !== null,
    // The logmon FIFOs, the driver's own files, or /dev/null (logmon/log_plan.ts).
    ...taskLogPaths(logPlan(task, cfg.driver.name), logs, task.Name),
    logRotation: logLimits(task.LogConfig),
    // Enforced by the process drivers with a cgroup (CSI plugin tasks too, as Nomad does).
    resources: taskResources(task.Resources, cfg.alloc.AllocatedResources?.Tasks[task.Name]),
    killSignal: task.KillSignal ?? "",
    user: task.User ?? "",
    config: interpolateDeep(task.Config, (text) => interpolate(text, scope)) as Record<string, unknown>,
    emitEvent,
  };
}

/** `value` with `expand` applied to every string in it (the keys of objects are kept as written). */
function interpolateDeep(value: unknown, expand: (text: string) => string): unknown {
  if (typeof value === "string") return expand(value);
  if (Array.isArray(value)) return value.map((v) => interpolateDeep(v, expand));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateDeep(v, expand)]));
  }
  return value;
}

/**
 * The user the task's command runs as: its own `user`, else its driver's default (exec: nobody,
 * a CSI plugin task the agent's user); "" for the agent's user. Files made for the task (templates)
 * belong to this user.
 */
export function effectiveTaskUser(cfg: TaskRunnerConfig): string {
  return cfg.task.User || cfg.driver.defaultUser?.(cfg.task.CSIPluginConfig !== null) || "";
}

/**
 * The node's task user policy (structs/task_user.ts), checked before every start as Nomad's
 * validate hook does: a denied user fails the task for good (no restart can change the answer).
 */
function checkTaskUser(cfg: TaskRunnerConfig): void {
  const why = disallowedTaskUser(
    cfg.taskUsers ?? DEFAULT_TASK_USER_POLICY,
    cfg.driver.name,
    cfg.task.User ?? "",
  );
  if (why !== null) {
    throw new NonRecoverableError("ERR_VALIDATION", `task ${JSON.stringify(cfg.task.Name)}: ${why}`);
  }
}

/**
 * `command` (a string, required unless the driver reads its own config: an image has a command)
 * and `args` (optional string array) from the task's Config.
 */
function parseConfig(task: Task, commandOptional: boolean): { command: string; args: string[] } {
  const { command, args } = task.Config;
  const absent = command === undefined || command === null;
  if (!(commandOptional && absent) && (typeof command !== "string" || (command === "" && !commandOptional))) {
    throw new NonRecoverableError(
      "ERR_VALIDATION",
      `task ${JSON.stringify(task.Name)}: config.command is required`,
    );
  }
  if (args !== undefined && (!Array.isArray(args) || !args.every((a) => typeof a === "string"))) {
    throw new NonRecoverableError(
      "ERR_VALIDATION",
      `task ${JSON.stringify(task.Name)}: config.args must be a list of strings`,
    );
  }
  return { command: typeof command === "string" ? command : "", args: args ?? [] };
}

/**
 * Starts the task through its driver with the handle persisted BEFORE the task's command runs
 * (TaskDriver.start's beforeRun): whatever instant the agent dies at, a copy of the task that ran
 * has a persisted handle, so the next agent re-attaches to it (or stops it) instead of starting a
 * second one. A driver that ignores beforeRun gets its handle persisted once start() returns.
 */
export async function startPersisted(
  cfg: TaskRunnerConfig,
  startConfig: TaskStartConfig,
): Promise<TaskHandle> {
  let persisted = false;
  const persist = (handle: TaskHandle): void => {
    cfg.handles?.putTaskHandle(cfg.alloc.ID, cfg.task.Name, handle);
    persisted = true;
  };
  const handle = await cfg.driver.start(startConfig, persist);
  if (!persisted) persist(handle);
  return handle;
}
