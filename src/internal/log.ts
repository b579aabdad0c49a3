/**
 * A small structured logger. Lines are `time level component: message key=value…`. Values under
 * keys that name secrets are replaced before formatting, so a careless call cannot leak them.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

const SECRET_KEY = /secret|password|token|credential|mountflags/i;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(component: string): Logger;
}

export interface LogSink {
  write(line: string): void;
}

function formatValue(key: string, value: unknown): string {
  if (SECRET_KEY.test(key)) return "[REDACTED]";
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === "string") return /\s|"/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value, (k, v: unknown) => (k !== "" && SECRET_KEY.test(k) ? "[REDACTED]" : v));
}

export function createLogger(options: { level?: LogLevel; sink?: LogSink; component?: string } = {}): Logger {
  const level = options.level ?? ((process.env.BERTH_LOG_LEVEL as LogLevel | undefined) || "info");
  const sink = options.sink ?? { write: (line: string) => process.stderr.write(line + "\n") };
  const make = (component: string): Logger => {
    const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
      if (ORDER[lvl] < (ORDER[level] ?? 20)) return;
      const kv = fields
        ? Object.entries(fields)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => ` ${k}=${formatValue(k, v)}`)
            .join("")
        : "";
      sink.write(`${new Date().toISOString()} [${lvl.toUpperCase()}] ${component}: ${msg}${kv}`);
    };
    return {
      debug: (m, f) => emit("debug", m, f),
      info: (m, f) => emit("info", m, f),
      warn: (m, f) => emit("warn", m, f),
      error: (m, f) => emit("error", m, f),
      child: (c) => make(component ? `${component}.${c}` : c),
    };
  };
  return make(options.component ?? "berth");
}

/** A logger that drops everything, for tests that do not assert on logs. */
export const nullLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => nullLogger,
};
