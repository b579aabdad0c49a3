/**
 * Periodic jobs as Nomad's (structs.PeriodicConfig, nomad/periodic.go): the `periodic` block's
 * config, its next launch time, the children's IDs and the last-launch record (Nomad's
 * PeriodicLaunch table). Pure.
 *
 * Cron specs are Nomad's (hashicorp/cronexpr): 5 fields (minute…day-of-week), 6 fields (a year
 * appended) or 7 fields (seconds first, year last), and the `@yearly`…`@hourly` shorthands. They
 * are evaluated with `cron-parser` (time zones by IANA name through Intl, DST included), which
 * takes seconds first and no year: the seconds default to 0 and the year field is matched here.
 */
import { CronExpressionParser, type CronExpression } from "cron-parser";
import { validationError } from "./errors.js";
import { asObject, optBool, optString, optStringArray } from "./json_check.js";
import type { PeriodicConfig } from "./job_stanzas.js";

/** The last launch of a periodic job (Nomad's PeriodicLaunch): the job's insert time before any. */
export interface PeriodicLaunch {
  ID: string;
  Namespace: string;
  /** Unix nanoseconds. */
  Launch: number;
  CreateIndex: number;
  ModifyIndex: number;
}

/** Nomad's structs.PeriodicLaunchSuffix. */
export const PERIODIC_LAUNCH_SUFFIX = "/periodic-";

const FIELDS = new Set(["Enabled", "Spec", "Specs", "SpecType", "ProhibitOverlap", "TimeZone"]);

const SHORTHANDS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

/** One spec, split into what cron-parser takes and the year predicate. */
interface ParsedSpec {
  six: string;
  year: (y: number) => boolean;
  /** The last year the spec can match (Infinity when open-ended). */
  lastYear: number;
}

function parseYear(spec: string, field: string): Pick<ParsedSpec, "year" | "lastYear"> {
  if (spec === "*" || spec === "?") return { year: () => true, lastYear: Infinity };
  const ranges: [number, number][] = [];
  for (const part of spec.split(",")) {
    const m = /^(\d{4})(?:-(\d{4}))?$/.exec(part);
    if (!m) throw validationError(field, `Invalid cron spec: year field ${JSON.stringify(spec)}`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    ranges.push([lo, hi]);
  }
  return {
    year: (y) => ranges.some(([lo, hi]) => y >= lo && y <= hi),
    lastYear: Math.max(...ranges.map(([, hi]) => hi)),
  };
}

/** Translates a Nomad cron spec; throws ERR_VALIDATION naming `field`. */
export function parseCronSpec(spec: string, field: string): ParsedSpec {
  const raw = spec.trim();
  const expanded = SHORTHANDS[raw.toLowerCase()] ?? raw;
  const f = expanded.split(/\s+/).filter((s) => s !== "");
  let fields: string[];
  let year = "*";
  if (f.length === 5) fields = ["0", ...f];
  else if (f.length === 6) [fields, year] = [["0", ...f.slice(0, 5)], f[5]!];
  else if (f.length === 7) [fields, year] = [f.slice(0, 6), f[6]!];
  else throw validationError(field, `Invalid cron spec ${JSON.stringify(spec)}: want 5, 6 or 7 fields`);
  const six = fields.join(" ");
  try {
    CronExpressionParser.parse(six, { tz: "UTC" });
  } catch (err) {
    throw validationError(field, `Invalid cron spec ${JSON.stringify(spec)}: ${(err as Error).message}`);
  }
  return { six, ...parseYear(year, field) };
}

/** The IANA zone a config names ("Local" → this process's zone); throws on an unknown zone. */
export function zoneOf(cfg: Pick<PeriodicConfig, "TimeZone">, field = "Periodic.TimeZone"): string {
  const tz = cfg.TimeZone === "" ? "UTC" : cfg.TimeZone;
  if (tz === "Local") return Intl.DateTimeFormat().resolvedOptions().timeZone;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
  } catch {
    throw validationError(field, `Invalid time zone ${JSON.stringify(tz)}`);
  }
  return tz;
}

/** The specs of a config, in order (`crons`, else the single `cron`). */
export function specsOf(cfg: Pick<PeriodicConfig, "Spec" | "Specs">): string[] {
  return cfg.Specs.length > 0 ? cfg.Specs : cfg.Spec !== "" ? [cfg.Spec] : [];
}

/**
 * Nomad's PeriodicConfig canonicalized and validated (api Canonicalize: Enabled true, SpecType
 * "cron", TimeZone "UTC"; structs Validate: a spec, a loadable zone, parsable crons).
 */
