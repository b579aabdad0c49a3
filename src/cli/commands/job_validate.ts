/**
 * `berth job validate [options] <path>`: parses the jobspec (with `-var`, `-var-file` and
 * NOMAD_VAR_*) and asks the server to validate it, registering nothing; Nomad's output and exit
 * codes (0 valid, 1 invalid or unreadable).
 */
import { fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import {
  jobOptionsProblem,
  JOB_FILE_FLAGS,
  jobFileArgs,
  readJobFile,
  type JobFileArgs,
} from "../job_file.js";

export type JobValidateArgs = Parsed & JobFileArgs;

export const jobValidate: Command<JobValidateArgs> = {
  usage: "Usage: berth job validate [options] <path>",
  help: "Checks the job in <path> (HCL or JSON; - reads stdin) for syntax errors and validation problems without registering it. -var 'name=value' and -var-file=<file> set its variables; -json reads <path> as the API's JSON job (the job, or {\"Job\": {...}}).",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, JOB_FILE_FLAGS);
    expectArgs(positionals, 1, 1, "<path>");
    return { address: values.address, ...jobFileArgs(positionals[0]!, values) };
  },
  async run(p, io) {
    const problem = jobOptionsProblem(p);
    if (problem !== undefined) {
      io.stderr(`Invalid job options: ${problem}`);
      return 1;
    }
    let job;
    try {
      job = await readJobFile(io, p);
    } catch (err) {
      return fail(io, "getting job struct", err);
    }
    let res;
    try {
      res = await io.api.jobs.validate(job);
    } catch (err) {
      return fail(io, "validating job", err);
    }
    if (res.Error || (res.ValidationErrors ?? []).length > 0) {
      io.stderr("Job validation errors:");
      io.stderr(res.Error || (res.ValidationErrors ?? []).join("\n"));
      return 1;
    }
    if (res.Warnings) {
      io.stdout("Job Warnings:");
      io.stdout(res.Warnings);
      io.stdout("");
    }
    io.stdout("Job validation successful");
    return 0;
  },
};
