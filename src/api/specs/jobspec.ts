/**
 * Nomad's HCL jobspec → the API's Job, as Nomad's jobspec2 decodes it: every stanza and attribute
 * of Nomad's jobspec. Those berth acts on are typed (jobspec_stanzas.ts, jobspec_task.ts); those it
 * keeps but does not act on decode into Nomad's JSON by schema (jobspec_kept.ts) and the server
 * warns about them. A key Nomad's jobspec does not have is refused by name. Semantics (IDs present,
 * modes valid, mounts naming declared volumes) are the server's to check; this only checks syntax
 * and types, and fills the defaults Nomad's decoder fills.
 */
import { Body, SpecError } from "./body.js";
import { decodeHcl, evaluateJobspec, type HclInputs } from "./hcl.js";
import { fromJsonSyntax } from "./jobspec_json.js";
import {
  CONSUL,
  decodeKept,
  DISCONNECT,
  EPHEMERAL_DISK,
  MIGRATE,
  MULTIREGION,
  NETWORK,
  normalizePorts,
  PARAMETERIZED,
  PERIODIC,
  SCALING,
  SERVICE,
  UI,
} from "./jobspec_kept.js";
import {
  affinitiesFrom,
  constraintsFrom,
  rescheduleFrom,
  restartFrom,
  spreadsFrom,
  updateFrom,
} from "./jobspec_stanzas.js";
import { secretsFrom, taskFrom, vaultFrom, type TaskDefaults } from "./jobspec_task.js";
import { volumeCreateFrom } from "./jobspec_volume_create.js";
import type { Job, RestartPolicy, TaskGroup, VolumeRequest } from "../types.js";

const NS_PER_S = 1e9;

/** Nomad's defaults: a restart block fills the fields it leaves out from these, by job type. */
function defaultRestart(jobType: string): RestartPolicy {
  return jobType === "batch" || jobType === "sysbatch"
    ? { Attempts: 3, Interval: 24 * 3600 * NS_PER_S, Delay: 15 * NS_PER_S, Mode: "fail" }
    : { Attempts: 2, Interval: 30 * 60 * NS_PER_S, Delay: 15 * NS_PER_S, Mode: "fail" };
}

export async function parseJobHcl(file: string, text: string, inputs: HclInputs = {}): Promise<Job> {
  const decoded = await decodeHcl(file, text, inputs);
  try {
    return jobFromDecoded(file, decoded, text);
  } catch (err) {
    throw err instanceof SpecError ? withLine(err, text) : err;
  }
}

/**
 * A jobspec in HCL's JSON syntax (`{"job": {...}}`, already parsed from `text`) with the language
 * of the HCL form, as Nomad's jobspec2 reads a `.json` jobspec: every string is a template,
 * `variable`/`variables`/`locals` blocks are declared and filled from `-var`, `-var-file` and
 * `NOMAD_VAR_*`, and references to anything but `var`/`local` stay for the client.
 */
export async function parseJobJsonSyntax(
  file: string,
  text: string,
  decoded: Record<string, unknown>,
  inputs: HclInputs = {},
): Promise<Job> {
  return jobFromDecoded(file, await evaluateJobspec(file, text, fromJsonSyntax(decoded), inputs), text);
}

/**
 * An "unsupported key" error with the line the key is written on, when the source writes it on
 * exactly one line (the decoder's output carries no positions; a key written several times is
 * left without one rather than pointed at the wrong place).
 */
function withLine(err: SpecError, text: string): SpecError {
  const m = /unsupported keys? "((?:[^"\\]|\\.)*)"/.exec(err.message);
  if (!m) return err;
  const key = escapeRegExp(m[1]!);
  const lines = text
    .split("\n")
    .flatMap((line, i) => (new RegExp(`^\\s*("?)${key}\\1\\s*(=|\\{|")`).test(line) ? [i + 1] : []));
  return lines.length === 1 ? new SpecError(`${err.message} (line ${lines[0]})`) : err;
}

/**
 * A job from decoded HCL: hcl2json's output, or HCL's JSON syntax (`{"job": {"id": {...}}}`), whose
 * blocks are objects where hcl2json gives lists; Body reads both. `variable` and `locals` blocks
 * were evaluated by decodeHcl (hcl.ts) and are skipped here.
 */
