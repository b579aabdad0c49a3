/**
 * `berth job status [<job>]`: all jobs, or one job with its per-group summary, why allocs found no
 * node (Nomad's "Placement Failure", while the job has a blocked eval), when failed allocs are
 * rescheduled (Nomad's "Future Rescheduling Attempts") and its allocations.
 */
import type { AllocationListStub, Job } from "../../api/index.js";
import { formatTimeNs, kv, table } from "../format.js";
import { allocationsSection } from "../allocs.js";
import { evaluationsSection, placementFailureSection } from "../evals.js";
import { reschedulingSection } from "../reschedule_info.js";
import { statusCommand, type StatusArgs } from "../status.js";
import { jobIdByPrefix } from "../job_prefix.js";
import { childrenOf, childrenSections, isLaunchParent, parentInfo } from "../job_children.js";

export type JobStatusArgs = StatusArgs;

export const jobStatus = statusCommand({
  usage: "Usage: berth job status [options] [<job>]",
  help: "Lists jobs, or shows one job with its allocations and, while some of them wait for a node, why (Placement Failure), and when failed allocs are rescheduled (Future Rescheduling Attempts). -json prints the API's JSON, -t formats it with a Go template; -verbose shows full IDs and the job's evaluations.",
  what: "[<job>]",
  list: {
    doing: "querying jobs",
    fetch: (io) => io.api.jobs.list(),
    empty: "No running jobs",
    columns: ["ID", "Type", "Priority", "Status", "Submit Date"],
    row: (j) => [j.ID, j.Type, String(j.Priority), j.Status, formatTimeNs(j.SubmitTime)],
  },
  one: {
    doing: "querying job",
    fetch: async (prefix, io) => {
      const id = await jobIdByPrefix(io, prefix);
      const [job, allocs, evals] = await Promise.all([
        io.api.jobs.info(id),
        io.api.jobs.allocations(id),
        io.api.jobs.evaluations(id),
      ]);
      // Only a periodic or parameterized parent has children to list.
      const under = isLaunchParent(job) ? await io.api.jobs.list({ prefix: `${id}/` }) : [];
      return [job, allocs, evals, under] as const;
    },
    json: ([job]) => job,
    render: ([job, allocs, evals, under], p, io) => [
      ...kv([
        ["ID", job.ID],
        ["Name", job.Name],
        ["Submit Date", formatTimeNs(job.SubmitTime)],
        ["Type", job.Type],
        ["Priority", String(job.Priority)],
        ["Datacenters", job.Datacenters.join(",")],
        ["Namespace", job.Namespace],
        ["Status", job.Stop ? "dead (stopped)" : job.Status],
        ...parentInfo(job),
      ]),
      ...childrenSections(job, childrenOf(job, under)),
      "",
      ...summary(job, allocs),
      ...(p.verbose ? evaluationsSection(evals, true) : []),
      ...placementFailureSection(evals),
      ...reschedulingSection(job, allocs, evals, p.verbose, io.now()),
      "",
      ...allocationsSection(allocs, p.verbose, io.now()),
    ],
  },
});

const SUMMARY_COLUMNS = ["pending", "running", "failed", "complete", "lost", "unknown"] as const;

/** Nomad's "Summary": per task group, how many allocs are in each client status. */
function summary(job: Job, allocs: AllocationListStub[]): string[] {
  const rows = [["Task Group", "Starting", "Running", "Failed", "Complete", "Lost", "Unknown"]];
  for (const g of job.TaskGroups) {
    const mine = allocs.filter((a) => a.TaskGroup === g.Name);
    rows.push([
      g.Name,
      ...SUMMARY_COLUMNS.map((s) => String(mine.filter((a) => a.ClientStatus === s).length)),
    ]);
  }
  return ["Summary", ...table(rows)];
}
