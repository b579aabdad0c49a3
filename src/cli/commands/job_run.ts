/**
 * `berth job run [options] <path>`: parses a jobspec (HCL or JSON; `-var`, `-var-file` and
 * NOMAD_VAR_* fill its variables), registers it and, as Nomad does, monitors the evaluation and
 * its deployment until they finish (`-detach` prints the evaluation ID and returns at once;
 * `-output` prints the API's JSON instead of submitting; `-json` reads the file as that JSON).
 */
import { attempt, fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { json } from "../format.js";
import {
  jobOptionsProblem,
  JOB_FILE_FLAGS,
  jobFileArgs,
  readJobFile,
  type JobFileArgs,
} from "../job_file.js";
import { monitorEvaluation, rfc3339Local } from "../monitor.js";

export interface JobRunArgs extends Parsed, JobFileArgs {
  detach: boolean;
  verbose: boolean;
  output: boolean;
  /** `-check-index N`: run only if the registered job's JobModifyIndex is N (0: only a new job). */
  checkIndex: number | undefined;
}

/** Go's time.Duration String for whole seconds ("59s", "1m0s", "23h59m0s"). */
export function goSeconds(total: number): string {
  const sign = total < 0 ? "-" : "";
  let s = Math.abs(Math.trunc(total));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

/**
 * Nomad's line after registering a periodic job: the next launch as Nomad's formatTime writes it
 * (RFC 3339 in the job's zone, as the server answered it) and the whole seconds until then.
 */
export function approximateNextLaunch(next: string, nowMs: number): string {
  const secs = Math.floor(Date.parse(next) / 1000) - Math.floor(nowMs / 1000);
  return `Approximate next launch time: ${next} (${goSeconds(secs)} from now)`;
}

export const jobRun: Command<JobRunArgs> = {
  usage: "Usage: berth job run [options] <path>",
  help:
    "Registers the job in <path> (HCL or JSON; - reads stdin) and monitors its evaluation and deployment " +
    "until they finish. -detach returns after registering, printing the evaluation ID; -verbose shows full " +
    "IDs; -var 'name=value' and -var-file=<file> set the jobspec's variables (NOMAD_VAR_<name> too); " +
    "-output prints the job as the API's JSON without submitting it; -json reads <path> as that JSON " +
    '(the job, or {"Job": {...}}); -check-index N (from `job plan`) ' +
    "registers only if the job has not changed since. Exit code 2: some allocations could " +
    "not be placed.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      detach: { type: "boolean" },
      verbose: { type: "boolean" },
      output: { type: "boolean" },
      "check-index": { type: "string" },
      ...JOB_FILE_FLAGS,
    });
    expectArgs(positionals, 1, 1, "<path>");
    const ci = values["check-index"];
    if (ci !== undefined && !/^\d+$/.test(ci))
      throw new UsageError("-check-index must be a non-negative integer");
    return {
      address: values.address,
      ...jobFileArgs(positionals[0]!, values),
      detach: values.detach ?? false,
      verbose: values.verbose ?? false,
      output: values.output ?? false,
      checkIndex: ci === undefined ? undefined : Number(ci),
    };
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
      return fail(io, `parsing job file ${p.file}`, err);
    }
    if (p.output) {
      io.stdout(json({ Job: job }));
      return 0;
    }
    let evalId = "";
    let nextLaunch: string | undefined;
    const submitted = await attempt(io, "submitting job", async () => {
      const res = await io.api.jobs.register(
        job,
        p.checkIndex === undefined ? {} : { checkIndex: p.checkIndex },
      );
      if (res.Warnings) {
        io.stdout("Job Warnings:");
        io.stdout(res.Warnings);
        io.stdout("");
      }
      evalId = res.EvalID;
      nextLaunch = res.NextPeriodicLaunch;
    });
    if (submitted !== 0) return submitted;
    // Nomad: a job with no evaluation (periodic, parameterized) or -detach ends here.
    if (p.detach || !evalId) {
      io.stdout("Job registration successful");
      if (nextLaunch) io.stdout(approximateNextLaunch(nextLaunch, io.now()));
      else if (evalId) io.stdout(`Evaluation ID: ${evalId}`);
      return 0;
    }
    return monitorEvaluation(evalId, {
      io,
      verbose: p.verbose,
      sleep: (ms) => (io.sleep ? io.sleep(ms) : new Promise((r) => setTimeout(r, ms))),
      formatTime: rfc3339Local,
      getDeployment: (id) => io.api.deployments.info(id),
      jobEvaluations: (jobId) => io.api.jobs.evaluations(jobId),
    });
  },
};
