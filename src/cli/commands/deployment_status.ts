/**
 * `berth deployment list` and `berth deployment status <id>`, as Nomad's: the list is a table of
 * ID, Job ID, Job Version, Status and Description (newest first); status prints the deployment's
 * key/values and its per-group "Deployed" table (Desired, Placed, Healthy, Unhealthy; Promoted
 * and Canaries with canaries, Auto Revert when set). `-json` prints the API's JSON (`-t` a Go template over it), `-verbose`
 * full IDs. A unique ID prefix names a deployment.
 */
import { fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { maybeFormatted, OUTPUT_FLAGS, outputArgs, refuseBoth, type OutputArgs } from "../output_format.js";
import { deploymentLines } from "../monitor.js";
import { deploymentTable, findDeployment } from "./deployment_common.js";

export interface DeploymentListArgs extends Parsed, OutputArgs {
  verbose: boolean;
}

export interface DeploymentStatusArgs extends DeploymentListArgs {
  id: string;
}

const FLAGS = { ...OUTPUT_FLAGS, verbose: { type: "boolean" } } as const;

export const deploymentList: Command<DeploymentListArgs> = {
  usage: "Usage: berth deployment list [options]",
  help: "Lists the deployments, newest first: ID, job, job version, status and description. -json prints the API's JSON, -t formats it with a Go template; -verbose full IDs.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, FLAGS);
    expectArgs(positionals, 0, 0, "no arguments");
    return { address: values.address, ...outputArgs(values), verbose: values.verbose ?? false };
  },
  async run(p, io) {
    const refused = refuseBoth(io, p);
    if (refused !== undefined) return refused;
    let list;
    try {
      list = await io.api.deployments.list();
    } catch (err) {
      return fail(io, "retrieving deployments", err);
    }
    const done = maybeFormatted(io, p, list);
    if (done !== undefined) return done;
    if (list.length === 0) {
      io.stdout("No deployments found");
      return 0;
    }
    for (const l of deploymentTable(list, p.verbose)) io.stdout(l);
    return 0;
  },
};

export const deploymentStatus: Command<DeploymentStatusArgs> = {
  usage: "Usage: berth deployment status [options] <deployment id>",
  help: "Shows one deployment: its job, version, status and why, and per task group how many allocs are desired, placed, healthy and unhealthy (with canaries: promoted and canaries). -json prints the API's JSON, -t formats it with a Go template; -verbose full IDs.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, FLAGS);
    expectArgs(positionals, 1, 1, "<deployment id>");
    return {
      address: values.address,
      id: positionals[0]!,
      ...outputArgs(values),
      verbose: values.verbose ?? false,
    };
  },
  async run(p, io) {
    const refused = refuseBoth(io, p);
    if (refused !== undefined) return refused;
    let d;
    try {
      d = await io.api.deployments.info((await findDeployment(io, p.id)).ID);
    } catch (err) {
      return fail(io, "retrieving deployment", err);
    }
    const done = maybeFormatted(io, p, d);
    if (done !== undefined) return done;
    for (const l of deploymentLines(d, p.verbose)) io.stdout(l);
    return 0;
  },
};
