/**
 * csi_plugin_supervisor (docs/design.md "The flow of one volume", step 1), for tasks with a csi_plugin
 * block. prestart: the plugin's host dir, shared and bound bidirectionally at
 * `stage_publish_base_dir`, and this task's socket dir bound at `mount_dir` (plugin_layout.ts),
 * with CSI_ENDPOINT set. poststart: Probe until healthy (a stale socket file may exist, so only a
 * successful Probe counts), restart the task if that takes longer than `health_timeout`, register
 * the plugin's roles, then probe lightly and report health changes as task events (an unhealthy
 * plugin is deregistered until it recovers). exited: deregister. stop (final): let go of the plugin
 * dir, which PluginDirs tears down only when no other plugin task (a successor after a job update)
 * and no volume staged or published through it still uses it (plugin_dirs.ts).
 *
 *
 * A driver without mount support (raw_exec) runs the plugin in the host's own mount namespace: the
 * plugin's view IS the host's view, so there is nothing to bind. The hook then creates the
 * directory (a shared self-bind all the same, so exec tasks using its volumes get a peer copy of it
 * and see a volume published again: see plugin_dir.ts), points CSI_ENDPOINT at the host socket, and
 * registers the plugin with mount_dir and stage_publish_base_dir both set to the host dir (the
 * job's mount_dir is ignored).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { anySignal, isAbortError, sleep } from "../../../internal/abort.js";
import type { Logger } from "../../../internal/log.js";
import type { Allocation } from "../../../structs/alloc.js";
import { BerthError } from "../../../structs/errors.js";
import { NS_PER_MS, type Task, type TaskCSIPluginConfig } from "../../../structs/job.js";
import type { ExitResult, TaskHandle } from "../../drivers/driver.js";
import type { PluginRegistrar, PluginRole } from "../../dynamicplugins/types.js";
import type {
  ExitedHook,
  PoststartHook,
  PrestartHook,
  PrestartResult,
  StopHook,
  TaskLifecycle,
} from "./hooks.js";
import { ensureSharedDir, hasMountsBelowUnshared } from "./plugin_dir.js";
import { PluginDirs } from "./plugin_dirs.js";
import { pluginLayout, socketPathProblem, type PluginLayout } from "./plugin_layout.js";
import { formatMs } from "./restart_tracker.js";

/** One CSI Probe of the plugin at `socketPath`: true when it answers ready. */
export type CsiProbe = (socketPath: string, signal: AbortSignal) => Promise<boolean>;

export interface PluginSupervisorOptions {
  probe: CsiProbe;
  /** Between probes while waiting for the plugin to become healthy. Default 500ms. */
  startupPollMs?: number;
  /** Between probes once healthy. Default 15s. */
  probeIntervalMs?: number;
  /** Per probe. Default 5s. */
  probeTimeoutMs?: number;
}

export const DEFAULT_PLUGIN_HEALTH_TIMEOUT_MS = 120_000;

export interface PluginSupervisorDeps {
  alloc: Allocation;
  task: Task;
  plugin: TaskCSIPluginConfig;
  dataDir: string;
  registrar: PluginRegistrar;
  lifecycle: TaskLifecycle;
  log: Logger;
  options: PluginSupervisorOptions;
  /** The task's driver can bind directories into it (DriverCapabilities.supportsMounts). */
  driverSupportsMounts: boolean;
  /** The node's owner of plugin dirs; without one, only this process's plugin tasks count. */
  pluginDirs?: PluginDirs;
}

/** Used when no owner is configured: one per process, so plugin tasks here still see each other. */
const processPluginDirs = new Map<string, PluginDirs>();

function defaultPluginDirs(dataDir: string, log: Logger): PluginDirs {
  let dirs = processPluginDirs.get(dataDir);
  if (!dirs) {
    dirs = new PluginDirs({ dataDir, log });
    processPluginDirs.set(dataDir, dirs);
  }
  return dirs;
}

