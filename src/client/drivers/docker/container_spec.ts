/**
 * The container a docker task runs in, as the Engine's create call takes it: built from the task's
 * start config and its checked docker config, with no I/O (the driver resolves everything that
 * needs the host first: the privileged fallback, the daemon's default network).
 *
 * What the task gets, as Nomad's docker driver gives it:
 * - its dirs bound in: the alloc's shared dir at /alloc, the task's local/ and secrets/ at /local
 *   and /secrets; the hooks' mounts (CSI and host volumes with their read-only flag, a CSI plugin's
 *   dirs) with their propagation (bidirectional → rshared: the host side is already a shared
 *   mount, plugin_dir.ts);
 * - `mount` binds and `volumes`: relative host paths are the task dir's (and may not leave it);
 *   absolute ones only where the agent's `volumes { enabled = true }`;
 * - `privileged` only where the agent's `allow_privileged`; where the daemon cannot grant it (the
 *   host's bounding set lacks capabilities) the fallback the driver computed (privileged.ts);
 * - labels naming the alloc and task (how a restarted agent finds the container, never making a
 *   second), resources as cgroup limits, the env, user, work dir, ulimits and network mode.
 */
import path from "node:path";
import type Docker from "dockerode";
import { BerthError } from "../../../structs/errors.js";
import { splitVolume, type DockerTaskConfig } from "../../../structs/docker_config.js";
import type { TaskMount, TaskStartConfig } from "../driver.js";
import { cgroupLimits } from "../shared/cgroups/limits.js";

/** Labels every container of berth carries; the alloc ID and task name find it again. */
export const LABEL_ALLOC_ID = "com.hashicorp.nomad.alloc_id";
export const LABEL_TASK_NAME = "com.hashicorp.nomad.task_name";
/** Marks containers berth made (a Nomad agent's containers share the names above). */
export const LABEL_MANAGED = "io.berth.managed";

/** What the privileged fallback grants instead of `Privileged` (privileged.ts). */
export interface PrivilegedFallback {
  capAdd: string[];
  devices: string[];
}

export interface SpecSettings {
  allowPrivileged: boolean;
  volumesEnabled: boolean;
  /** network_mode when the task names none: "bridge" where the daemon has one, else "none". */
  defaultNetworkMode: string;
  /** Set: a privileged task gets this instead of `Privileged` (the daemon refuses that here). */
  privilegedFallback: PrivilegedFallback | null;
}

const PROPAGATION: Record<TaskMount["propagation"], "rprivate" | "rslave" | "rshared"> = {
  private: "rprivate",
  "host-to-task": "rslave",
  bidirectional: "rshared",
};

/** Nomad's container name: `<task>-<alloc ID>` (characters Docker refuses become `_`). */
export function containerName(taskName: string, allocId: string): string {
  return `${taskName}-${allocId}`.replace(/[^a-zA-Z0-9_.-]/g, "_");
}

export function containerSpec(
  cfg: TaskStartConfig,
  dc: DockerTaskConfig,
  s: SpecSettings,
): Docker.ContainerCreateOptions {
  if (dc.privileged && !s.allowPrivileged) {
    // Nomad's text for it.
    throw new BerthError("ERR_VALIDATION", "Docker privileged mode is disabled on this Nomad agent");
  }
  const taskDirs: Docker.MountConfig = [
    bind(cfg.allocSharedDir, "/alloc", false, "rprivate"),
    bind(path.join(cfg.taskDir, "local"), "/local", false, "rprivate"),
    bind(path.join(cfg.taskDir, "secrets"), "/secrets", false, "rprivate"),
  ];
  const hookMounts = cfg.mounts.map((m) =>
    bind(m.hostPath, m.taskPath, m.readOnly, PROPAGATION[m.propagation]),
  );
  const ownMounts = dc.mounts.map((m) =>
    bind(hostPath(cfg.taskDir, m.source, s.volumesEnabled), m.target, m.readonly, m.propagation),
  );
  const binds = dc.volumes.map((v) => {
    const { host, container, readOnly } = splitVolume(v);
    return `${hostPath(cfg.taskDir, host, s.volumesEnabled)}:${container}:${readOnly ? "ro" : "rw"}`;
  });
  const cmd = dc.command !== "" ? [dc.command, ...dc.args] : dc.args;
  return {
    name: containerName(cfg.taskName, cfg.allocId),
    Image: dc.image,
    Cmd: cmd.length > 0 ? cmd : undefined,
    Entrypoint: dc.entrypoint.length > 0 ? dc.entrypoint : undefined,
    ...(dc.workDir !== "" ? { WorkingDir: dc.workDir } : {}),
    User: cfg.user || undefined,
    Env: Object.entries(cfg.env).map(([k, v]) => `${k}=${v}`),
    Labels: {
      ...dc.labels,
      [LABEL_ALLOC_ID]: cfg.allocId,
      [LABEL_TASK_NAME]: cfg.taskName,
      [LABEL_MANAGED]: "true",
    },
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    Tty: false,
    OpenStdin: false,
    HostConfig: {
      Mounts: [...taskDirs, ...hookMounts, ...ownMounts],
      Binds: binds.length > 0 ? binds : undefined,
      NetworkMode: dc.networkMode || s.defaultNetworkMode,
      RestartPolicy: { Name: "no" },
      ...privileges(dc, s.privilegedFallback),
      ...resources(cfg),
      ...(Object.keys(dc.ulimits).length > 0
        ? { Ulimits: Object.entries(dc.ulimits).map(([Name, l]) => ({ Name, Soft: l.soft, Hard: l.hard })) }
        : {}),
      // The driver streams the logs into the task's files; the daemon's copy stays small.
      LogConfig: { Type: "json-file", Config: { "max-size": "10m", "max-file": "2" } },
    },
  };
}

