/**
 * `berth system gc` and `berth system reconcile summaries` (Nomad's `system` commands, a management
 * token): silent on success, as Nomad's; a failure is Nomad's error line and exit 1.
 */
import { attempt, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";

export const systemGc: Command<Parsed> = {
  usage: "Usage: berth system gc [options]",
  help: "Collects every job, allocation, evaluation, deployment, node and plugin that may be collected, whatever its age (the servers otherwise wait for their thresholds).",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {});
    expectArgs(positionals, 0, 0, "");
    return { address: values.address };
  },
  run: (_p, io) => attempt(io, "running system garbage-collection", () => io.api.system.garbageCollect()),
};

export const systemReconcile: Command<Parsed> = {
  usage: "Usage: berth system reconcile summaries [options]",
  help: "Nomad's job summary repair. berth derives job summaries from the allocations on every read, so there is nothing to repair; the command is kept for Nomad operators' scripts.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {});
    if (positionals[0] !== "summaries") throw new UsageError('the only thing to reconcile is "summaries"');
    expectArgs(positionals.slice(1), 0, 0, "");
    return { address: values.address };
  },
  run: (_p, io) =>
    attempt(io, "running system summary reconciliation", () => io.api.system.reconcileSummaries()),
};
