/**
 * The `docker` task driver's `config` block, as Nomad's docker driver reads it (drivers/docker
 * config.go: the same key names and shapes), checked at job validation and read again by the
 * driver. A key Nomad does not know is refused as Nomad's HCL spec refuses it; a key Nomad knows
 * that berth's driver does not implement (ports, auth, dns_servers, …) is refused by name, so a
 * jobspec never runs with a setting silently dropped. Pure.
 *
 * HCL writes a block inside `config` (`mount { … }`, `labels { … }`, `ulimit { … }`) as a list of
 * objects and Nomad's JSON as a list or an object; both are accepted.
 */
import { validationError } from "./errors.js";
import { isObject, type JsonObject } from "./json_check.js";

/** Nomad's default image_pull_timeout ("5m"). */
export const DEFAULT_IMAGE_PULL_TIMEOUT_MS = 5 * 60_000;

export const DOCKER_MOUNT_PROPAGATIONS = [
  "rprivate",
  "private",
  "rshared",
  "shared",
  "rslave",
  "slave",
] as const;
export type DockerPropagation = (typeof DOCKER_MOUNT_PROPAGATIONS)[number];

export interface DockerDevice {
  hostPath: string;
  /** Absent: the host path. */
  containerPath: string;
  /** Nomad's default "rwm". */
  cgroupPermissions: string;
}

/** A `mount { type = "bind" … }`; only binds (Nomad's volume and tmpfs types are refused). */
export interface DockerBindMount {
  /** As written: relative paths are the task dir's (the driver resolves them). */
  source: string;
  target: string;
  readonly: boolean;
  /** Nomad's default "rprivate". */
  propagation: DockerPropagation;
}

export interface DockerTaskConfig {
  image: string;
  command: string;
  args: string[];
  entrypoint: string[];
  workDir: string;
  privileged: boolean;
  capAdd: string[];
  capDrop: string[];
  devices: DockerDevice[];
  mounts: DockerBindMount[];
  /** `host:container[:ro|rw]`, host paths relative to the task dir unless absolute. */
  volumes: string[];
  /** "" is the daemon's default (bridge when it has one, else none: see the driver). */
  networkMode: string;
  labels: Record<string, string>;
  /** name → "soft[:hard]", as Nomad writes them. */
  ulimits: Record<string, { soft: number; hard: number }>;
  forcePull: boolean;
  imagePullTimeoutMs: number;
}

/** The keys berth's driver implements. */
const SUPPORTED = new Set([
  "image",
  "command",
  "args",
  "entrypoint",
  "work_dir",
  "privileged",
  "cap_add",
  "cap_drop",
  "devices",
  "mount",
  "volumes",
  "network_mode",
  "labels",
  "ulimit",
  "force_pull",
  "image_pull_timeout",
]);

/** Keys of Nomad's docker driver that berth's does not implement (refused by name, not as unknown). */
const NOMAD_ONLY = new Set([
  "auth",
  "auth_soft_fail",
  "cgroupns",
  "container_exists_attempts",
  "cpu_hard_limit",
  "cpu_cfs_period",
  "dns_options",
  "dns_search_domains",
  "dns_servers",
  "extra_hosts",
  "group_add",
  "healthchecks",
  "hostname",
  "init",
  "interactive",
  "ipc_mode",
  "ipv4_address",
  "ipv6_address",
  "isolation",
  "load",
  "logging",
  "mac_address",
  "memory_hard_limit",
  "network_aliases",
  "oom_score_adj",
  "pid_mode",
  "pids_limit",
  "port_map",
  "ports",
  "readonly_rootfs",
  "runtime",
  "security_opt",
  "shm_size",
  "storage_opt",
  "sysctl",
  "tty",
  "userns_mode",
  "uts_mode",
  "volume_driver",
  "mounts",
]);

const ULIMIT = /^(\d+)(?::(\d+))?$/;
const DURATION_PART = /(\d+(?:\.\d*)?)(ms|s|m|h)/y;
const DURATION_UNIT_MS: Record<string, number> = { ms: 1, s: 1e3, m: 60e3, h: 3600e3 };

/** Checks and normalises a docker task's `config` (`field` names it in errors, e.g. `Tasks[0].Config`). */
export function dockerTaskConfig(field: string, config: JsonObject): DockerTaskConfig {
  for (const key of Object.keys(config)) {
    if (SUPPORTED.has(key)) continue;
    if (NOMAD_ONLY.has(key))
      throw validationError(`${field}.${key}`, "is not supported by berth's docker driver");
    throw validationError(`${field}.${key}`, "is not a docker driver option");
  }
  const f = (k: string) => `${field}.${k}`;
  const image = str(f("image"), config.image);
  if (image === "") throw validationError(f("image"), "is required");
  return {
    image,
    command: str(f("command"), config.command),
    args: strList(f("args"), config.args),
    entrypoint: strList(f("entrypoint"), config.entrypoint),
    workDir: str(f("work_dir"), config.work_dir),
    privileged: bool(f("privileged"), config.privileged),
    capAdd: strList(f("cap_add"), config.cap_add),
    capDrop: strList(f("cap_drop"), config.cap_drop),
    devices: objects(f("devices"), config.devices).map((d, i) => device(`${f("devices")}[${i}]`, d)),
    mounts: objects(f("mount"), config.mount).map((m, i) => bindMount(`${f("mount")}[${i}]`, m)),
    volumes: strList(f("volumes"), config.volumes).map((v, i) => volumeSpec(`${f("volumes")}[${i}]`, v)),
    networkMode: str(f("network_mode"), config.network_mode),
    labels: stringMap(f("labels"), config.labels),
    ulimits: ulimits(f("ulimit"), config.ulimit),
    forcePull: bool(f("force_pull"), config.force_pull),
    imagePullTimeoutMs: pullTimeout(f("image_pull_timeout"), config.image_pull_timeout),
  };
}

