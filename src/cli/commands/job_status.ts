/** `berth job status [<job>]`: all jobs, or one job with its per-group summary and allocations. */
import type { AllocationListStub, Job } from "../../api/index.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { fail, type Command, type Parsed } from "../command.js";
import { formatTimeNs, json, kv, table } from "../format.js";
import { allocationsSection } from "../allocs.js";
import type { CommandIO } from "../io.js";

export interface JobStatusArgs extends Parsed {
  id: string | undefined;
  json: boolean;
  verbose: boolean;
}

export const jobStatus: Command<JobStatusArgs> = {
  usage: "Usage: berth job status [options] [<job>]",
  help: "Lists jobs, or shows one job with its allocations. -json prints the API's JSON; -verbose shows full IDs.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      json: { type: "boolean" },
      verbose: { type: "boolean" },
    });
    expectArgs(positionals, 0, 1, "[<job>]");
    return {
      address: values.address,
      id: positionals[0],
      json: values.json ?? false,
      verbose: values.verbose ?? false,
    };
  },
  async run(p: JobStatusArgs, io: CommandIO) {
    return p.id === undefined ? list(p, io) : one(p.id, p, io);
  },
};

async function list(p: JobStatusArgs, io: CommandIO): Promise<number> {
  let jobs;
  try {
    jobs = await io.api.listJobs();
  } catch (err) {
    return fail(io, "querying jobs", err);
  }
  if (p.json) {
    io.stdout(json(jobs));
    return 0;
  }
  if (jobs.length === 0) {
    io.stdout("No running jobs");
    return 0;
  }
  const rows = [["ID", "Type", "Priority", "Status", "Submit Date"]];
  for (const j of jobs) rows.push([j.ID, j.Type, String(j.Priority), j.Status, formatTimeNs(j.SubmitTime)]);
  table(rows).forEach((l) => io.stdout(l));
  return 0;
}

async function one(id: string, p: JobStatusArgs, io: CommandIO): Promise<number> {
  let job: Job;
  let allocs: AllocationListStub[];
  try {
    [job, allocs] = await Promise.all([io.api.getJob(id), io.api.jobAllocations(id)]);
  } catch (err) {
    return fail(io, "querying job", err);
  }
  if (p.json) {
    io.stdout(json(job));
    return 0;
  }
  const lines = kv([
    ["ID", job.ID],
    ["Name", job.Name],
    ["Submit Date", formatTimeNs(job.SubmitTime)],
    ["Type", job.Type],
    ["Priority", String(job.Priority)],
    ["Datacenters", job.Datacenters.join(",")],
    ["Namespace", job.Namespace],
    ["Status", job.Stop ? "dead (stopped)" : job.Status],
  ]);
  lines.push("", ...summary(job, allocs), "", ...allocationsSection(allocs, p.verbose, io.now()));
  lines.forEach((l) => io.stdout(l));
  return 0;
}

const SUMMARY_COLUMNS = ["pending", "running", "failed", "complete", "lost"] as const;

/** Nomad's "Summary": per task group, how many allocs are in each client status. */
function summary(job: Job, allocs: AllocationListStub[]): string[] {
  const rows = [["Task Group", "Starting", "Running", "Failed", "Complete", "Lost"]];
  for (const g of job.TaskGroups) {
    const mine = allocs.filter((a) => a.TaskGroup === g.Name);
    rows.push([
      g.Name,
      ...SUMMARY_COLUMNS.map((s) => String(mine.filter((a) => a.ClientStatus === s).length)),
    ]);
  }
  return ["Summary", ...table(rows)];
}
