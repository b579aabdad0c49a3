/**
 * Which hooks a task runs, in order: its task dir, its log collector (logmon_hook.ts), its volume mounts, a dispatched job's payload
 * file (dispatch_hook.ts), its templates (rendered
 * once the task dir exists, as Nomad's template hook follows its volumes hook), and for a task
 * with a csi_plugin block the plugin supervisor. The runner calls them phase by phase (hook_phases.ts).
 */
import type { Logger } from "../../../internal/log.js";
import { BerthError } from "../../../structs/errors.js";
import type { TaskGroup } from "../../../structs/job.js";
import type { TaskHook, TaskLifecycle } from "./hooks.js";
import { logPlan } from "../../logmon/log_plan.js";
import { DispatchPayloadHook } from "./dispatch_hook.js";
import { LogmonHook } from "./logmon_hook.js";
import { PluginSupervisorHook } from "./plugin_supervisor_hook.js";
import { TaskDirHook } from "./task_dir_hook.js";
import { buildTaskEnv, interpolate } from "./task_env.js";
import type { TaskRunnerConfig } from "./task_runner_config.js";
import { taskEnvInput } from "./task_start.js";
import { TemplateHook } from "./template_hook.js";
import { VolumeHook } from "./volume_hook.js";

/** The task's hooks; `volumeHook` is one of them, kept apart for a recovered task's mounts. */
export function taskHooks(
  cfg: TaskRunnerConfig,
  group: TaskGroup,
  lifecycle: TaskLifecycle,
  log: Logger,
): { hooks: TaskHook[]; volumeHook: VolumeHook } {
  const volumeHook = new VolumeHook(
    cfg.task,
    group,
    cfg.driver,
    cfg.hookResources,
    cfg.node.hostVolumes ?? {},
    // Destinations see the task's env as it is before hooks add theirs (Nomad's volume hook too).
    (text) => interpolate(text, buildTaskEnv(taskEnvInput(cfg), {}).scope),
  );
  const hooks: TaskHook[] = [new TaskDirHook(cfg.allocDir, cfg.task.Name, lifecycle)];
  const logs = logPlan(cfg.task, cfg.driver.name);
  if (logs.kind === "logmon") hooks.push(new LogmonHook(cfg.allocDir, cfg.task.Name, logs, log));
  hooks.push(volumeHook);
  // Before templates, as Nomad's dispatch hook runs before its template hook.
  const payload = cfg.alloc.Job.Payload;
  const file = cfg.task.DispatchPayload?.File;
  if (payload && file) hooks.push(new DispatchPayloadHook(cfg.allocDir, cfg.task.Name, file, payload));
  if ((cfg.task.Templates ?? []).length > 0) hooks.push(new TemplateHook(cfg, cfg.task.Templates ?? []));
  const plugin = cfg.task.CSIPluginConfig;
  if (plugin) {
    if (!cfg.csiPlugin)
      throw new BerthError("ERR_INTERNAL", `task ${cfg.task.Name}: csi_plugin needs a probe`);
    hooks.push(
      new PluginSupervisorHook({
        alloc: cfg.alloc,
        task: cfg.task,
        plugin,
        dataDir: cfg.dataDir,
        registrar: cfg.pluginRegistrar,
        lifecycle,
        log,
        options: cfg.csiPlugin,
        driverSupportsMounts: cfg.driver.capabilities().supportsMounts,
        pluginDirs: cfg.pluginDirs,
      }),
    );
  }
  return { hooks, volumeHook };
}
