/**
 * `berth job inspect [options] <job>`: the job as the API holds it, `{"Job": {...}}` indented as
 * Nomad prints it, so it can be edited and submitted again (`job run` reads that JSON). A unique
 * prefix of the ID works.
 */
import { fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { jobIdByPrefix } from "../job_prefix.js";

export interface JobInspectArgs extends Parsed {
  id: string;
}

export const jobInspect: Command<JobInspectArgs> = {
  usage: "Usage: berth job inspect [options] <job>",
  help: 'Prints the registered job as JSON ({"Job": {...}}), including the stanzas berth keeps but does not act on; the output can be submitted again with `berth job run`.',
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {});
    expectArgs(positionals, 1, 1, "<job>");
    return { address: values.address, id: positionals[0]! };
  },
  async run(p, io) {
    let job;
    try {
      job = await io.api.jobs.info(await jobIdByPrefix(io, p.id));
    } catch (err) {
      return fail(io, "inspecting job", err);
    }
    io.stdout(JSON.stringify({ Job: job }, null, 4));
    return 0;
  },
};
