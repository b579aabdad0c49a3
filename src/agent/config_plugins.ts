/**
 * Task driver settings from the agent config, as Nomad reads them:
 *
 *   plugin "raw_exec" {
 *     config {
 *       enabled = true     # raw_exec runs tasks as the agent's user (root): off unless enabled
 *     }
 *   }
 *   plugin "exec" {
 *     config {}            # accepted; berth's exec driver has no settings of Nomad's to honour yet
 *   }
 *   plugin "docker" {
 *     config {
 *       endpoint         = "unix:///var/run/docker.sock"   # the default; or tcp://host:port
 *       allow_privileged = true      # tasks may say privileged = true (off by default, as Nomad)
 *       volumes {
 *         enabled = true             # absolute host paths in `volumes`/`mount` (off by default)
 *       }
 *     }
 *   }
 *   client {
 *     options {
 *       "driver.raw_exec.enable" = "1"            # Nomad's legacy switch for the same thing
 *       "user.denylist"          = "root,admin"   # users the tasks of checked drivers may not run as
 *       "user.checked_drivers"   = "exec"         # (structs/task_user.ts; Nomad's defaults otherwise)
 *     }
 *   }
 *
 * Nomad ships raw_exec disabled and enables it in -dev (DevConfig sets the legacy option). A
 * `plugin "raw_exec"` block with a `config` replaces what the options say, as Nomad's plugin loader
 * uses a user's plugin config instead of the one derived from the client options. berth's drivers
 * are built in: a plugin block for any other name, `args` (for external plugin binaries) and driver
 * settings berth does not use are accepted and reported as unused (nomad_config_keys.ts), except
 * the ones that narrow what tasks may do (allow_caps, denied_host_uids, …), which are refused.
 */
import type { Body } from "../api/specs/body.js";
import {
  taskUserPolicyFromOptions,
  USER_BLACKLIST_OPTION,
  USER_CHECKED_DRIVERS_OPTION,
  USER_DENYLIST_OPTION,
  type TaskUserPolicy,
} from "../structs/task_user.js";

/** The legacy client option that enables raw_exec (drivers/rawexec PluginLoader). */
export const RAW_EXEC_ENABLE_OPTION = "driver.raw_exec.enable";

/** The client `options` berth honours: a switch, and the task user policy's lists (any string). */
const BOOLEAN_OPTIONS = [RAW_EXEC_ENABLE_OPTION];
const LIST_OPTIONS = [USER_DENYLIST_OPTION, USER_BLACKLIST_OPTION, USER_CHECKED_DRIVERS_OPTION];
const HONOURED_OPTIONS = [...BOOLEAN_OPTIONS, ...LIST_OPTIONS];

/** What the `plugin` blocks set, by driver; a driver is present only when its block has `config`. */
export interface PluginSettings {
  raw_exec?: { enabled: boolean };
  exec?: Record<string, never>;
  docker?: DockerSettings;
}

/** The docker driver's settings (client/drivers/docker: DockerDriverOptions). */
export interface DockerSettings {
  endpoint: string;
  allowPrivileged: boolean;
  volumesEnabled: boolean;
}

/** Nomad's docker driver defaults. */
export const DEFAULT_DOCKER_SETTINGS: DockerSettings = {
  endpoint: "unix:///var/run/docker.sock",
  allowPrivileged: false,
  volumesEnabled: false,
};

/** What the agent's node runs with (ClientOptions.drivers). */
export interface DriverSettings {
  rawExec: { enabled: boolean };
  /** The docker driver's settings (Nomad's defaults unless a `plugin "docker"` block says). */
  docker: DockerSettings;
  /** Which users tasks may run as (`user.denylist`, `user.checked_drivers`; Nomad's defaults). */
  taskUsers: TaskUserPolicy;
}

/** Go's strconv.ParseBool, which Nomad uses to read driver options; undefined when it is none. */
export function goParseBool(s: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(s)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(s)) return false;
  return undefined;
}

