/**
 * The jobspec stanzas berth acts on, HCL → Nomad's JSON, as Nomad's jobspec2 decodes them: only the
 * fields written (the server fills Nomad's defaults, as Nomad's `Canonicalize` does), except where
 * jobspec2 itself normalises (templates). Constraint and affinity shorthands (`distinct_hosts =
 * true`, `version = ">= 1.2"`, …) become Nomad's Operand/RTarget (jobspec2 hcl_conversions.go).
 */
import type { Body } from "./body.js";
import {
  CHANGE_SCRIPT,
  decodeKept,
  DEVICE,
  NETWORK,
  normalizeChangeScript,
  normalizePorts,
  NUMA,
  WAIT,
} from "./jobspec_kept.js";
import type {
  Affinity,
  Constraint,
  ReschedulePolicy,
  Resources,
  RestartPolicy,
  Spread,
  TaskLifecycle,
  Template,
  UpdateStrategy,
} from "../types.js";

const NS_PER_S = 1e9;

/** Sets `out[key]` when `v` is defined: the decoders write only what the jobspec wrote. */
function put<T extends object, K extends keyof T>(out: T, key: K, v: T[K] | undefined): void {
  if (v !== undefined) out[key] = v;
}

/** Shorthand attributes that set the operator to their own name and the value to RTarget. */
const CONSTRAINT_SHORTHANDS = ["version", "semver", "regexp", "set_contains"] as const;
const AFFINITY_SHORTHANDS = [
  "version",
  "semver",
  "regexp",
  "set_contains_any",
  "set_contains_all",
  "set_contains",
] as const;

/**
 * `constraint` blocks. Besides attribute/operator/value, Nomad's shorthands: `version`, `semver`,
 * `regexp`, `set_contains` (the operator is the key, the value RTarget), `distinct_hosts = bool`
 * (RTarget "true"/"false"), `distinct_property = "${meta.rack}"` (LTarget). `set_contains_all`,
 * `set_contains_any`, `is_set` and `is_not_set` are accepted keys that set nothing, as in jobspec2:
 * those operators are written with `operator`.
 */
export function constraintsFrom(b: Body): { Constraints?: Constraint[] } {
  const blocks = b.blocks("constraint");
  if (blocks.length === 0) return {};
  return { Constraints: blocks.map(constraintFrom) };
}

export function constraintFrom(c: Body): Constraint {
  const out: Constraint = {
    LTarget: c.string("attribute") ?? "",
    RTarget: c.string("value") ?? "",
    Operand: c.string("operator") ?? "",
  };
  for (const k of CONSTRAINT_SHORTHANDS) {
    const v = c.string(k);
    if (v) [out.Operand, out.RTarget] = [k, v];
  }
  const hosts = c.bool("distinct_hosts");
  if (hosts !== undefined) [out.Operand, out.RTarget] = ["distinct_hosts", String(hosts)];
  const property = c.string("distinct_property");
  if (property) [out.Operand, out.LTarget] = ["distinct_property", property];
  // Accepted by jobspec2's schema without effect (the operator carries them).
  for (const k of ["set_contains_all", "set_contains_any", "is_set", "is_not_set"]) c.string(k);
  if (out.Operand === "") out.Operand = "=";
  c.finish();
  return out;
}

export function affinitiesFrom(b: Body): { Affinities?: Affinity[] } {
  const blocks = b.blocks("affinity");
  if (blocks.length === 0) return {};
  return {
    Affinities: blocks.map((a) => {
      const out: Affinity = {
        LTarget: a.string("attribute") ?? "",
        RTarget: a.string("value") ?? "",
        Operand: a.string("operator") ?? "",
      };
      put(out, "Weight", a.integer("weight"));
      for (const k of AFFINITY_SHORTHANDS) {
        const v = a.string(k);
        if (v) [out.Operand, out.RTarget] = [k, v];
      }
      if (out.Operand === "") out.Operand = "=";
      a.finish();
      return out;
    }),
  };
}

/** `spread { attribute, weight, target "label" { percent } }`. */
export function spreadsFrom(b: Body): { Spreads?: Spread[] } {
  const blocks = b.blocks("spread");
  if (blocks.length === 0) return {};
  return {
    Spreads: blocks.map((s) => {
      const out: Spread = { Attribute: s.string("attribute") ?? "" };
      put(out, "Weight", s.integer("weight"));
      const targets = s.labelled("target").map(([Value, t]) => {
        const target = { Value, Percent: t.integer("percent") ?? 0 };
        t.finish();
        return target;
      });
      if (targets.length > 0) out.SpreadTarget = targets;
      s.finish();
      return out;
    }),
  };
}

/** `update { … }` at job or group level: the fields written (the server merges and defaults). */
export function updateFrom(b: Body): { Update?: UpdateStrategy } {
  const u = b.block("update");
  if (!u) return {};
  const out: UpdateStrategy = {};
  put(out, "Stagger", u.duration("stagger"));
  put(out, "MaxParallel", u.integer("max_parallel"));
  put(out, "HealthCheck", u.string("health_check"));
  put(out, "MinHealthyTime", u.duration("min_healthy_time"));
  put(out, "HealthyDeadline", u.duration("healthy_deadline"));
  put(out, "ProgressDeadline", u.duration("progress_deadline"));
  put(out, "Canary", u.integer("canary"));
  put(out, "AutoRevert", u.bool("auto_revert"));
  put(out, "AutoPromote", u.bool("auto_promote"));
  u.finish();
  return { Update: out };
}

