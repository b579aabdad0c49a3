/**
 * A task's `logs` stanza (Nomad's structs.LogConfig): how the node rotates the task's stdout and
 * stderr files — at most `MaxFiles` files of `MaxFileSizeMB` each per stream, the oldest deleted —
 * or, `Disabled`, that the task's output is thrown away. Decoded and checked here with Nomad's
 * defaults and messages; the client's log collector (client/logmon/) acts on it. Pure.
 */
import { validationError } from "./errors.js";
import { isObject, optBool, optNumber } from "./json_check.js";

export interface LogConfig {
  MaxFiles: number;
  MaxFileSizeMB: number;
  Disabled: boolean;
}

/** Nomad's DefaultLogConfig. */
export const DEFAULT_LOG_CONFIG: Readonly<LogConfig> = Object.freeze({
  MaxFiles: 10,
  MaxFileSizeMB: 10,
  Disabled: false,
});

const LOG_CONFIG_FIELDS = new Set(["MaxFiles", "MaxFileSizeMB", "Disabled", "Enabled"]);

/**
 * The task's LogConfig from the API's JSON: absent or null is Nomad's default; a missing field
 * takes its default (Nomad's api Canonicalize). `Enabled` (Nomad's deprecated form) is read only
 * when `Disabled` is not given: `Enabled: false` disables. Nomad's minimums with its messages.
 */
export function logConfig(field: string, input: unknown): LogConfig {
  if (input === undefined || input === null) return { ...DEFAULT_LOG_CONFIG };
  if (!isObject(input)) throw validationError(field, "must be an object");
  for (const k of Object.keys(input)) {
    if (!LOG_CONFIG_FIELDS.has(k)) throw validationError(`${field}.${k}`, "unknown field");
  }
  const MaxFiles = optNumber(`${field}.MaxFiles`, input.MaxFiles, DEFAULT_LOG_CONFIG.MaxFiles, {
    integer: true,
  });
  if (MaxFiles < 1)
    throw validationError(`${field}.MaxFiles`, `minimum number of files is 1; got ${MaxFiles}`);
  const MaxFileSizeMB = optNumber(
    `${field}.MaxFileSizeMB`,
    input.MaxFileSizeMB,
    DEFAULT_LOG_CONFIG.MaxFileSizeMB,
    { integer: true },
  );
  if (MaxFileSizeMB < 1)
    throw validationError(`${field}.MaxFileSizeMB`, `minimum file size is 1MB; got ${MaxFileSizeMB}`);
  // A rotation bound past a petabyte is a typo; refusing it keeps MaxFileSizeMB × 2^20 exact.
  if (MaxFileSizeMB > 1 << 30) throw validationError(`${field}.MaxFileSizeMB`, `must be at most ${1 << 30}`);
  const enabled = optBool(`${field}.Enabled`, input.Enabled, true);
  const Disabled = optBool(`${field}.Disabled`, input.Disabled, !enabled);
  return { MaxFiles, MaxFileSizeMB, Disabled };
}

/**
 * Nomad's check of the group's disk against its tasks' logs: every task's MaxFiles × MaxFileSizeMB
 * must be less than the group's ephemeral disk, `diskMB` (its `size`, default 300 MB).
 */
export function checkLogStorage(
  field: string,
  tasks: readonly { LogConfig?: LogConfig | null }[],
  disk: number,
): void {
  tasks.forEach((t, i) => {
    const l = t.LogConfig ?? DEFAULT_LOG_CONFIG;
    const usage = l.MaxFiles * l.MaxFileSizeMB;
    if (disk <= usage) {
      throw validationError(
        `${field}[${i}].LogConfig`,
        `log storage (${usage} MB) must be less than requested disk capacity (${disk} MB)`,
      );
    }
  });
}

/** The task's rotation bounds in bytes (absent LogConfig: the defaults). */
export function logLimits(l: LogConfig | null | undefined): { maxFiles: number; maxFileBytes: number } {
  const c = l ?? DEFAULT_LOG_CONFIG;
  return { maxFiles: c.MaxFiles, maxFileBytes: c.MaxFileSizeMB * 1024 * 1024 };
}
