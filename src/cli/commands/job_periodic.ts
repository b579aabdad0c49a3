/**
 * `berth job periodic force [-detach] [-verbose] <job>` (Nomad's `job periodic force`): launches a
 * child of the periodic job now, whatever its schedule and prohibit_overlap, and monitors its
 * evaluation unless -detach.
 */
import { attempt, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { monitorEvaluation, rfc3339Local } from "../monitor.js";

export interface JobPeriodicForceArgs extends Parsed {
  id: string;
  detach: boolean;
  verbose: boolean;
}

export const jobPeriodic: Command<JobPeriodicForceArgs> = {
  usage: "Usage: berth job periodic force [options] <job>",
  help:
    "Launches a child of the periodic job now (its schedule and prohibit_overlap are not consulted) " +
    "and monitors its evaluation. -detach returns at once with the evaluation ID; -verbose shows full IDs.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      detach: { type: "boolean" },
      verbose: { type: "boolean" },
    });
    if (positionals[0] !== "force") throw new UsageError('the subcommand is "job periodic force"');
    expectArgs(positionals.slice(1), 1, 1, "<job>");
    return {
      address: values.address,
      id: positionals[1]!,
      detach: values.detach ?? false,
      verbose: values.verbose ?? false,
    };
  },
  async run(p, io) {
    let evalId = "";
    const code = await attempt(io, "forcing periodic job", async () => {
      evalId = (await io.api.jobs.periodicForce(p.id)).EvalID;
    });
    if (code !== 0) return code;
    if (p.detach || !evalId) {
      io.stdout("Force periodic successful");
      if (evalId) io.stdout(`Evaluation ID: ${evalId}`);
      return 0;
    }
    return monitorEvaluation(evalId, {
      io,
      verbose: p.verbose,
      sleep: (ms) => (io.sleep ? io.sleep(ms) : new Promise((r) => setTimeout(r, ms))),
      formatTime: rfc3339Local,
      getDeployment: (id) => io.api.deployments.info(id),
    });
  },
};