export function jobFromDecoded(file: string, decoded: Record<string, unknown>, text: string): Job {
  const { variable: _variables, locals: _locals, ...rest } = decoded;
  const top = Body.of(file, "", rest);
  const jobs = top.labelled("job");
  top.finish();
  if (jobs.length !== 1) throw top.error(`expected exactly one job block, found ${jobs.length}`);
  const [id, body] = jobs[0]!;
  return jobFrom(id, body, text);
}

/** The job blocks berth keeps as given (Nomad's shapes) without acting on all they say. */
function keptJobBlocks(b: Body) {
  return {
    ...kept(b, "migrate", "Migrate", (m) => decodeKept(m, MIGRATE)),
    ...kept(b, "periodic", "Periodic", (p) => {
      const out = decodeKept(p, PERIODIC);
      // jobspec2 normalizeJob: a cron spec makes the spec type "cron".
      return out.Spec !== undefined || out.Specs !== undefined ? { ...out, SpecType: "cron" } : out;
    }),
    ...kept(b, "parameterized", "ParameterizedJob", (p) => decodeKept(p, PARAMETERIZED)),
    ...kept(b, "multiregion", "Multiregion", (m) => decodeKept(m, MULTIREGION)),
    ...kept(b, "ui", "UI", (u) => decodeKept(u, UI)),
  };
}

function jobFrom(id: string, b: Body, text: string): Job {
  const type = b.string("type") ?? "service";
  const defaults: TaskDefaults = {
    restart: defaultRestart(type),
    secrets: secretsFrom(b),
    ...optional("vault", vaultFrom(b)),
  };
  // Tasks written directly in the job become groups of their own, ahead of the job's groups.
  const lone = inSourceOrder(text, "task", b.labelled("task")).map(([name, t]): TaskGroup => ({
    Name: name,
    Count: 1,
    Volumes: {},
    Tasks: [taskFrom(name, t, defaults)],
    RestartPolicy: null,
  }));
  const job: Job = {
    ID: id,
    Name: b.string("name") ?? id,
    Namespace: b.string("namespace") ?? "default",
    Type: type,
    // The server's default too, so HCL and JSON jobspecs without datacenters agree.
    Datacenters: b.stringList("datacenters") ?? ["*"],
    Priority: b.integer("priority") ?? 50,
    Stop: false,
    Status: "pending",
    TaskGroups: [
      ...lone,
      ...inSourceOrder(text, "group", b.labelled("group")).map(([name, g]) =>
        groupFrom(name, g, defaults, text),
      ),
    ],
    ...rescheduleFrom(b, "Reschedule"),
    ...constraintsFrom(b),
    ...affinitiesFrom(b),
    ...spreadsFrom(b),
    ...updateFrom(b),
    ...optional("Region", b.string("region")),
    ...optional("NodePool", b.string("node_pool")),
    ...optional("AllAtOnce", b.bool("all_at_once")),
    ...optional("Meta", b.stringMap("meta")),
    ...keptJobBlocks(b),
    Version: 0,
    SubmitTime: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
  };
  // Secrets for Consul and Vault that older Nomad versions took in the jobspec: berth uses neither
  // and never stores them.
  b.string("consul_token");
  b.string("vault_token");
  b.finish();
  return job;
}

