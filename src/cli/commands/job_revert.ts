/**
 * `berth job revert [options] <job> <version>`, as Nomad's: registers kept version <version> of the
 * job again as its next version, then monitors the evaluation (`-detach` prints its ID, `-verbose`
 * full IDs). A unique prefix of the job ID works. berth keeps no version tags, so <version> is a
 * number.
 */
import { fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { getByIdOrPrefix } from "../prefix.js";
import { followEval } from "./deployment_common.js";

export interface JobRevertArgs extends Parsed {
  id: string;
  version: number;
  detach: boolean;
  verbose: boolean;
}

export const jobRevert: Command<JobRevertArgs> = {
  usage: "Usage: berth job revert [options] <job> <version>",
  help: "Reverts the job to one of its kept versions (see job history): that version is registered again as the job's next version. Then monitors the evaluation (-detach prints its ID; -verbose full IDs).",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      detach: { type: "boolean" },
      verbose: { type: "boolean" },
    });
    expectArgs(positionals, 2, 2, "<job> <version>");
    const v = positionals[1]!;
    if (!/^\d+$/.test(v))
      throw new UsageError("<version> must be a non-negative integer (berth keeps no version tags)");
    return {
      address: values.address,
      id: positionals[0]!,
      version: Number(v),
      detach: values.detach ?? false,
      verbose: values.verbose ?? false,
    };
  },
  async run(p, io) {
    let evalId: string;
    try {
      const job = await getByIdOrPrefix(
        p.id,
        "job",
        (id) => io.api.jobs.info(id),
        () => io.api.jobs.list(),
      );
      evalId = (await io.api.jobs.revert(job.ID, p.version)).EvalID;
    } catch (err) {
      return fail(io, "reverting job", err);
    }
    return followEval(io, evalId, p);
  },
};
