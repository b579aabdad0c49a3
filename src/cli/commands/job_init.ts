/**
 * `berth job init [-short] [<file>]`: writes an example jobspec (example.nomad.hcl, as Nomad's
 * default name) into the current directory; never overwrites.
 */
import { type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { EXAMPLE_JOB, EXAMPLE_JOB_SHORT } from "../templates/example_job.js";
import { writeExample } from "./write_example.js";

export interface JobInitArgs extends Parsed {
  file: string;
  short: boolean;
}

export const DEFAULT_JOB_FILE = "example.nomad.hcl";

export const jobInit: Command<JobInitArgs> = {
  usage: "Usage: berth job init [options] [<filename>]",
  help: `Writes an example job to <filename> (default ${DEFAULT_JOB_FILE}) in the current directory; an existing file is never overwritten. -short leaves out the comments.`,
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, { short: { type: "boolean" } });
    expectArgs(positionals, 0, 1, "[<filename>]");
    return {
      address: values.address,
      file: positionals[0] ?? DEFAULT_JOB_FILE,
      short: values.short ?? false,
    };
  },
  run: (p, io) =>
    writeExample(io, p.file, p.short ? EXAMPLE_JOB_SHORT : EXAMPLE_JOB, {
      exists: `Job '${p.file}' already exists`,
      written: `Example job file written to ${p.file}`,
    }),
};