function bind(source: string, target: string, readOnly: boolean, propagation: string): Docker.MountSettings {
  return {
    Type: "bind",
    Source: source,
    Target: target,
    ReadOnly: readOnly,
    BindOptions: { Propagation: propagation as "rprivate" },
  };
}

/** A host path of `mount`/`volumes`: relative ones are the task dir's and may not leave it. */
function hostPath(taskDir: string, p: string, volumesEnabled: boolean): string {
  if (path.isAbsolute(p)) {
    if (!volumesEnabled) {
      throw new BerthError(
        "ERR_VALIDATION",
        `host path ${JSON.stringify(p)}: volumes are not enabled on this node (plugin "docker" { config { volumes { enabled = true } } })`,
      );
    }
    return path.normalize(p);
  }
  const resolved = path.resolve(taskDir, p);
  if (resolved !== taskDir && !resolved.startsWith(taskDir + path.sep)) {
    throw new BerthError("ERR_VALIDATION", `host path ${JSON.stringify(p)} escapes the task directory`);
  }
  return resolved;
}

function privileges(dc: DockerTaskConfig, fallback: PrivilegedFallback | null): Docker.HostConfig {
  if (!dc.privileged) {
    return {
      CapAdd: dc.capAdd.length > 0 ? dc.capAdd : undefined,
      CapDrop: dc.capDrop.length > 0 ? dc.capDrop : undefined,
      Devices: dc.devices.length > 0 ? devices(dc) : undefined,
    };
  }
  if (fallback === null)
    return { Privileged: true, Devices: dc.devices.length > 0 ? devices(dc) : undefined };
  // What `Privileged` gives, short of the capabilities the host's bounding set lacks: the rest of
  // the capabilities, every host device (the cgroup allowing them all), no seccomp, AppArmor or
  // SELinux confinement, and /proc and /sys unmasked (docker's systempaths=unconfined).
  const own = devices(dc);
  const listed = new Set(own.map((d) => d.PathInContainer));
  return {
    CapAdd: fallback.capAdd,
    Devices: [
      ...own,
      ...fallback.devices
        .filter((d) => !listed.has(d))
        .map((d) => ({ PathOnHost: d, PathInContainer: d, CgroupPermissions: "rwm" })),
    ],
    DeviceCgroupRules: ["a *:* rwm"],
    SecurityOpt: ["seccomp=unconfined", "apparmor=unconfined", "label=disable"],
    MaskedPaths: [],
    ReadonlyPaths: [],
  };
}

function devices(dc: DockerTaskConfig): Docker.DeviceMapping[] {
  return dc.devices.map((d) => ({
    PathOnHost: d.hostPath,
    PathInContainer: d.containerPath,
    CgroupPermissions: d.cgroupPermissions,
  }));
}

/** The task's resources as the container's cgroup limits (shared/cgroups/limits.ts's arithmetic). */
function resources(cfg: TaskStartConfig): Docker.HostConfig {
  if (!cfg.resources) return {};
  const l = cgroupLimits(cfg.resources);
  return {
    Memory: l.memoryHardBytes ?? 0,
    MemoryReservation: l.memorySoftBytes > 0 ? l.memorySoftBytes : undefined,
    CpuShares: l.cpuShares,
    CpusetCpus: l.reservedCores.length > 0 ? l.reservedCores.join(",") : undefined,
  };
}
