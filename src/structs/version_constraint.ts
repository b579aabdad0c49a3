/**
 * The two version languages of Nomad's constraints, with hashicorp/go-version's semantics:
 * `version` (go-version constraints: `>= 1.2, < 2`, `~> 1.3`, a loose version on either side)
 * and `semver` (Nomad's helper/constraints/semver: no `~>`, the constraint's version must carry a
 * `-` before its prerelease, and a prerelease compares as semver says with no prerelease filter).
 * A node's value is always parsed loosely, as Nomad does for both. Pure.
 */

export interface Version {
  /** Numeric segments, padded with zeros to at least three. */
  segments: number[];
  /** How many segments were written (`~> 1.2` keeps the 1 and lets the 2 grow). */
  written: number;
  pre: string;
  meta: string;
}

const NUM = String.raw`([0-9]+(?:\.[0-9]+)*?)`;
const PRE_NUMERIC = String.raw`-([0-9]+[0-9A-Za-z\-~]*(?:\.[0-9A-Za-z\-~]+)*)`;
const PRE_WORD = (sep: string) => String.raw`${sep}([A-Za-z\-~]+[0-9A-Za-z\-~]*(?:\.[0-9A-Za-z\-~]+)*)`;
const META = String.raw`(?:\+([0-9A-Za-z\-~]+(?:\.[0-9A-Za-z\-~]+)*))?`;
/** go-version's VersionRegexpRaw (`1.2.3beta` is a version) and SemverRegexpRaw (`1.2.3-beta`). */
const LOOSE_RAW = String.raw`v?${NUM}(?:${PRE_NUMERIC}|${PRE_WORD("-?")})?${META}`;
const STRICT_RAW = String.raw`v?${NUM}(?:${PRE_NUMERIC}|${PRE_WORD("-")})?${META}`;
const LOOSE = new RegExp(`^${LOOSE_RAW}$`);
const STRICT = new RegExp(`^${STRICT_RAW}$`);

function fromMatch(m: RegExpExecArray): Version | null {
  const parts = m[1]!.split(".");
  const segments = parts.map(Number);
  // go-version parses each segment as an int64: a longer one is a malformed version.
  if (segments.some((s) => !Number.isSafeInteger(s))) return null;
  while (segments.length < 3) segments.push(0);
  return { segments, written: parts.length, pre: m[2] ?? m[3] ?? "", meta: m[4] ?? "" };
}

/** A version as go-version's NewVersion reads it, or null when malformed. */
export function parseVersion(s: string): Version | null {
  const m = LOOSE.exec(s);
  return m ? fromMatch(m) : null;
}

function equalSegments(a: Version, b: Version): boolean {
  return a.segments.length === b.segments.length && a.segments.every((s, i) => s === b.segments[i]);
}

function comparePart(a: string, b: string): number {
  if (a === b) return 0;
  const aNum = /^[+-]?[0-9]+$/.test(a);
  const bNum = /^[+-]?[0-9]+$/.test(b);
  if (a === "") return bNum ? -1 : 1;
  if (b === "") return aNum ? 1 : -1;
  if (aNum && !bNum) return -1;
  if (!aNum && bNum) return 1;
  if (!aNum && !bNum) return a > b ? 1 : -1;
  return Number(a) > Number(b) ? 1 : -1;
}

function comparePrereleases(a: string, b: string): number {
  if (a === b) return 0;
  const as = a.split(".");
  const bs = b.split(".");
  for (let i = 0; i < Math.max(as.length, bs.length); i++) {
    const c = comparePart(as[i] ?? "", bs[i] ?? "");
    if (c !== 0) return c;
  }
  return 0;
}

/** -1, 0 or 1 as go-version's Compare: segments (missing ones are zeros), then prerelease. */
export function compareVersions(a: Version, b: Version): number {
  if (equalSegments(a, b)) {
    if (a.pre === "" && b.pre === "") return 0;
    if (a.pre === "") return 1;
    if (b.pre === "") return -1;
    return comparePrereleases(a.pre, b.pre);
  }
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const l = a.segments[i] ?? 0;
    const r = b.segments[i] ?? 0;
    if (l !== r) return l < r ? -1 : 1;
  }
  return 0;
}

/** go-version: a prerelease version only meets an ordering whose version is a prerelease of it. */
function prereleaseCheck(v: Version, c: Version): boolean {
  if (v.pre !== "" && c.pre !== "") return equalSegments(v, c);
  return v.pre === "";
}

function pessimistic(v: Version, c: Version): boolean {
  if (!prereleaseCheck(v, c) || (c.pre !== "" && v.pre === "")) return false;
  if (compareVersions(v, c) < 0) return false;
  const cs = c.segments.length;
  if (cs > v.segments.length) return false;
  for (let i = 0; i < c.written - 1; i++) if (v.segments[i] !== c.segments[i]) return false;
  return c.segments[cs - 1]! <= v.segments[cs - 1]!;
}

type Check = (v: Version, c: Version) => boolean;

const VERSION_OPS: Record<string, Check> = {
  "": (v, c) => compareVersions(v, c) === 0,
  "=": (v, c) => compareVersions(v, c) === 0,
  "!=": (v, c) => compareVersions(v, c) !== 0,
  ">": (v, c) => prereleaseCheck(v, c) && compareVersions(v, c) > 0,
  "<": (v, c) => prereleaseCheck(v, c) && compareVersions(v, c) < 0,
  ">=": (v, c) => prereleaseCheck(v, c) && compareVersions(v, c) >= 0,
  "<=": (v, c) => prereleaseCheck(v, c) && compareVersions(v, c) <= 0,
  "~>": pessimistic,
};

const SEMVER_OPS: Record<string, Check> = {
  "": (v, c) => compareVersions(v, c) === 0,
  "=": (v, c) => compareVersions(v, c) === 0,
  "!=": (v, c) => compareVersions(v, c) !== 0,
  ">": (v, c) => compareVersions(v, c) > 0,
  "<": (v, c) => compareVersions(v, c) < 0,
  ">=": (v, c) => compareVersions(v, c) >= 0,
  "<=": (v, c) => compareVersions(v, c) <= 0,
};

const SINGLE = {
  version: new RegExp(String.raw`^\s*(~>|>=|<=|!=|=|>|<|)\s*(${LOOSE_RAW})\s*$`),
  semver: new RegExp(String.raw`^\s*(>=|<=|!=|=|>|<|)\s*(${STRICT_RAW})\s*$`),
};

/** A parsed constraint string: true when the version meets every comma-separated part. */
export type VersionConstraint = (v: Version) => boolean;

/**
 * Parses `>= 1.2, < 2` in the `version` or `semver` language; throws an Error whose message names
 * the malformed part (go-version's "Malformed constraint: …").
 */
export function parseVersionConstraint(s: string, lang: "version" | "semver"): VersionConstraint {
  const ops = lang === "version" ? VERSION_OPS : SEMVER_OPS;
  const checks = s.split(",").map((single) => {
    const m = SINGLE[lang].exec(single);
    if (!m) throw new Error(`Malformed constraint: ${single}`);
    const vm = (lang === "version" ? LOOSE : STRICT).exec(m[2]!);
    const c = vm ? fromMatch(vm) : null;
    if (!c) throw new Error(`malformed version: ${m[2]}`);
    const op = ops[m[1]!]!;
    return (v: Version) => op(v, c);
  });
  return (v) => checks.every((check) => check(v));
}