/** `resources { cpu, cores, memory, memory_max, disk, secrets, network, device "name", numa }`. */
export function resourcesFrom(b: Body): Resources | undefined {
  const r = b.block("resources");
  if (!r) return undefined;
  const out: Resources = {};
  put(out, "CPU", r.integer("cpu"));
  put(out, "Cores", r.integer("cores"));
  put(out, "MemoryMB", r.integer("memory"));
  put(out, "MemoryMaxMB", r.integer("memory_max"));
  put(out, "DiskMB", r.integer("disk"));
  put(out, "SecretsMB", r.integer("secrets"));
  put(out, "IOPS", r.integer("iops"));
  const networks = r.blocks("network").map((n) => normalizePorts(decodeKept(n, NETWORK)));
  if (networks.length > 0) out.Networks = networks;
  const devices = r.labelled("device").map(([Name, d]) => {
    const dev: Record<string, unknown> = { Name };
    const cs = d.blocks("constraint").map(constraintFrom);
    if (cs.length > 0) dev.Constraints = cs;
    const as = affinitiesFrom(d).Affinities;
    if (as) dev.Affinities = as;
    return { ...dev, ...decodeKept(d, DEVICE) };
  });
  if (devices.length > 0) out.Devices = devices;
  const numa = r.block("numa");
  if (numa) out.NUMA = decodeKept(numa, NUMA);
  r.finish();
  return out;
}

/** `lifecycle { hook, sidecar }`. */
export function lifecycleFrom(b: Body): TaskLifecycle | undefined {
  const l = b.block("lifecycle");
  if (!l) return undefined;
  const out = { Hook: l.string("hook") ?? "", Sidecar: l.bool("sidecar") ?? false };
  l.finish();
  return out;
}

/**
 * `template` blocks with Nomad's defaults for what they leave out (api Template.Canonicalize:
 * change_mode "restart", perms "0644", splay 5s, `{{`/`}}`, change_signal upper-cased, SIGHUP for
 * change_mode "signal").
 */
export function templatesFrom(b: Body): Template[] {
  return b.blocks("template").map((t) => {
    const ChangeMode = t.string("change_mode") ?? "restart";
    const signal = t.string("change_signal");
    const out: Template = {
      SourcePath: t.string("source") ?? "",
      DestPath: t.string("destination") ?? "",
      EmbeddedTmpl: t.string("data") ?? "",
      ChangeMode,
      ChangeSignal: signal !== undefined ? signal.toUpperCase() : ChangeMode === "signal" ? "SIGHUP" : "",
      Splay: t.duration("splay") ?? 5 * NS_PER_S,
      Perms: t.string("perms") ?? "0644",
      LeftDelim: t.string("left_delimiter") ?? "{{",
      RightDelim: t.string("right_delimiter") ?? "}}",
      Envvars: t.bool("env") ?? false,
      ErrMissingKey: t.bool("error_on_missing_key") ?? false,
      Once: t.bool("once") ?? false,
      VaultGrace: t.duration("vault_grace") ?? 0,
    };
    put(out, "Uid", t.integer("uid"));
    put(out, "Gid", t.integer("gid"));
    const script = t.block("change_script");
    if (script) out.ChangeScript = normalizeChangeScript(decodeKept(script, CHANGE_SCRIPT));
    const wait = t.block("wait");
    if (wait) out.Wait = decodeKept(wait, WAIT);
    t.finish();
    return out;
  });
}

/** A task's block fills what it leaves out from its group's policy, a group's from the defaults. */
export function restartFrom(b: Body | undefined, d: RestartPolicy): RestartPolicy | null {
  if (!b) return null;
  const policy: RestartPolicy = {
    Attempts: b.integer("attempts") ?? d.Attempts,
    Interval: b.duration("interval") ?? d.Interval,
    Delay: b.duration("delay") ?? d.Delay,
    Mode: b.string("mode") ?? d.Mode,
  };
  const render = b.bool("render_templates") ?? d.RenderTemplates;
  if (render) policy.RenderTemplates = true;
  b.finish();
  return policy;
}

/**
 * A `reschedule { attempts, interval, delay, delay_function, max_delay, unlimited }` block as
 * Nomad's JSON, with only the fields written: the server merges it over the job's block and the
 * job type's defaults (Nomad's TaskGroup.Canonicalize), and validates the result.
 */
export function rescheduleFrom<K extends "Reschedule" | "ReschedulePolicy">(
  parent: Body,
  key: K,
): { [P in K]?: ReschedulePolicy } {
  const b = parent.block("reschedule");
  if (!b) return {};
  const p: ReschedulePolicy = {};
  put(p, "Attempts", b.integer("attempts"));
  put(p, "Interval", b.duration("interval"));
  put(p, "Delay", b.duration("delay"));
  put(p, "DelayFunction", b.string("delay_function"));
  put(p, "MaxDelay", b.duration("max_delay"));
  put(p, "Unlimited", b.bool("unlimited"));
  b.finish();
  return { [key]: p } as { [P in K]?: ReschedulePolicy };
}