/**
 * Checks `client { options { … } }`: the keys berth honours, each with a value of its kind. Nomad
 * takes any key there (drivers and fingerprinters read their own), so another key is kept out of
 * the result with a warning, as Nomad's unused options are harmless.
 */
export function parseClientOptions(
  client: Body,
  options: Record<string, string>,
  warnings: string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(options)) {
    if (!HONOURED_OPTIONS.includes(key)) {
      warnings.push(
        `${client.file}: client.options ${JSON.stringify(key)} is accepted but not used (berth reads ${HONOURED_OPTIONS.map((k) => JSON.stringify(k)).join(", ")})`,
      );
      continue;
    }
    if (BOOLEAN_OPTIONS.includes(key) && goParseBool(value) === undefined) {
      throw client.error(
        `options: ${JSON.stringify(key)} must be "1", "true", "0" or "false", got ${JSON.stringify(value)}`,
      );
    }
    out[key] = value;
  }
  return out;
}

/** The top-level `plugin "NAME" { config { … } }` blocks; undefined when there are none. */
export function parsePlugins(top: Body): PluginSettings | undefined {
  const blocks = top.labelled("plugin");
  if (blocks.length === 0) return undefined;
  const out: PluginSettings = {};
  for (const [name, b] of blocks) {
    const config = b.block("config");
    b.finish();
    if (!config) continue;
    if (name === "raw_exec") {
      refuseUnhonoured(config, ["denied_host_uids", "denied_host_gids", "denied_envvars"]);
      out.raw_exec = { enabled: config.bool("enabled") ?? false };
    } else if (name === "docker") {
      out.docker = dockerSettings(config);
    } else {
      refuseUnhonoured(config, ["allow_caps", "denied_host_uids", "denied_host_gids"]);
      out.exec = {};
    }
    config.finish();
  }
  return out;
}

/** `plugin "docker" { config { … } }`: the settings berth honours; Nomad's others refused by name. */
function dockerSettings(config: Body): DockerSettings {
  refuseUnhonoured(config, ["allow_caps"]);
  const endpoint = config.string("endpoint") ?? DEFAULT_DOCKER_SETTINGS.endpoint;
  if (!/^(unix:\/\/\/|tcp:\/\/).+/.test(endpoint)) {
    throw config.error(
      `endpoint must be unix:///path/to/docker.sock or tcp://host:port, got ${JSON.stringify(endpoint)}`,
    );
  }
  const volumes = config.block("volumes");
  const volumesEnabled = volumes?.bool("enabled") ?? DEFAULT_DOCKER_SETTINGS.volumesEnabled;
  volumes?.finish();
  return {
    endpoint,
    allowPrivileged: config.bool("allow_privileged") ?? DEFAULT_DOCKER_SETTINGS.allowPrivileged,
    volumesEnabled,
  };
}

/**
 * Nomad settings that narrow what a driver's tasks may do, which berth's driver does not implement:
 * refused, since ignoring one would let a task do what the operator forbade.
 */
function refuseUnhonoured(config: Body, keys: string[]): void {
  const key = keys.find((k) => config.has(k));
  if (key !== undefined) throw config.error(`${key} is not supported by berth's driver`);
}

/**
 * The drivers' settings: a `plugin "raw_exec"` config wins; else the legacy client option; else
 * Nomad's default, enabled in -dev only.
 */
export function resolveDrivers(
  dev: boolean,
  options: Record<string, string> | undefined,
  plugins: PluginSettings | undefined,
): DriverSettings {
  const taskUsers = taskUserPolicyFromOptions(options);
  const docker = plugins?.docker ?? DEFAULT_DOCKER_SETTINGS;
  if (plugins?.raw_exec) return { rawExec: { enabled: plugins.raw_exec.enabled }, docker, taskUsers };
  const option = options?.[RAW_EXEC_ENABLE_OPTION];
  const enabled = (option === undefined ? undefined : goParseBool(option)) ?? dev;
  return { rawExec: { enabled }, docker, taskUsers };
}
