/** `berth job run [-detach] <path>`: parses a jobspec (HCL or JSON) and registers it. */
import { parseJobSpec } from "../../api/index.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { submitSpec, type Command, type Parsed } from "../command.js";

export interface JobRunArgs extends Parsed {
  file: string;
  detach: boolean;
}

export const jobRun: Command<JobRunArgs> = {
  usage: "Usage: berth job run [options] <path>",
  help: "Registers the job in <path> (HCL or JSON; - reads stdin) and prints its evaluation ID. -detach is accepted for Nomad compatibility: berth does not monitor the evaluation.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, { detach: { type: "boolean" } });
    expectArgs(positionals, 1, 1, "<path>");
    return { address: values.address, file: positionals[0]!, detach: values.detach ?? false };
  },
  run: (p, io) =>
    submitSpec(io, {
      file: p.file,
      kind: "job",
      parse: parseJobSpec,
      doing: "submitting job",
      submit: async (job) => {
        const res = await io.api.registerJob(job);
        if (res.Warnings) {
          io.stdout("Job Warnings:");
          io.stdout(res.Warnings);
          io.stdout("");
        }
        io.stdout("Job registration successful");
        if (res.EvalID) io.stdout(`Evaluation ID: ${res.EvalID}`);
      },
    }),
};
