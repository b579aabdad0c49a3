/**
 * `berth job inspect [options] <job>`: the job as the API holds it, `{"Job": {...}}` indented as
 * Nomad prints it, so it can be edited and submitted again (`job run` reads that JSON). `-json`
 * prints the job itself and `-t` runs a Go template over it, as Nomad's. A unique prefix of the ID
 * works.
 */
import { fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { jobIdByPrefix } from "../job_prefix.js";
import { maybeFormatted, OUTPUT_FLAGS, outputArgs, refuseBoth, type OutputArgs } from "../output_format.js";

export interface JobInspectArgs extends Parsed, OutputArgs {
  id: string;
}

export const jobInspect: Command<JobInspectArgs> = {
  usage: "Usage: berth job inspect [options] <job>",
  help: 'Prints the registered job as JSON ({"Job": {...}}), including the stanzas berth keeps but does not act on; the output can be submitted again with `berth job run`.',
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, OUTPUT_FLAGS);
    expectArgs(positionals, 1, 1, "<job>");
    return { address: values.address, id: positionals[0]!, ...outputArgs(values) };
  },
  async run(p, io) {
    const refused = refuseBoth(io, p);
    if (refused !== undefined) return refused;
    let job;
    try {
      job = await io.api.jobs.info(await jobIdByPrefix(io, p.id));
    } catch (err) {
      return fail(io, "inspecting job", err);
    }
    const done = maybeFormatted(io, p, job);
    if (done !== undefined) return done;
    io.stdout(JSON.stringify({ Job: job }, null, 4));
    return 0;
  },
};
