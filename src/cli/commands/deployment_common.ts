/**
 * What the deployment, job revert and job scale commands share: finding a deployment by a unique
 * ID prefix (Nomad's "No deployment(s) with prefix or id" and "Prefix matched multiple
 * deployments" answers), Nomad's deployment table, and the evaluation monitor a write ends with
 * unless `-detach` (then `Evaluation ID: <id>`).
 */
import type { Deployment } from "../../api/index.js";
import { monitorEvaluation, rfc3339Local } from "../monitor.js";
import { shortId, table } from "../format.js";
import type { CommandIO } from "../io.js";

/** The deployment `idOrPrefix` names; throws with Nomad's words when none or several match. */
export async function findDeployment(io: CommandIO, idOrPrefix: string): Promise<Deployment> {
  const matches = (await io.api.deployments.list({ prefix: idOrPrefix })).filter((d) =>
    d.ID.startsWith(idOrPrefix),
  );
  const exact = matches.find((d) => d.ID === idOrPrefix);
  if (exact) return exact;
  if (matches.length === 0)
    throw new Error(`No deployment(s) with prefix or id ${JSON.stringify(idOrPrefix)} found`);
  if (matches.length > 1)
    throw new Error(
      ["Prefix matched multiple deployments", "", ...deploymentTable(matches, false)].join("\n"),
    );
  return matches[0]!;
}

/** Nomad's formatDeployments: ID, Job ID, Job Version, Status, Description; newest first. */
export function deploymentTable(list: Deployment[], verbose: boolean): string[] {
  const rows = [...list]
    .sort((a, b) => b.CreateIndex - a.CreateIndex)
    .map((d) => [shortId(d.ID, verbose), d.JobID, String(d.JobVersion), d.Status, d.StatusDescription]);
  return table([["ID", "Job ID", "Job Version", "Status", "Description"], ...rows]);
}

/** Ends a write as Nomad's commands do: `-detach` prints the eval's ID, else its monitor runs. */
export async function followEval(
  io: CommandIO,
  evalId: string,
  opts: { detach: boolean; verbose: boolean },
): Promise<number> {
  if (!evalId) return 0;
  if (opts.detach) {
    io.stdout(`Evaluation ID: ${evalId}`);
    return 0;
  }
  return monitorEvaluation(evalId, {
    io,
    verbose: opts.verbose,
    sleep: (ms) => (io.sleep ? io.sleep(ms) : new Promise((r) => setTimeout(r, ms))),
    formatTime: rfc3339Local,
    getDeployment: (id) => io.api.deployments.info(id),
    jobEvaluations: (jobId) => io.api.jobs.evaluations(jobId),
  });
}
