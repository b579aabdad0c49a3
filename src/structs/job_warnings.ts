/**
 * The warnings a job's registration answers with (`JobRegisterResponse.Warnings`, and `job plan`):
 * one line for each stanza berth keeps but does not act on that the job sets, so an operator bringing
 * a Nomad jobspec learns what will not happen instead of finding out in production. Joined as
 * Nomad joins register warnings (helper.MergeMultierrorWarnings): "N warnings:\n\n* a\n* b".
 * Pure; reads the validated Job.
 */
import type { Job, Task, TaskGroup } from "./job.js";
import type { KeptStanza } from "./job_stanzas.js";

const KEPT = "the stanza is kept and ignored";

/** What berth does not do, per stanza, in the warning's words. */
const JOB_STANZAS: [keyof Job, string, string][] = [
  ["Multiregion", "multiregion", "berth does not deploy across regions"],
  ["Migrate", "migrate", "berth does not apply migrate strategies to drains"],
  ["UI", "ui", "berth's UI does not show job descriptions or links"],
];

const GROUP_STANZAS: [keyof TaskGroup, string, string][] = [
  ["EphemeralDisk", "ephemeral_disk", "berth does not size or migrate ephemeral disks"],
  ["Migrate", "migrate", "berth does not apply migrate strategies to drains"],
  ["Scaling", "scaling", "berth does not autoscale task groups"],
  ["Consul", "consul", "berth does not integrate with Consul"],
  ["MaxRunDuration", "max_run_duration", "berth does not stop allocations after a maximum run time"],
  ["PreventRescheduleOnLost", "prevent_reschedule_on_lost", "berth always replaces lost allocs"],
];

const TASK_STANZAS: [keyof Task, string, string][] = [
  ["Vault", "vault", "berth does not fetch Vault tokens"],
  ["Consul", "consul", "berth does not integrate with Consul"],
  ["Artifacts", "artifact", "berth does not download artifacts"],
  ["Identity", "identity", "berth does not issue workload identities"],
  ["Identities", "identity", "berth does not issue workload identities"],
  ["ScalingPolicies", "scaling", "berth does not autoscale tasks"],
  ["Secrets", "secret", "berth does not fetch secrets"],
  ["Actions", "action", "berth does not run task actions"],
  ["Schedule", "schedule", "berth does not run tasks on a time schedule"],
];

function isSet(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === "") return false;
  return !Array.isArray(v) || v.length > 0;
}

/** `service "api"` when the kept object has a name, `service` otherwise. */
function named(stanza: string, o: KeptStanza): string {
  const name = o.Name ?? o.Label;
  return typeof name === "string" && name !== "" ? `${stanza} ${JSON.stringify(name)}` : stanza;
}

function each(where: string, stanza: string, v: unknown, why: string, out: string[]): void {
  if (!isSet(v)) return;
  const items = Array.isArray(v) ? (v as KeptStanza[]) : [v as KeptStanza];
  const seen = new Set<string>();
  for (const o of items) {
    const label = typeof o === "object" ? named(stanza, o) : stanza;
    if (seen.has(label)) continue;
    seen.add(label);
    out.push(`${where} ${label}: ${why}; ${KEPT}`);
  }
}

/** Every warning for `job`, in job → group → task order. */
export function jobWarningList(job: Job): string[] {
  const out: string[] = [];
  const jw = `Job ${JSON.stringify(job.ID)}`;
  for (const [k, stanza, why] of JOB_STANZAS) each(jw, stanza, job[k], why, out);
  for (const g of job.TaskGroups) {
    const gw = `Task group ${JSON.stringify(g.Name)}`;
    each(gw, "service", g.Services, "berth does not register services", out);
    each(gw, "network", g.Networks, "berth does not set up group networks or allocate ports", out);
    for (const [k, stanza, why] of GROUP_STANZAS) each(gw, stanza, g[k], why, out);
    for (const v of Object.values(g.Volumes)) {
      if (v.Sticky)
        out.push(
          `${gw} volume ${JSON.stringify(v.Name)}: berth does not keep sticky host volumes; sticky is kept and ignored`,
        );
    }
    for (const t of g.Tasks)
      taskWarnings(`Task ${JSON.stringify(t.Name)} in group ${JSON.stringify(g.Name)}`, t, out);
  }
  return out;
}

function taskWarnings(tw: string, t: Task, out: string[]): void {
  each(tw, "service", t.Services, "berth does not register services", out);
  for (const [k, stanza, why] of TASK_STANZAS) each(tw, stanza, t[k], why, out);
  const r = t.Resources;
  if (r) {
    each(tw, "resources network", r.Networks, "berth does not allocate ports or bandwidth", out);
    each(tw, "resources device", r.Devices, "berth does not schedule devices", out);
    each(tw, "resources numa", r.NUMA, "berth does not place tasks by NUMA topology", out);
  }
  for (const tmpl of t.Templates ?? []) {
    const where = `template ${JSON.stringify(tmpl.DestPath)}`;
    each(tw, `${where} wait`, tmpl.Wait, "berth renders templates once, without quiescence timers", out);
  }
  for (const m of t.VolumeMounts) {
    if (m.SELinuxLabel)
      out.push(
        `${tw} volume_mount ${JSON.stringify(m.Volume)}: berth does not relabel mounts for SELinux; selinux_label is kept and ignored`,
      );
  }
}

/** Nomad's format for register warnings; "" when there are none. */
export function formatWarnings(list: readonly string[]): string {
  if (list.length === 0) return "";
  const head = list.length === 1 ? "1 warning:\n" : `${list.length} warnings:\n`;
  return head + list.map((w) => `\n* ${w.trim()}`).join("");
}
