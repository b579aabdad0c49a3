/**
 * `berth job scale [options] <job> [<group>] <count>`, as Nomad's: the group may be left out when
 * the job has one ("Group name required" otherwise, "Group <g> not found within job" for an
 * unknown one); the count is set as a new job version (refused while a deployment of the job is
 * active), then the evaluation is monitored (`-detach` prints its ID, `-verbose` full IDs).
 */
import { fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { followEval } from "./deployment_common.js";

export interface JobScaleArgs extends Parsed {
  id: string;
  group: string;
  count: number;
  detach: boolean;
  verbose: boolean;
}

/** The message stored with the scaling request (Nomad's CLI sends "submitted using the Nomad CLI"). */
export const SCALE_MESSAGE = "submitted using the berth CLI";

/** Nomad's performGroupCheck: the group to scale, from the job's groups and the one asked for. */
export function pickGroup(groups: string[], asked: string): string {
  if (groups.length > 1 && asked === "") throw new Error("Group name required");
  if (asked === "" && groups.length === 1) return groups[0]!;
  if (groups.includes(asked)) return asked;
  throw new Error(`Group ${asked} not found within job`);
}

export const jobScale: Command<JobScaleArgs> = {
  usage: "Usage: berth job scale [options] <job> [<group>] <count>",
  help: "Sets a task group's count (the group may be left out when the job has only one) as a new job version, then monitors the evaluation (-detach prints its ID; -verbose full IDs). Refused while a deployment of the job is running.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      detach: { type: "boolean" },
      verbose: { type: "boolean" },
    });
    expectArgs(positionals, 2, 3, "<job> [<group>] <count>");
    const countText = positionals.at(-1)!;
    if (!/^-?\d+$/.test(countText))
      throw new UsageError(`Failed to convert count string to int: ${JSON.stringify(countText)}`);
    return {
      address: values.address,
      id: positionals[0]!,
      group: positionals.length === 3 ? positionals[1]! : "",
      count: Number(countText),
      detach: values.detach ?? false,
      verbose: values.verbose ?? false,
    };
  },
  async run(p, io) {
    let group: string;
    try {
      const status = await io.api.jobs.scaleStatus(p.id);
      group = pickGroup(Object.keys(status.TaskGroups ?? {}), p.group);
    } catch (err) {
      return fail(io, "querying job", err);
    }
    let evalId: string;
    try {
      const r = await io.api.jobs.scale(p.id, group, p.count, SCALE_MESSAGE);
      if (r.Warnings) {
        io.stdout("Job Warnings:");
        io.stdout(r.Warnings);
        io.stdout("");
      }
      evalId = r.EvalID;
    } catch (err) {
      return fail(io, "submitting scaling request", err);
    }
    return followEval(io, evalId, p);
  },
};