function groupFrom(name: string, b: Body, job: TaskDefaults, text: string): TaskGroup {
  const volumes: Record<string, VolumeRequest> = {};
  for (const [alias, v] of b.labelled("volume")) volumes[alias] = volumeFrom(alias, v);
  const restart = restartFrom(b.block("restart"), job.restart);
  const secrets = secretsFrom(b);
  const defaults: TaskDefaults = {
    restart: restart ?? job.restart,
    secrets: [...secrets, ...job.secrets],
    ...optional("vault", vaultFrom(b) ?? job.vault),
  };
  const group: TaskGroup = {
    Name: name,
    Count: b.integer("count") ?? 1,
    Volumes: volumes,
    Tasks: inSourceOrder(text, "task", b.labelled("task")).map(([t, tb]) => taskFrom(t, tb, defaults)),
    RestartPolicy: restart,
    ...rescheduleFrom(b, "ReschedulePolicy"),
    ...constraintsFrom(b),
    ...affinitiesFrom(b),
    ...spreadsFrom(b),
    ...updateFrom(b),
    ...optional("Meta", b.stringMap("meta")),
    ...optional("ShutdownDelay", b.duration("shutdown_delay")),
    ...optional("MaxRunDuration", b.duration("max_run_duration")),
    ...optional("StopAfterClientDisconnect", b.duration("stop_after_client_disconnect")),
    ...optional("MaxClientDisconnect", b.duration("max_client_disconnect")),
    ...optional("PreventRescheduleOnLost", b.bool("prevent_reschedule_on_lost")),
    ...kept(b, "ephemeral_disk", "EphemeralDisk", (e) => decodeKept(e, EPHEMERAL_DISK)),
    ...kept(b, "migrate", "Migrate", (m) => decodeKept(m, MIGRATE)),
    ...kept(b, "disconnect", "Disconnect", (d) => decodeKept(d, DISCONNECT)),
    ...kept(b, "consul", "Consul", (c) => decodeKept(c, CONSUL)),
    ...kept(b, "scaling", "Scaling", (s) => {
      const out = decodeKept(s, SCALING);
      return out.Type === undefined || out.Type === "" ? { ...out, Type: "horizontal" } : out;
    }),
  };
  const networks = b.blocks("network").map((n) => normalizePorts(decodeKept(n, NETWORK)));
  if (networks.length > 0) group.Networks = networks;
  const services = b.blocks("service").map((s) => decodeKept(s, SERVICE));
  if (services.length > 0) group.Services = services;
  b.finish();
  return group;
}

function optional<K extends string, V>(key: K, v: V | undefined): { [P in K]?: V } {
  return (v === undefined ? {} : { [key]: v }) as { [P in K]?: V };
}

/** `{[field]: decode(block)}` when `key`'s block is written, `{}` otherwise. */
function kept<F extends string>(
  b: Body,
  key: string,
  field: F,
  decode: (inner: Body) => Record<string, unknown>,
): { [P in F]?: Record<string, unknown> } {
  const inner = b.block(key);
  return optional(field, inner ? decode(inner) : undefined);
}

function volumeFrom(alias: string, b: Body): VolumeRequest {
  const mo = b.block("mount_options");
  const req: VolumeRequest = {
    Name: alias,
    Type: b.string("type") ?? "",
    Source: b.string("source") ?? "",
    ReadOnly: b.bool("read_only") ?? false,
    AccessMode: b.string("access_mode") ?? "",
    AttachmentMode: b.string("attachment_mode") ?? "",
    MountOptions: mo ? mountOptionsFrom(mo) : null,
    PerAlloc: b.bool("per_alloc") ?? false,
  };
  if (b.bool("sticky")) req.Sticky = true;
  const create = b.block("create");
  if (create) req.Create = volumeCreateFrom(create);
  b.finish();
  return req;
}

export function mountOptionsFrom(b: Body): {
  FSType: string;
  MountFlags: string[];
  MountGroup?: string;
  MountGroupPolicy?: string;
} {
  const mo: { FSType: string; MountFlags: string[]; MountGroup?: string; MountGroupPolicy?: string } = {
    FSType: b.string("fs_type") ?? "",
    MountFlags: b.stringList("mount_flags") ?? [],
  };
  // berth's (structs/mount_group.ts); the server validates them.
  const group = b.string("mount_group");
  if (group !== undefined) mo.MountGroup = group;
  const policy = b.string("mount_group_policy");
  if (policy !== undefined) mo.MountGroupPolicy = policy;
  b.finish();
  return mo;
}

/**
 * The decoder returns labelled blocks sorted by label; Nomad keeps groups and tasks in the order
 * written. Recover it from where each `kind "label"` first appears in the source.
 */
function inSourceOrder<T>(text: string, kind: string, entries: [string, T][]): [string, T][] {
  const pos = (label: string) => {
    const m = new RegExp(`\\b${kind}\\s+${escapeRegExp(JSON.stringify(label))}`).exec(text);
    return m ? m.index : Number.MAX_SAFE_INTEGER;
  };
  return [...entries].sort((a, b) => pos(a[0]) - pos(b[0]));
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
