/**
 * `berth job validate [options] <path>`: parses the jobspec (with `-var`, `-var-file` and
 * NOMAD_VAR_*) and asks the server to validate it, registering nothing; Nomad's output and exit
 * codes (0 valid, 1 invalid or unreadable).
 */
import { parseJobSpec } from "../../api/index.js";
import { fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { hclInputs, VARIABLE_FLAGS } from "./job_run.js";

export interface JobValidateArgs extends Parsed {
  file: string;
  vars: string[];
  varFiles: string[];
}

export const jobValidate: Command<JobValidateArgs> = {
  usage: "Usage: berth job validate [options] <path>",
  help: "Checks the job in <path> (HCL or JSON; - reads stdin) for syntax errors and validation problems without registering it. -var 'name=value' and -var-file=<file> set its variables.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, VARIABLE_FLAGS);
    expectArgs(positionals, 1, 1, "<path>");
    return {
      address: values.address,
      file: positionals[0]!,
      vars: values.var ?? [],
      varFiles: values["var-file"] ?? [],
    };
  },
  async run(p, io) {
    let job;
    try {
      job = await parseJobSpec(p.file, await io.readFile(p.file), await hclInputs(io, p.vars, p.varFiles));
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
