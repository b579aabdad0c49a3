/**
 * Nomad's HCL jobspec → the API's Job. Covers the subset berth runs (groups, restart and reschedule
 * policies, CSI
 * volume requests, tasks with config/env/volume mounts/csi_plugin, attribute/operator/value
 * constraints at job, group and task level); anything else is rejected by
 * name. Semantics (IDs present, modes valid, mounts naming declared volumes) are the server's to
 * check; this only checks syntax and types, and fills Nomad's client-side defaults.
 */
import { Body } from "./body.js";
import { decodeHcl, type HclInputs } from "./hcl.js";
import type {
  Constraint,
  Job,
  ReschedulePolicy,
  RestartPolicy,
  Task,
  TaskCSIPluginConfig,
  TaskGroup,
  VolumeMount,
  VolumeRequest,
} from "../types.js";

const NS_PER_S = 1e9;

/** Nomad's defaults: a restart block fills the fields it leaves out from these, by job type. */
function defaultRestart(jobType: string): RestartPolicy {
  return jobType === "batch"
    ? { Attempts: 3, Interval: 24 * 3600 * NS_PER_S, Delay: 15 * NS_PER_S, Mode: "fail" }
    : { Attempts: 2, Interval: 30 * 60 * NS_PER_S, Delay: 15 * NS_PER_S, Mode: "fail" };
}

export async function parseJobHcl(file: string, text: string, inputs: HclInputs = {}): Promise<Job> {
  return jobFromDecoded(file, await decodeHcl(file, text, inputs), text);
}

/**
 * A job from decoded HCL: hcl2json's output, or HCL's JSON syntax (`{"job": {"id": {...}}}`), whose
 * blocks are objects where hcl2json gives lists; Body reads both.
 */
export function jobFromDecoded(file: string, decoded: Record<string, unknown>, text: string): Job {
  const top = Body.of(file, "", decoded);
  const jobs = top.labelled("job");
  top.finish();
  if (jobs.length !== 1) throw top.error(`expected exactly one job block, found ${jobs.length}`);
  const [id, body] = jobs[0]!;
  return jobFrom(id, body, text);
}

function jobFrom(id: string, b: Body, text: string): Job {
  const type = b.string("type") ?? "service";
  const job: Job = {
    ID: id,
    Name: b.string("name") ?? id,
    Namespace: b.string("namespace") ?? "default",
    Type: type,
    // The server's default too, so HCL and JSON jobspecs without datacenters agree.
    Datacenters: b.stringList("datacenters") ?? ["dc1"],
    Priority: b.integer("priority") ?? 50,
    Stop: false,
    Status: "pending",
    TaskGroups: inSourceOrder(text, "group", b.labelled("group")).map(([name, g]) =>
      groupFrom(name, g, type, text),
    ),
    ...rescheduleFrom(b, "Reschedule"),
    ...constraintsFrom(b),
    Version: 0,
    SubmitTime: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
  };
  b.finish();
  return job;
}

function groupFrom(name: string, b: Body, jobType: string, text: string): TaskGroup {
  const volumes: Record<string, VolumeRequest> = {};
  for (const [alias, v] of b.labelled("volume")) volumes[alias] = volumeFrom(alias, v);
  const restart = restartFrom(b.block("restart"), defaultRestart(jobType));
  const group: TaskGroup = {
    Name: name,
    Count: b.integer("count") ?? 1,
    Volumes: volumes,
    Tasks: inSourceOrder(text, "task", b.labelled("task")).map(([t, tb]) =>
      taskFrom(t, tb, restart ?? defaultRestart(jobType)),
    ),
    RestartPolicy: restart,
    ...rescheduleFrom(b, "ReschedulePolicy"),
    ...constraintsFrom(b),
  };
  b.finish();
  return group;
}