/** A `volumes` entry split: `host:container[:mode]`. */
export function splitVolume(spec: string): { host: string; container: string; readOnly: boolean } {
  const parts = spec.split(":");
  return { host: parts[0]!, container: parts[1]!, readOnly: parts[2] === "ro" };
}

function volumeSpec(field: string, v: string): string {
  const parts = v.split(":");
  const ok = parts.length >= 2 && parts.length <= 3 && parts[0] !== "" && parts[1]!.startsWith("/");
  if (!ok)
    throw validationError(field, `must be "host_path:/container/path[:ro|rw]", got ${JSON.stringify(v)}`);
  if (parts[2] !== undefined && parts[2] !== "ro" && parts[2] !== "rw") {
    throw validationError(field, `mode must be "ro" or "rw", got ${JSON.stringify(parts[2])}`);
  }
  return v;
}

function device(field: string, d: JsonObject): DockerDevice {
  checkKeys(field, d, ["host_path", "container_path", "cgroup_permissions"]);
  const hostPath = str(`${field}.host_path`, d.host_path);
  if (!hostPath.startsWith("/")) throw validationError(`${field}.host_path`, "must be an absolute path");
  const perms = str(`${field}.cgroup_permissions`, d.cgroup_permissions) || "rwm";
  if (!/^[rwm]{1,3}$/.test(perms))
    throw validationError(`${field}.cgroup_permissions`, 'must be letters of "rwm"');
  return {
    hostPath,
    containerPath: str(`${field}.container_path`, d.container_path) || hostPath,
    cgroupPermissions: perms,
  };
}

function bindMount(field: string, m: JsonObject): DockerBindMount {
  checkKeys(field, m, ["type", "target", "source", "readonly", "bind_options"]);
  const type = str(`${field}.type`, m.type) || "volume";
  if (type !== "bind") {
    throw validationError(
      `${field}.type`,
      `only "bind" mounts are supported by berth's docker driver, got ${JSON.stringify(type)}`,
    );
  }
  const target = str(`${field}.target`, m.target);
  if (!target.startsWith("/")) throw validationError(`${field}.target`, "must be an absolute path");
  const source = str(`${field}.source`, m.source);
  if (source === "") throw validationError(`${field}.source`, "is required");
  const opts = objects(`${field}.bind_options`, m.bind_options);
  if (opts.length > 1) throw validationError(`${field}.bind_options`, "may appear once");
  if (opts[0]) checkKeys(`${field}.bind_options`, opts[0], ["propagation"]);
  const raw = str(`${field}.bind_options.propagation`, opts[0]?.propagation) || "rprivate";
  if (!(DOCKER_MOUNT_PROPAGATIONS as readonly string[]).includes(raw)) {
    throw validationError(
      `${field}.bind_options.propagation`,
      `must be one of ${DOCKER_MOUNT_PROPAGATIONS.join(", ")}, got ${JSON.stringify(raw)}`,
    );
  }
  return {
    source,
    target,
    readonly: bool(`${field}.readonly`, m.readonly),
    propagation: raw as DockerPropagation,
  };
}

function ulimits(field: string, v: unknown): Record<string, { soft: number; hard: number }> {
  const out: Record<string, { soft: number; hard: number }> = {};
  for (const [name, raw] of Object.entries(stringMap(field, v))) {
    const m = ULIMIT.exec(raw.trim());
    if (!m)
      throw validationError(`${field}.${name}`, `must be "soft" or "soft:hard", got ${JSON.stringify(raw)}`);
    const soft = Number(m[1]);
    const hard = m[2] === undefined ? soft : Number(m[2]);
    if (hard < soft) throw validationError(`${field}.${name}`, "the hard limit is below the soft one");
    out[name] = { soft, hard };
  }
  return out;
}

function pullTimeout(field: string, v: unknown): number {
  const s = str(field, v).trim();
  if (s === "") return DEFAULT_IMAGE_PULL_TIMEOUT_MS;
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < s.length) {
    const m = DURATION_PART.exec(s);
    if (!m) throw validationError(field, `must be a duration such as "5m", got ${JSON.stringify(s)}`);
    total += Number(m[1]) * DURATION_UNIT_MS[m[2]!]!;
  }
  if (total <= 0) throw validationError(field, "must be longer than 0");
  return Math.round(total);
}

function checkKeys(field: string, o: JsonObject, allowed: string[]): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) throw validationError(`${field}.${k}`, "is not a known option");
  }
}

function str(field: string, v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw validationError(field, "must be a string");
  return v;
}

function bool(field: string, v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") throw validationError(field, "must be a boolean");
  return v;
}

function strList(field: string, v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) {
    throw validationError(field, "must be a list of strings");
  }
  return v;
}

/** A block: an object, or a list of objects (HCL's decoding of a block). */
function objects(field: string, v: unknown): JsonObject[] {
  if (v === undefined || v === null) return [];
  if (isObject(v)) return [v];
  if (Array.isArray(v) && v.every(isObject)) return v;
  throw validationError(field, "must be a block or a list of blocks");
}

/** A map of strings written as a block (`labels { a = "b" }`) or a map (`labels = { … }`). */
function stringMap(field: string, v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const o of objects(field, v)) {
    for (const [k, val] of Object.entries(o)) {
      if (typeof val === "string") out[k] = val;
      else if (typeof val === "number" || typeof val === "boolean") out[k] = String(val);
      else throw validationError(`${field}.${k}`, "must be a string");
    }
  }
  return out;
}
