/**
 * `job status` of a periodic or parameterized parent, as Nomad's: whether it is one, its next
 * launch, the "Parameterized Job" block, and its children ("Children Job Summary" /
 * "Parameterized Job Summary", then "Previously Launched Jobs" / "Dispatched Jobs").
 */
import type { Job, JobListStub } from "../api/index.js";
import { kv, table } from "./format.js";

/** The children of `job` among `jobs` (a `<id>/` prefix listing), newest first. */
export function childrenOf(job: Job, jobs: readonly JobListStub[]): JobListStub[] {
  return jobs
    .filter((j) => j.ParentID === job.ID)
    .sort((a, b) => b.SubmitTime - a.SubmitTime || b.ID.localeCompare(a.ID));
}

const isPeriodic = (job: Job) => job.Periodic != null && job.Dispatched !== true;
const isParameterized = (job: Job) => job.ParameterizedJob != null && job.Dispatched !== true;

/** A periodic or parameterized job that launches children (not a dispatched child itself). */
export function isLaunchParent(job: Job): boolean {
  return isPeriodic(job) || isParameterized(job);
}

/** The lines added to the job's key/value block. */
export function parentInfo(job: Job): [string, string][] {
  if (!isPeriodic(job) && !isParameterized(job)) return [];
  return [
    ["Periodic", String(isPeriodic(job))],
    ["Parameterized", String(isParameterized(job))],
  ];
}

function list(v: unknown): string {
  return Array.isArray(v) ? v.join(",") : "";
}

/** The parent's sections; none for other jobs. */
export function childrenSections(job: Job, children: readonly JobListStub[]): string[] {
  if (!isPeriodic(job) && !isParameterized(job)) return [];
  const out: string[] = [];
  const p = job.ParameterizedJob;
  if (p && isParameterized(job)) {
    out.push(
      "",
      "Parameterized Job",
      ...kv([
        ["Payload", typeof p.Payload === "string" && p.Payload !== "" ? p.Payload : "optional"],
        ["Required Metadata", list(p.MetaRequired)],
        ["Optional Metadata", list(p.MetaOptional)],
      ]),
    );
  }
  const count = (s: string) => String(children.filter((c) => c.Status === s).length);
  out.push(
    "",
    isParameterized(job) ? "Parameterized Job Summary" : "Children Job Summary",
    ...table([
      ["Pending", "Running", "Dead"],
      [count("pending"), count("running"), count("dead")],
    ]),
    "",
    isParameterized(job) ? "Dispatched Jobs" : "Previously Launched Jobs",
  );
  if (children.length === 0) out.push(`No ${isParameterized(job) ? "dispatched" : "launched"} jobs`);
  else out.push(...table([["ID", "Status"], ...children.map((c) => [c.ID, c.Status])]));
  return out;
}