export function rolesOf(type: TaskCSIPluginConfig["Type"]): PluginRole[] {
  if (type === "monolith") return ["csi-controller", "csi-node"];
  return [type === "controller" ? "csi-controller" : "csi-node"];
}

export class PluginSupervisorHook implements PrestartHook, PoststartHook, ExitedHook, StopHook {
  readonly name = "csi_plugin_supervisor";
  /** Host path of the plugin's directory (staging, per-alloc publish targets). */
  readonly hostDir: string;
  readonly socketPath: string;
  private readonly layout: PluginLayout;
  private registered = false;
  private loop: Promise<void> | null = null;
  private loopAbort: AbortController | null = null;

  private readonly dirs: PluginDirs;
  /** This task as a holder of the plugin dir. */
  private readonly holder: string;

  constructor(private readonly d: PluginSupervisorDeps) {
    this.layout = pluginLayout(
      d.dataDir,
      { allocId: d.alloc.ID, taskName: d.task.Name },
      d.plugin,
      d.driverSupportsMounts,
    );
    this.hostDir = this.layout.hostDir;
    this.socketPath = this.layout.socketPath;
    this.holder = `${d.alloc.ID}/${d.task.Name}`;
    this.dirs = d.pluginDirs ?? defaultPluginDirs(d.dataDir, d.log);
  }

  async prestart(signal: AbortSignal): Promise<PrestartResult> {
    let result: PrestartResult | undefined;
    await this.dirs.acquire(this.hostDir, this.holder, async () => {
      result = await this.prepare(signal);
    });
    return result!;
  }

  /** Under the plugin dir's lock: the dir created and shared, and what the task gets of it. */
  private async prepare(signal: AbortSignal): Promise<PrestartResult> {
    const tooLong = socketPathProblem(this.socketPath);
    if (tooLong) throw new BerthError("ERR_VALIDATION", tooLong);
    await fs.mkdir(this.layout.socketDir, { recursive: true, mode: 0o700 });
    const env = { CSI_ENDPOINT: this.layout.endpoint };
    if (!this.d.driverSupportsMounts) {
      if (await hasMountsBelowUnshared(this.hostDir)) {
        // A plugin dir from before berth shared it, with volumes still mounted: a self-bind would
        // hide them. It is shared once nothing is mounted below it any more.
        this.d.log.warn("plugin dir is not a shared mount yet; running tasks will not see remounts", {
          plugin: this.d.plugin.ID,
          dir: this.hostDir,
        });
      } else {
        await ensureSharedDir(this.hostDir, signal);
      }
      return { mounts: [], env };
    }
    await ensureSharedDir(this.hostDir, signal);
    return { mounts: this.layout.mounts, env };
  }

  async poststart(_handle: TaskHandle, signal: AbortSignal): Promise<void> {
    // A task re-attached after an agent restart skipped prestart: it holds the dir all the same.
    this.dirs.hold(this.hostDir, this.holder);
    const timeoutMs =
      this.d.plugin.HealthTimeout > 0
        ? this.d.plugin.HealthTimeout / NS_PER_MS
        : DEFAULT_PLUGIN_HEALTH_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    while (!(await this.probeOnce(signal))) {
      if (Date.now() >= deadline) {
        const reason = `CSI plugin did not become healthy before timeout of ${formatMs(timeoutMs)}`;
        this.d.log.warn("restarting plugin task", { plugin: this.d.plugin.ID, reason });
        await this.d.lifecycle.restart(reason);
        return;
      }
      await sleep(Math.min(this.d.options.startupPollMs ?? 500, Math.max(0, deadline - Date.now())), signal);
    }
    this.register();
    this.d.lifecycle.emitEvent("Plugin became healthy", `plugin: ${this.d.plugin.ID}`);
    const ac = new AbortController();
    this.loopAbort = ac;
    this.loop = this.watch(AbortSignal.any([signal, ac.signal]));
  }

