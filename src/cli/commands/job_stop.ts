/** `berth job stop [-purge] <job>`: deregisters a job (named by a unique ID prefix too, as Nomad's); -purge also removes it from the state. */
import { expectArgs, parseCommandArgs } from "../flags.js";
import { attempt, type Command, type Parsed } from "../command.js";
import { jobIdByPrefix } from "../job_prefix.js";

export interface JobStopArgs extends Parsed {
  id: string;
  purge: boolean;
}

export const jobStop: Command<JobStopArgs> = {
  usage: "Usage: berth job stop [options] <job>",
  help: "Stops the job's allocations. -purge also removes the job, so it no longer shows in job status. -detach and -yes are accepted for Nomad compatibility.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      purge: { type: "boolean" },
      detach: { type: "boolean" },
      yes: { type: "boolean" },
    });
    expectArgs(positionals, 1, 1, "<job>");
    return { address: values.address, id: positionals[0]!, purge: values.purge ?? false };
  },
  run: (p, io) =>
    attempt(io, "deregistering job", async () => {
      const id = await jobIdByPrefix(io, p.id);
      const res = await io.api.jobs.deregister(id, { purge: p.purge });
      io.stdout(`Job ${JSON.stringify(id)} ${p.purge ? "stopped and purged" : "stopped"}`);
      if (res?.EvalID) io.stdout(`Evaluation ID: ${res.EvalID}`);
    }),
};