export function validatePeriodic(field: string, input: unknown): PeriodicConfig {
  const p = asObject(field, input);
  for (const k of Object.keys(p)) {
    if (!FIELDS.has(k)) throw validationError(`${field}.${k}`, "unknown field");
  }
  const cfg: PeriodicConfig = {
    Enabled: optBool(`${field}.Enabled`, p.Enabled, true),
    Spec: optString(`${field}.Spec`, p.Spec, ""),
    Specs: optStringArray(`${field}.Specs`, p.Specs, []),
    SpecType: "cron",
    ProhibitOverlap: optBool(`${field}.ProhibitOverlap`, p.ProhibitOverlap, false),
    TimeZone: optString(`${field}.TimeZone`, p.TimeZone, "") || "UTC",
  };
  const type = optString(`${field}.SpecType`, p.SpecType, "cron") || "cron";
  if (type !== "cron")
    throw validationError(`${field}.SpecType`, `Unknown periodic specification type ${JSON.stringify(type)}`);
  if (cfg.Spec !== "" && cfg.Specs.length > 0)
    throw validationError(`${field}.Spec`, "Only cron or crons may be used");
  if (!cfg.Enabled) return cfg;
  const specs = specsOf(cfg);
  if (specs.length === 0) throw validationError(`${field}.Spec`, "Must specify a spec");
  zoneOf(cfg, `${field}.TimeZone`);
  specs.forEach((s, i) => parseCronSpec(s, cfg.Specs.length > 0 ? `${field}.Specs[${i}]` : `${field}.Spec`));
  return cfg;
}

/** How many occurrences one spec may skip for a non-matching year before it gives up. */
const YEAR_SCAN = 100_000;

function nextOfSpec(p: ParsedSpec, afterMs: number, tz: string): number | null {
  const expr: CronExpression = CronExpressionParser.parse(p.six, { currentDate: new Date(afterMs), tz });
  if (p.lastYear === Infinity) return expr.hasNext() ? expr.next().toDate().getTime() : null;
  const yearOf = new Intl.DateTimeFormat("en-US", { timeZone: tz, year: "numeric" });
  for (let i = 0; i < YEAR_SCAN && expr.hasNext(); i++) {
    const at = expr.next().toDate();
    const y = Number(yearOf.format(at));
    if (p.year(y)) return at.getTime();
    if (y > p.lastYear) return null;
  }
  return null;
}

/**
 * The first launch strictly after `afterMs` (unix ms) over every spec of the config, in its zone;
 * null when no spec fires again (Nomad's zero time), or the config is disabled.
 */
export function nextLaunch(cfg: PeriodicConfig, afterMs: number): number | null {
  if (!cfg.Enabled) return null;
  const tz = zoneOf(cfg);
  let best: number | null = null;
  for (const s of specsOf(cfg)) {
    const at = nextOfSpec(parseCronSpec(s, "Periodic.Spec"), afterMs, tz);
    if (at !== null && (best === null || at < best)) best = at;
  }
  return best;
}

/** Nomad's child ID: `<parent>/periodic-<unix seconds>`. */
export function periodicChildId(parentId: string, launchMs: number): string {
  return `${parentId}${PERIODIC_LAUNCH_SUFFIX}${Math.floor(launchMs / 1000)}`;
}

/** The launch time (unix ms) a periodic child's ID names, or undefined when it names none. */
export function launchTimeOfChild(childId: string): number | undefined {
  const at = childId.lastIndexOf(PERIODIC_LAUNCH_SUFFIX);
  if (at < 0) return undefined;
  const s = childId.slice(at + PERIODIC_LAUNCH_SUFFIX.length);
  return /^\d+$/.test(s) ? Number(s) * 1000 : undefined;
}

/**
 * An instant as Go's time.Time JSON in a zone (RFC 3339, seconds, the zone's offset or `Z`), as
 * Nomad answers NextPeriodicLaunch: the next launch in the job's own time zone.
 */
export function rfc3339In(ms: number, tz: string): string {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: tz,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZoneName: "longOffset",
  }).formatToParts(new Date(ms));
  const get = (t: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === t)?.value ?? "";
  const offset = get("timeZoneName").replace(/^GMT/, "");
  // Go writes any zero offset as `Z` (the layout "Z07:00").
  const zone = offset === "" || offset === "+00:00" ? "Z" : offset;
  return `${get("year")}-${get("month")}-${get("day")}T${get("hour")}:${get("minute")}:${get("second")}${zone}`;
}
