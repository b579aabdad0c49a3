/**
 * `berth job plan [options] <path>`: the scheduler's dry run of a jobspec (what would be placed,
 * stopped, updated), with the diff against the registered job, as Nomad's: exit 0 when nothing
 * would change allocations, 1 when something would, 255 on error.
 */
import { parseJobSpec } from "../../api/index.js";
import { type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { describeError } from "../format.js";
import { dryRunLines, jobDiffLines, planExitCode } from "../plan_format.js";
import { hclInputs, VARIABLE_FLAGS } from "./job_run.js";

export interface JobPlanArgs extends Parsed {
  file: string;
  diff: boolean;
  verbose: boolean;
  vars: string[];
  varFiles: string[];
}

export const jobPlan: Command<JobPlanArgs> = {
  usage: "Usage: berth job plan [options] <path>",
  help: "Shows what submitting the job in <path> would do: the diff against the registered job and the scheduler's dry run (placements, failures, warnings), changing nothing. Exit code 0: no allocation would be created or destroyed; 1: some would; 255: error. -diff=false leaves out the diff; -verbose expands added and removed groups and tasks; -var/-var-file set variables.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      diff: { type: "string" },
      verbose: { type: "boolean" },
      ...VARIABLE_FLAGS,
    });
    expectArgs(positionals, 1, 1, "<path>");
    return {
      address: values.address,
      file: positionals[0]!,
      diff: values.diff !== "false",
      verbose: values.verbose ?? false,
      vars: values.var ?? [],
      varFiles: values["var-file"] ?? [],
    };
  },
  async run(p, io) {
    let job;
    try {
      job = await parseJobSpec(p.file, await io.readFile(p.file), await hclInputs(io, p.vars, p.varFiles));
    } catch (err) {
      io.stderr(`Error getting job struct: ${describeError(err)}`);
      return 255;
    }
    let res;
    try {
      res = await io.api.jobs.plan(job, { diff: p.diff });
    } catch (err) {
      io.stderr(`Error during plan: ${describeError(err)}`);
      return 255;
    }
    if (p.diff && res.Diff) {
      jobDiffLines(res.Diff, p.verbose).forEach((l) => io.stdout(l));
      io.stdout("");
    }
    io.stdout("Scheduler dry-run:");
    dryRunLines(res, job.Type).forEach((l) => io.stdout(l));
    io.stdout("");
    if (res.Warnings) {
      io.stdout("Job Warnings:");
      io.stdout(res.Warnings);
      io.stdout("");
    }
    io.stdout(`Job Modify Index: ${res.JobModifyIndex}`);
    io.stdout("To submit the job with version verification run:");
    io.stdout("");
    io.stdout(`berth job run -check-index ${res.JobModifyIndex} ${p.file}`);
    io.stdout("");
    io.stdout("When running the job with the check-index flag, the job will only be run if the");
    io.stdout("job modify index given matches the server-side version. If the index has");
    io.stdout("changed, another user has modified the job and the plan's results are");
    io.stdout("potentially invalid.");
    return planExitCode(res);
  },
};