/** A task's block fills what it leaves out from its group's policy, a group's from the defaults. */
function restartFrom(b: Body | undefined, d: RestartPolicy): RestartPolicy | null {
  if (!b) return null;
  const policy: RestartPolicy = {
    Attempts: b.integer("attempts") ?? d.Attempts,
    Interval: b.duration("interval") ?? d.Interval,
    Delay: b.duration("delay") ?? d.Delay,
    Mode: b.string("mode") ?? d.Mode,
  };
  b.finish();
  return policy;
}

/**
 * A `reschedule { attempts, interval, delay, delay_function, max_delay, unlimited }` block as
 * Nomad's JSON, with only the fields written: the server merges it over the job's block and the
 * job type's defaults (Nomad's TaskGroup.Canonicalize), and validates the result.
 */
function rescheduleFrom<K extends "Reschedule" | "ReschedulePolicy">(
  parent: Body,
  key: K,
): { [P in K]?: ReschedulePolicy } {
  const b = parent.block("reschedule");
  if (!b) return {};
  const p: ReschedulePolicy = {};
  const attempts = b.integer("attempts");
  if (attempts !== undefined) p.Attempts = attempts;
  const interval = b.duration("interval");
  if (interval !== undefined) p.Interval = interval;
  const delay = b.duration("delay");
  if (delay !== undefined) p.Delay = delay;
  const fn = b.string("delay_function");
  if (fn !== undefined) p.DelayFunction = fn;
  const max = b.duration("max_delay");
  if (max !== undefined) p.MaxDelay = max;
  const unlimited = b.bool("unlimited");
  if (unlimited !== undefined) p.Unlimited = unlimited;
  b.finish();
  return { [key]: p } as { [P in K]?: ReschedulePolicy };
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
  b.finish();
  return req;
}

export function mountOptionsFrom(b: Body): { FSType: string; MountFlags: string[] } {
  const mo = { FSType: b.string("fs_type") ?? "", MountFlags: b.stringList("mount_flags") ?? [] };
  b.finish();
  return mo;
}

function taskFrom(name: string, b: Body, groupRestart: RestartPolicy): Task {
  const plugin = b.block("csi_plugin");
  const task: Task = {
    Name: name,
    Driver: b.string("driver") ?? "",
    Config: b.raw("config") ?? {},
    Env: b.stringMap("env") ?? {},
    VolumeMounts: b.blocks("volume_mount").map(volumeMountFrom),
    CSIPluginConfig: plugin ? pluginFrom(plugin) : null,
    KillTimeout: b.duration("kill_timeout") ?? 5 * NS_PER_S,
    RestartPolicy: restartFrom(b.block("restart"), groupRestart),
    ...constraintsFrom(b),
  };
  b.finish();
  return task;
}

/**
 * `constraint { attribute = "${node.unique.name}" operator = "=" value = "B" }` blocks, as Nomad
 * writes them (operator defaults to "="). Omitted entirely when there are none.
 */
function constraintsFrom(b: Body): { Constraints?: Constraint[] } {
  const blocks = b.blocks("constraint");
  if (blocks.length === 0) return {};
  return {
    Constraints: blocks.map((c) => {
      const out: Constraint = {
        LTarget: c.string("attribute") ?? "",
        RTarget: c.string("value") ?? "",
        Operand: c.string("operator") ?? "=",
      };
      c.finish();
      return out;
    }),
  };
}

function volumeMountFrom(b: Body): VolumeMount {
  const m: VolumeMount = {
    Volume: b.string("volume") ?? "",
    Destination: b.string("destination") ?? "",
    ReadOnly: b.bool("read_only") ?? false,
    PropagationMode: b.string("propagation_mode") ?? "private",
  };
  b.finish();
  return m;
}

function pluginFrom(b: Body): TaskCSIPluginConfig {
  const p: TaskCSIPluginConfig = {
    ID: b.string("id") ?? "",
    Type: b.string("type") ?? "",
    MountDir: b.string("mount_dir") ?? "",
    StagePublishBaseDir: b.string("stage_publish_base_dir") ?? "",
    HealthTimeout: b.duration("health_timeout") ?? 30 * NS_PER_S,
  };
  b.finish();
  return p;
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