  async exited(_result: ExitResult): Promise<void> {
    await this.stopLoop();
    // An exited plugin serves nothing, even one this hook instance never registered: a plugin
    // restored from the state DB and found dead must not look present while it waits to restart
    // (allocs waiting for it would get a dead socket instead of waiting).
    this.registered = true;
    this.deregister();
  }

  async stop(): Promise<void> {
    await this.stopLoop();
    // Final stop deregisters even if this hook instance never registered: a plugin restored from
    // the state DB and found dead must not stay in the registry (deregister is a no-op unless the
    // entry still belongs to this alloc).
    this.registered = true;
    this.deregister();
    // Torn down only when nothing else uses it; PluginDirs logs why it stays otherwise.
    await this.dirs.leave(this.hostDir, this.holder);
    if (this.layout.socketDir !== this.hostDir) await removeSocketDir(this.layout.socketDir);
  }

  /** Light health loop: events on changes; the plugin is registered only while healthy. */
  private async watch(signal: AbortSignal): Promise<void> {
    let healthy = true;
    try {
      for (;;) {
        await sleep(this.d.options.probeIntervalMs ?? 15_000, signal);
        const now = await this.probeOnce(signal);
        if (now === healthy) continue;
        healthy = now;
        if (now) {
          this.register();
          this.d.lifecycle.emitEvent("Plugin became healthy", `plugin: ${this.d.plugin.ID}`);
        } else {
          this.deregister();
          this.d.lifecycle.emitEvent("Plugin became unhealthy", `plugin: ${this.d.plugin.ID}`);
        }
      }
    } catch (err) {
      // The task stopping ends the loop (its signal's reason is a BerthError, not an AbortError):
      // a normal plugin stop, not a failure.
      if (isAbortError(err) || signal.aborted) {
        this.d.log.debug("plugin health loop stopped", { plugin: this.d.plugin.ID });
        return;
      }
      this.d.log.error("plugin health loop failed", { plugin: this.d.plugin.ID, err });
    }
  }

  /** A probe that throws or times out counts as unhealthy; an abort of `signal` propagates. */
  private async probeOnce(signal: AbortSignal): Promise<boolean> {
    signal.throwIfAborted();
    try {
      return await this.d.options.probe(
        this.socketPath,
        anySignal([signal], this.d.options.probeTimeoutMs ?? 5000),
      );
    } catch (err) {
      signal.throwIfAborted();
      this.d.log.debug("plugin probe failed", { plugin: this.d.plugin.ID, err });
      return false;
    }
  }

  private async stopLoop(): Promise<void> {
    this.loopAbort?.abort();
    await this.loop;
    this.loop = null;
    this.loopAbort = null;
  }

  private register(): void {
    const { mountDir, stagePublishBaseDir: base } = this.layout;
    for (const role of rolesOf(this.d.plugin.Type)) {
      this.d.registrar.register({
        role,
        pluginId: this.d.plugin.ID,
        allocId: this.d.alloc.ID,
        taskName: this.d.task.Name,
        socketPath: this.socketPath,
        hostDir: this.hostDir,
        mountDir,
        stagePublishBaseDir: base,
        registeredAt: Date.now(),
      });
    }
    this.registered = true;
  }

  private deregister(): void {
    if (!this.registered) return;
    for (const role of rolesOf(this.d.plugin.Type)) {
      this.d.registrar.deregister(role, this.d.plugin.ID, this.d.alloc.ID);
    }
    this.registered = false;
  }
}

/**
 * This task's socket dir once it stopped for good: the socket file (if the plugin left it), then
 * the dir when empty. Nothing is ever mounted there; no recursive delete.
 */
async function removeSocketDir(dir: string): Promise<void> {
  await fs.rm(path.join(dir, "csi.sock"), { force: true });
  for (const d of [dir, path.dirname(dir)]) {
    try {
      await fs.rmdir(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") return; // not empty: left alone
    }
  }
}
