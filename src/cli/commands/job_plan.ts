/**
 * `berth job plan [options] <path>`: the scheduler's dry run of a jobspec (what would be placed,
 * stopped, updated), with the diff against the registered job, as Nomad's: exit 0 when nothing
 * would change allocations, 1 when something would, 255 on error. `-json-output` prints the plan
 * response as JSON and `-t` a Go template over it instead of the text (exit codes unchanged);
 * `-json` is the input flag: the file is the API's JSON job.
 */
import { type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { describeError } from "../format.js";
import {
  jobOptionsProblem,
  JOB_FILE_FLAGS,
  jobFileArgs,
  readJobFile,
  type JobFileArgs,
} from "../job_file.js";
import { formatted, printFormatted } from "../output_format.js";
import { createdVolumeLines, dryRunLines, jobDiffLines, planExitCode } from "../plan_format.js";

export interface JobPlanArgs extends Parsed, JobFileArgs {
  diff: boolean;
  verbose: boolean;
  /** `-json-output`: the plan response as JSON. */
  jsonOutput: boolean;
  /** `-t`: a Go template over the plan response. */
  template: string | undefined;
}

export const jobPlan: Command<JobPlanArgs> = {
  usage: "Usage: berth job plan [options] <path>",
  help: "Shows what submitting the job in <path> would do: the diff against the registered job and the scheduler's dry run (placements, failures, warnings), changing nothing. Exit code 0: no allocation would be created or destroyed; 1: some would; 255: error. -diff=false leaves out the diff; -verbose expands added and removed groups and tasks; -var/-var-file set variables; -json reads <path> as the API's JSON job. -json-output prints the plan response as JSON, -t formats it with a Go template (same exit codes).",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      diff: { type: "string" },
      verbose: { type: "boolean" },
      "json-output": { type: "boolean" },
      t: { type: "string" },
      ...JOB_FILE_FLAGS,
    });
    expectArgs(positionals, 1, 1, "<path>");
    return {
      address: values.address,
      ...jobFileArgs(positionals[0]!, values),
      diff: values.diff !== "false",
      verbose: values.verbose ?? false,
      jsonOutput: values["json-output"] ?? false,
      template: values.t,
    };
  },
  async run(p, io) {
    // Nomad: -json already names the input, so the output flags are -json-output and -t.
    const output = { json: p.jsonOutput, template: p.template };
    if (p.jsonOutput && (p.template ?? "") !== "") {
      io.stderr("Both -json-output and -t formatting are not allowed");
      return 255;
    }
    const problem = jobOptionsProblem(p);
    if (problem !== undefined) {
      io.stderr(`Invalid job options: ${problem}`);
      return 255;
    }
    let job;
    try {
      job = await readJobFile(io, p);
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
    // Machine-readable output replaces the text and its check-index advice.
    if (formatted(output)) {
      const code = printFormatted(io, output, res, 255);
      return code !== 0 ? code : planExitCode(res);
    }
    if (p.diff && res.Diff) {
      jobDiffLines(res.Diff, p.verbose).forEach((l) => io.stdout(l));
      io.stdout("");
    }
    io.stdout("Scheduler dry-run:");
    dryRunLines(res, job.Type).forEach((l) => io.stdout(l));
    createdVolumeLines(res).forEach((l) => io.stdout(l));
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
