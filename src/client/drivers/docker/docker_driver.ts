/**
 * docker: runs a task as a container of a Docker Engine, through the Engine's HTTP API on its
 * socket (dockerode; the README's design notes say why), as Nomad's docker driver does.
 *
 * Start: the task's config is checked (structs/docker_config.ts), its image made present
 * (image.ts), any container left for the same alloc and task removed (found by its labels: a
 * container berth created but never started, or one whose handle is gone), the container created
 * (container_spec.ts), its handle — the container ID — handed to `beforeRun` (persisted by the
 * task runner), and only then started: whatever instant the agent dies at, the next one finds
 * exactly that container, so a task never runs twice. A privileged task on a host where the daemon
 * cannot grant `Privileged` is created again with the fallback (privileged.ts) and its new handle
 * handed to `beforeRun` again, before anything ran.
 *
 * Watch: one per container, for wait() and stop(): the Engine's wait, then the exit code and OOM
 * flag from inspect, the log stream drained into the task's files (log_stream.ts), and the
 * container removed (its exit is the runner's to record from here).
 *
 * Recover: inspect the handle's container: running → re-attached (logs followed from where the
 * files end); exited → its exit reported; created but never started → removed, `notStarted`;
 * gone → an exit with an error.
 */
import type { Readable } from "node:stream";
import Docker from "dockerode";
import { sleep } from "../../../internal/abort.js";
import type { Logger } from "../../../internal/log.js";
import { dockerTaskConfig } from "../../../structs/docker_config.js";
import { asBerthError, BerthError } from "../../../structs/errors.js";
import type { DriverInfo } from "../../../structs/node.js";
import type {
  BeforeRun,
  DriverCapabilities,
  ExitResult,
  TaskDriver,
  TaskExecProcess,
  TaskHandle,
  TaskStartConfig,
  TaskUsageSample,
} from "../driver.js";
import { containerSpec, LABEL_ALLOC_ID, LABEL_TASK_NAME, type PrivilegedFallback } from "./container_spec.js";
import { dockerClient } from "./endpoint.js";
import { execInContainer } from "./exec.js";
import { containerUsage } from "./stats.js";
import { ensureImage } from "./image.js";
import { lastLogWriteNs, type LogTargets, pumpLogs, sinceParam } from "./log_stream.js";
import { logLimits } from "../../../structs/log_config.js";
import { isPrivilegeRefusal, privilegedFallback } from "./privileged.js";

/** Nomad's default endpoint. */
export const DEFAULT_DOCKER_ENDPOINT = "unix:///var/run/docker.sock";

/** The agent's `plugin "docker" { config { … } }` (agent/config_plugins.ts). */
export interface DockerDriverOptions {
  endpoint?: string;
  allowPrivileged?: boolean;
  volumesEnabled?: boolean;
  log?: Logger;
}

/** How long a fingerprint waits for the daemon's answer. */
const FINGERPRINT_TIMEOUT_MS = 5_000;
/** How long an exited container's log stream is given to drain before it is removed. */
const LOG_DRAIN_MS = 10_000;
/** Between retries of the Engine's wait while the daemon cannot be reached. */
const WAIT_RETRY_MS = 1_000;

interface Watch {
  exit: Promise<ExitResult>;
}

export class DockerDriver implements TaskDriver {
  readonly name = "docker";
  private readonly docker: Docker;
  private readonly watches = new Map<string, Watch>();
  private readonly lifetime = new AbortController();
  private defaultNetworkMode: string | null = null;
  /** Set once the daemon refused `Privileged` here: later privileged tasks go to the fallback. */
  private fallback: PrivilegedFallback | null = null;

  constructor(private readonly opts: DockerDriverOptions = {}) {
    this.docker = dockerClient(opts.endpoint ?? DEFAULT_DOCKER_ENDPOINT);
  }

  capabilities(): DriverCapabilities {
    return { supportsMounts: true, readsConfig: true };
  }

  async fingerprint(): Promise<DriverInfo> {
    const signal = AbortSignal.timeout(FINGERPRINT_TIMEOUT_MS);
    try {
      // dockerode's types miss version()'s options; the call takes an abortSignal.
      const version = this.docker.version.bind(this.docker) as (o: {
        abortSignal: AbortSignal;
      }) => Promise<Docker.DockerVersion>;
      const v = await version({ abortSignal: signal });
      this.defaultNetworkMode = await this.networkDefault(signal);
      return {
        Detected: true,
        Healthy: true,
        HealthDescription: "Healthy",
        SupportsMounts: true,
        Attributes: {
          "driver.docker.version": v.Version,
          "driver.docker.os_type": v.Os,
          "driver.docker.privileged.enabled": String(this.opts.allowPrivileged ?? false),
          "driver.docker.volumes.enabled": String(this.opts.volumesEnabled ?? false),
        },
      };
    } catch (err) {
      return {
        Detected: false,
        Healthy: false,
        HealthDescription: `Failed to connect to docker daemon: ${asBerthError(err).message}`,
        SupportsMounts: true,
      };
    }
  }

