/**
 * The deployment writes, as Nomad's commands: `deployment promote [-group g]... <id>`,
 * `deployment fail <id>`, `deployment pause <id>`, `deployment resume <id>`. Each names the
 * deployment by a unique ID prefix, prints Nomad's line (`Deployment "<id>" failed`, `... paused`,
 * `... resumed`), then monitors the evaluation the write created unless `-detach`.
 */
import { fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { shortId } from "../format.js";
import type { CommandIO } from "../io.js";
import { findDeployment, followEval } from "./deployment_common.js";

export interface DeploymentOpArgs extends Parsed {
  id: string;
  detach: boolean;
  verbose: boolean;
  groups: string[];
}

const q = (s: string) => JSON.stringify(s);

function parseOp(argv: string[], withGroups: boolean): DeploymentOpArgs {
  const { values, positionals } = parseCommandArgs(argv, {
    detach: { type: "boolean" },
    verbose: { type: "boolean" },
    ...(withGroups ? { group: { type: "string", multiple: true } } : {}),
  });
  expectArgs(positionals, 1, 1, "<deployment id>");
  const groups = (values as { group?: string[] }).group ?? [];
  return {
    address: values.address,
    id: positionals[0]!,
    detach: values.detach ?? false,
    verbose: values.verbose ?? false,
    groups,
  };
}

/** Runs one write on the deployment `p.id` names, prints `said(id)`, then follows the eval. */
async function op(
  io: CommandIO,
  p: DeploymentOpArgs,
  doing: string,
  write: (id: string) => Promise<{ EvalID: string; RevertedJobVersion?: number | null }>,
  said: (id: string, r: { RevertedJobVersion?: number | null }) => string | null,
): Promise<number> {
  let evalId: string;
  try {
    const d = await findDeployment(io, p.id);
    const r = await write(d.ID);
    const line = said(shortId(d.ID, p.verbose), r);
    if (line !== null) io.stdout(line);
    evalId = r.EvalID;
  } catch (err) {
    return fail(io, doing, err);
  }
  if (evalId && !p.detach) io.stdout("");
  return followEval(io, evalId, p);
}

export const deploymentPromote: Command<DeploymentOpArgs> = {
  usage: "Usage: berth deployment promote [options] <deployment id>",
  help: "Promotes the deployment's canaries: every group's, or only the groups named by -group (repeatable). The canaries must be healthy. Then monitors the evaluation (-detach prints its ID; -verbose full IDs).",
  parse: (argv) => parseOp(argv, true),
  run: (p, io) =>
    op(
      io,
      p,
      "promoting deployment",
      (id) => io.api.deployments.promote(id, p.groups.length > 0 ? p.groups : undefined),
      () => null,
    ),
};

export const deploymentFail: Command<DeploymentOpArgs> = {
  usage: "Usage: berth deployment fail [options] <deployment id>",
  help: "Marks the deployment failed; a group with auto_revert rolls the job back to its newest stable version. Then monitors the evaluation (-detach prints its ID; -verbose full IDs).",
  parse: (argv) => parseOp(argv, false),
  run: (p, io) =>
    op(
      io,
      p,
      "failing deployment",
      (id) => io.api.deployments.fail(id),
      (id, r) =>
        typeof r.RevertedJobVersion === "number"
          ? `Deployment ${q(id)} failed. Auto-reverted to job version ${r.RevertedJobVersion}.`
          : `Deployment ${q(id)} failed`,
    ),
};

export const deploymentPause: Command<DeploymentOpArgs> = {
  usage: "Usage: berth deployment pause [options] <deployment id>",
  help: "Pauses the deployment: no further allocs of it are placed, and it is neither promoted, failed by its progress deadline nor completed until resumed.",
  parse: (argv) => parseOp(argv, false),
  run: (p, io) =>
    op(
      io,
      p,
      "pausing deployment",
      (id) => io.api.deployments.pause(id, true),
      (id) => `Deployment ${q(id)} paused`,
    ),
};

export const deploymentResume: Command<DeploymentOpArgs> = {
  usage: "Usage: berth deployment resume [options] <deployment id>",
  help: "Resumes a paused deployment (its progress deadlines count again from now), then monitors the evaluation (-detach prints its ID; -verbose full IDs).",
  parse: (argv) => parseOp(argv, false),
  run: (p, io) =>
    op(
      io,
      p,
      "resuming deployment",
      (id) => io.api.deployments.pause(id, false),
      (id) => `Deployment ${q(id)} resumed`,
    ),
};
