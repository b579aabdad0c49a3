/**
 * The jobspec stanzas beyond groups, tasks and volumes, in Nomad's JSON shape (`api` package field
 * names; durations in nanoseconds). Those berth honours are typed field by field; those it keeps
 * but cannot honour on its node types (`service`, `network`, `vault`, `artifact`, …) are kept as
 * written (Nomad's JSON objects) so `job inspect` shows them and `job run` warns about them.
 */

/** Nomad's Resources: CPU in MHz, memory in MiB. `Cores` excludes `CPU`. */
export interface Resources {
  CPU?: number;
  Cores?: number;
  MemoryMB?: number;
  /** Memory oversubscription: the hard limit when set (> MemoryMB); MemoryMB is then the soft one. */
  MemoryMaxMB?: number;
  DiskMB?: number;
  /** Kept, not honoured: ports and bandwidth. */
  Networks?: Record<string, unknown>[];
  /** Kept, not honoured. */
  Devices?: Record<string, unknown>[];
  /** Kept, not honoured: NUMA-aware scheduling and the secrets dir's size. */
  NUMA?: Record<string, unknown>;
  SecretsMB?: number;
}

/** Nomad's defaults for a task that sets no `resources`: 100 MHz, 300 MiB. */
export const DEFAULT_TASK_CPU_MHZ = 100;
export const DEFAULT_TASK_MEMORY_MB = 300;

/** `lifecycle { hook = "prestart" | "poststart" | "poststop", sidecar = bool }`. */
export interface TaskLifecycle {
  Hook: "prestart" | "poststart" | "poststop";
  Sidecar: boolean;
}

/** Nomad's Template (consul-template): rendered by the client before the task starts. */
export interface Template {
  /** A file in the task's directory to render from (relative to the task dir), or "". */
  SourcePath: string;
  /** Where the output goes, relative to the task dir (`local/x.conf`), or under `${NOMAD_*}`. */
  DestPath: string;
  /** The inline template (`data`). */
  EmbeddedTmpl: string;
  /** "noop" | "restart" | "signal" | "script"; Nomad's default "restart". */
  ChangeMode: string;
  ChangeSignal: string;
  /** Nanoseconds. */
  Splay: number;
  /** Octal file mode as a string, Nomad's default "0644". */
  Perms: string;
  LeftDelim: string;
  RightDelim: string;
  /** `env = true`: the output is KEY=VALUE lines added to the task's environment. */
  Envvars: boolean;
  ErrMissingKey: boolean;
  /** Render once and never watch for changes; Nomad's default false. */
  Once?: boolean;
  /** Owner of the rendered file (negative: the agent's user); both absent: the user the task runs as. */
  Uid?: number | null;
  Gid?: number | null;
  /** Deprecated and unused by Nomad (Vault 0.5); kept as Nomad answers it, 0. */
  VaultGrace?: number;
  /** Kept, not honoured: `change_script` and `wait` (consul-template's quiescence). */
  ChangeScript?: KeptStanza | null;
  Wait?: KeptStanza | null;
}

/** `affinity { attribute, operator, value, weight }`: a preference, weight -100..100 (≠ 0). */
export interface Affinity {
  LTarget: string;
  RTarget: string;
  Operand: string;
  Weight: number;
}

export interface SpreadTarget {
  Value: string;
  Percent: number;
}

/** `spread { attribute, weight, target "v" { percent } }`. */
export interface Spread {
  Attribute: string;
  Weight: number;
  SpreadTarget: SpreadTarget[];
}

/**
 * Nomad's UpdateStrategy (job and group level; the group's merges over the job's). Durations in
 * nanoseconds. Nomad's defaults: MaxParallel 1, HealthCheck "checks", MinHealthyTime 10s,
 * HealthyDeadline 5m, ProgressDeadline 10m, Canary 0, AutoRevert false, AutoPromote false,
 * Stagger 30s.
 */
export interface UpdateStrategy {
  Stagger: number;
  MaxParallel: number;
  /** "checks" | "task_states" | "manual" */
  HealthCheck: string;
  MinHealthyTime: number;
  HealthyDeadline: number;
  ProgressDeadline: number;
  Canary: number;
  AutoRevert: boolean;
  AutoPromote: boolean;
}

/** Stanzas berth keeps verbatim (Nomad's JSON objects) but does not act on. */
export type KeptStanza = Record<string, unknown>;

/** Nomad's PeriodicConfig (periodic.ts evaluates it). */
export interface PeriodicConfig {
  Enabled: boolean;
  /** The older single `cron`; "" when `crons` is used. */
  Spec: string;
  Specs: string[];
  SpecType: "cron";
  ProhibitOverlap: boolean;
  /** IANA name; "UTC" by default, "Local" is the server's zone (as Go's time.LoadLocation). */
  TimeZone: string;
}

export type DispatchPayloadRule = "optional" | "required" | "forbidden";

/** Nomad's ParameterizedJobConfig (parameterized.ts checks dispatches against it). */
export interface ParameterizedJobConfig {
  Payload: DispatchPayloadRule;
  MetaRequired: string[];
  MetaOptional: string[];
}

/** A task's `dispatch_payload`: the payload is written to `local/<File>` before the task starts. */
export interface DispatchPayloadConfig {
  File: string;
}