  async start(cfg: TaskStartConfig, beforeRun?: BeforeRun): Promise<TaskHandle> {
    const emit = cfg.emitEvent ?? (() => undefined);
    const dc = dockerTaskConfig("config", cfg.config ?? {});
    const signal = this.lifetime.signal;
    await ensureImage(
      this.docker,
      { image: dc.image, forcePull: dc.forcePull, pullTimeoutMs: dc.imagePullTimeoutMs },
      signal,
      emit,
    );
    this.defaultNetworkMode ??= await this.networkDefault(signal);
    await this.removeLeftovers(cfg.allocId, cfg.taskName);
    let fallback = dc.privileged ? this.fallback : null;
    for (;;) {
      const spec = containerSpec(cfg, dc, {
        allowPrivileged: this.opts.allowPrivileged ?? false,
        volumesEnabled: this.opts.volumesEnabled ?? false,
        defaultNetworkMode: this.defaultNetworkMode,
        privilegedFallback: fallback,
      });
      const container = await this.docker.createContainer({ ...spec, abortSignal: signal });
      const handle: TaskHandle = {
        driver: this.name,
        pid: 0,
        startedAt: Date.now(),
        state: {
          containerId: container.id,
          killSignal: cfg.killSignal || "SIGTERM",
          stdoutPath: cfg.stdoutPath,
          stderrPath: cfg.stderrPath,
          logMaxFiles: (cfg.logRotation ?? logLimits(null)).maxFiles,
          logMaxFileBytes: (cfg.logRotation ?? logLimits(null)).maxFileBytes,
        },
      };
      try {
        await beforeRun?.(handle);
        await container.start({ abortSignal: signal });
      } catch (err) {
        await this.remove(container.id);
        const message = err instanceof Error ? err.message : String(err);
        if (dc.privileged && fallback === null && isPrivilegeRefusal(message)) {
          fallback = this.fallback = await privilegedFallback();
          continue;
        }
        throw err instanceof BerthError
          ? err
          : new BerthError("ERR_DRIVER", `starting container: ${message}`);
      }
      if (fallback !== null) {
        emit(
          "Driver",
          "Docker cannot grant privileged here; running with the host's capabilities and devices",
          {
            capabilities: fallback.capAdd.join(","),
          },
        );
      }
      const info = await container.inspect({ abortSignal: signal });
      handle.pid = info.State.Pid;
      this.watch(handle, 0n);
      this.opts.log?.info("container started", { task: cfg.taskName, container: container.id.slice(0, 12) });
      return handle;
    }
  }

  wait(handle: TaskHandle): Promise<ExitResult> {
    return (this.watches.get(containerId(handle)) ?? this.watch(handle, null)).exit;
  }

  async stop(handle: TaskHandle, killTimeoutMs: number): Promise<void> {
    const id = containerId(handle);
    const exit = this.wait(handle);
    await this.kill(id, String(handle.state.killSignal || "SIGTERM"));
    const ac = new AbortController();
    const stopped = await Promise.race([
      exit.then(() => true),
      sleep(killTimeoutMs, AbortSignal.any([ac.signal, this.lifetime.signal])).then(
        () => false,
        () => false,
      ),
    ]);
    ac.abort();
    if (!stopped) await this.kill(id, "SIGKILL");
    await exit;
  }

  async recover(handle: TaskHandle): Promise<boolean> {
    const id = containerId(handle);
    let info: Docker.ContainerInspectInfo;
    try {
      info = await this.docker.getContainer(id).inspect({ abortSignal: this.lifetime.signal });
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      this.settle(id, { exitCode: -1, signal: null, error: `container ${id.slice(0, 12)} is gone` });
      return false;
    }
    if (info.State.Status === "created") {
      // Created and persisted, never started: the agent died in between. It never ran.
      await this.remove(id);
      this.settle(id, { exitCode: -1, signal: null, notStarted: true });
      return false;
    }
    const files = logFiles(handle);
    this.watch(handle, await lastLogWriteNs(files.stdoutPath, files.stderrPath));
    if (!info.State.Running) return false;
    handle.pid = info.State.Pid;
    return true;
  }

  detach(): void {
    this.lifetime.abort();
  }

  signal(handle: TaskHandle, signal: string): Promise<void> {
    return this.kill(containerId(handle), signal);
  }

  stats(handle: TaskHandle): Promise<TaskUsageSample> {
    return containerUsage(this.docker, containerId(handle), this.lifetime.signal);
  }

  exec(
    handle: TaskHandle,
    command: string[],
    opts: { tty: boolean; height: number; width: number },
  ): Promise<TaskExecProcess> {
    return execInContainer(this.docker, containerId(handle), command, opts);
  }

  /** The exit of the handle's container, its logs followed from after `logsAfterNs` (null: none). */
  private watch(handle: TaskHandle, logsAfterNs: bigint | null): Watch {
    const id = containerId(handle);
    const signal = this.lifetime.signal;
    const logs =
      logsAfterNs === null ? Promise.resolve() : this.followLogs(id, logFiles(handle), logsAfterNs);
    const exit = (async (): Promise<ExitResult> => {
      const result = await this.exitOf(id, signal);
      const drained = new AbortController();
      const timeout = sleep(LOG_DRAIN_MS, AbortSignal.any([signal, drained.signal])).catch(() => undefined);
      await Promise.race([logs, timeout]);
      drained.abort();
      if (signal.aborted) return new Promise<never>(() => undefined);
      await this.remove(id);
      return result;
    })();
    const w = { exit };
    this.watches.set(id, w);
    return w;
  }

  private settle(id: string, result: ExitResult): void {
    this.watches.set(id, { exit: Promise.resolve(result) });
  }

  private async followLogs(id: string, files: LogTargets, afterNs: bigint): Promise<void> {
    try {
      const stream = await this.docker.getContainer(id).logs({
        follow: true,
        stdout: true,
        stderr: true,
        timestamps: true,
        // docker-modem would send an undefined as an empty `since=`.
        ...(afterNs > 0n ? { since: sinceParam(afterNs) as unknown as number } : {}),
        abortSignal: this.lifetime.signal,
      });
      await pumpLogs(stream as unknown as Readable, files, afterNs);
    } catch (err) {
      if (!this.lifetime.signal.aborted) this.opts.log?.warn("following container logs failed", { err });
    }
  }

  /** The container's exit; never settles once the driver is detached (the next agent records it). */
  private async exitOf(id: string, signal: AbortSignal): Promise<ExitResult> {
    const container = this.docker.getContainer(id);
    for (;;) {
      if (signal.aborted) return new Promise<never>(() => undefined);
      try {
        await container.wait({ condition: "not-running", abortSignal: signal });
        const info = await container.inspect({ abortSignal: signal });
        if (!info.State.Running) {
          const oomKilled = info.State.OOMKilled || (await this.lateOom(container, info, signal));
          return { exitCode: info.State.ExitCode, signal: null, oomKilled };
        }
      } catch (err) {
        if (signal.aborted) return new Promise<never>(() => undefined);
        if (statusOf(err) === 404)
          return { exitCode: -1, signal: null, error: `container ${id.slice(0, 12)} is gone` };
        this.opts.log?.warn("waiting for container failed; retrying", { err });
        await sleep(WAIT_RETRY_MS, signal).catch(() => undefined);
      }
    }
  }

  /**
   * The Engine records an OOM kill from containerd's OOM event, which can come after the exit
   * event: a SIGKILLed container with a memory limit is asked again for a moment.
   */
  private async lateOom(
    container: Docker.Container,
    info: Docker.ContainerInspectInfo,
    signal: AbortSignal,
  ): Promise<boolean> {
    if (info.State.ExitCode !== 137 || !(info.HostConfig.Memory ?? 0)) return false;
    for (let i = 0; i < 10; i++) {
      await sleep(100, signal);
      if ((await container.inspect({ abortSignal: signal })).State.OOMKilled) return true;
    }
    return false;
  }

  private async kill(id: string, signal: string): Promise<void> {
    try {
      await this.docker.getContainer(id).kill({ signal, abortSignal: this.lifetime.signal });
    } catch (err) {
      // Not running any more (409) or gone (404): nothing to kill.
      if (statusOf(err) !== 409 && statusOf(err) !== 404) throw err;
    }
  }

  private async remove(id: string): Promise<void> {
    try {
      await this.docker.getContainer(id).remove({ force: true, v: true });
    } catch (err) {
      if (statusOf(err) !== 404 && statusOf(err) !== 409) {
        this.opts.log?.warn("removing container failed", { container: id.slice(0, 12), err });
      }
    }
  }

  /** Containers left for this alloc and task (none has a live handle: the runner would have recovered it). */
  private async removeLeftovers(allocId: string, taskName: string): Promise<void> {
    const left = await this.docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_ALLOC_ID}=${allocId}`, `${LABEL_TASK_NAME}=${taskName}`] },
      abortSignal: this.lifetime.signal,
    });
    for (const c of left) {
      this.opts.log?.warn("removing a container left by an earlier start", { container: c.Id.slice(0, 12) });
      await this.remove(c.Id);
    }
  }

  /** "bridge" where the daemon has that network, else "none" (a daemon run with --bridge=none). */
  private async networkDefault(signal: AbortSignal): Promise<string> {
    const nets = await this.docker.listNetworks({ abortSignal: signal });
    return nets.some((n) => n.Name === "bridge") ? "bridge" : "none";
  }
}

function containerId(handle: TaskHandle): string {
  const id = handle.state.containerId;
  if (typeof id !== "string" || id === "")
    throw new BerthError("ERR_DRIVER", "docker handle without a container ID");
  return id;
}

function logFiles(handle: TaskHandle): LogTargets {
  const { stdoutPath, stderrPath, logMaxFiles, logMaxFileBytes } = handle.state;
  const n = (v: unknown) => (typeof v === "number" && v >= 1 ? v : undefined);
  return {
    stdoutPath: String(stdoutPath),
    stderrPath: String(stderrPath),
    maxFiles: n(logMaxFiles),
    maxFileBytes: n(logMaxFileBytes),
  };
}

function statusOf(err: unknown): number | undefined {
  return (err as { statusCode?: number }).statusCode;
}
