/**
 * What `job run` (without -detach) prints while the scheduler works, as Nomad's evaluation monitor
 * does: `==> <time>: Monitoring evaluation "<id>"`, then one indented line per change (the job or
 * node that triggered it, each alloc created or modified, status changes), `Evaluation "<id>"
 * finished with status "<s>"` with placement failures listed, the next eval of a chain, and then
 * the eval's deployment until it ends. Exit code: 0, 2 when allocs could not be placed (Nomad's),
 * 1 when monitoring itself failed or the deployment did not succeed.
 */
import type { AllocationListStub, Evaluation } from "../api/index.js";
import { formatAllocMetrics } from "./evals.js";
import { deploymentWaitReasons } from "./deployment_wait.js";
import { describeError, kv, shortId, table } from "./format.js";
import type { CommandIO } from "./io.js";

/** Nomad polls once a second. */
export const MONITOR_POLL_MS = 1000;

const TERMINAL_EVAL = new Set(["complete", "failed", "cancelled"]);
const q = (s: string) => JSON.stringify(s);

/** The fields of Nomad's Deployment the monitor reads (the server may send more). */
export interface MonitoredDeployment {
  ID: string;
  JobID: string;
  JobVersion: number;
  Status: string;
  StatusDescription: string;
  TaskGroups: Record<
    string,
    {
      AutoRevert?: boolean;
      AutoPromote?: boolean;
      Promoted?: boolean;
      DesiredCanaries?: number;
      DesiredTotal?: number;
      PlacedAllocs?: number;
      HealthyAllocs?: number;
      UnhealthyAllocs?: number;
    }
  > | null;
}

export interface MonitorDeps {
  io: CommandIO;
  /** Full IDs (`-verbose`) instead of 8 characters. */
  verbose: boolean;
  sleep(ms: number): Promise<void>;
  /** Unix ms → the time prefix; Nomad prints RFC 3339 local time. */
  formatTime(ms: number): string;
  /** Reads a deployment; absent when the server has no deployments API. */
  getDeployment?(id: string): Promise<MonitoredDeployment>;
  /** The job's evaluations (its blocked one says why allocs wait); absent: not asked. */
  jobEvaluations?(jobId: string): Promise<Evaluation[]>;
}

interface EvalState {
  evalStatus: string;
  node: string;
  job: string;
  deployment: string;
  index: number;
  allocs: Map<string, { client: string; desired: string }>;
}

const emptyState = (): EvalState => ({
  evalStatus: "",
  node: "",
  job: "",
  deployment: "",
  index: 0,
  allocs: new Map(),
});

export async function monitorEvaluation(evalId: string, d: MonitorDeps): Promise<number> {
  const info = (s: string) => d.io.stdout(`==> ${d.formatTime(d.io.now())}: ${s}`);
  const out = (s: string) => d.io.stdout(`    ${d.formatTime(d.io.now())}: ${s}`);
  const id = (s: string) => shortId(s, d.verbose);
  let state = emptyState();
  let currentId = evalId;
  info(`Monitoring evaluation ${q(id(currentId))}`);
  let schedFailure = false;
  for (;;) {
    let ev: Evaluation;
    let allocs: AllocationListStub[];
    try {
      ev = await d.io.api.evaluations.info(currentId);
      allocs = await d.io.api.evaluations.allocations(currentId);
    } catch (err) {
      d.io.stderr(`==> No evaluation with id ${q(currentId)} found: ${describeError(err)}`);
      return 1;
    }
    const next: EvalState = {
      evalStatus: ev.Status,
      node: ev.NodeID,
      job: ev.JobID,
      deployment: (ev as Evaluation & { DeploymentID?: string }).DeploymentID ?? "",
      index: ev.CreateIndex,
      allocs: new Map(allocs.map((a) => [a.ID, { client: a.ClientStatus, desired: a.DesiredStatus }])),
    };
    reportChanges(state, next, allocs, out, id);
    state = next;
    if (!TERMINAL_EVAL.has(ev.Status)) {
      await d.sleep(MONITOR_POLL_MS);
      continue;
    }
    const failed = Object.keys(ev.FailedTGAllocs ?? {}).sort();
    if (failed.length === 0) {
      info(`Evaluation ${q(id(ev.ID))} finished with status ${q(ev.Status)}`);
    } else {
      schedFailure = true;
      info(
        `Evaluation ${q(id(ev.ID))} finished with status ${q(ev.Status)} but failed to place all allocations:`,
      );
      for (const tg of failed) {
        const m = ev.FailedTGAllocs![tg]!;
        const noun = m.CoalescedFailures > 0 ? "allocations" : "allocation";
        info(`Task Group ${q(tg)} (failed to place ${m.CoalescedFailures + 1} ${noun}):`);
        for (const line of formatAllocMetrics(m, "  ")) d.io.stdout(`==> ${line}`);
      }
      if (ev.BlockedEval) {
        info(`Evaluation ${q(id(ev.BlockedEval))} waiting for additional capacity to place remainder`);
      }
    }
    if (ev.NextEval) {
      // A delayed follow-up (a reschedule) runs later: Nomad follows the chain.
      currentId = ev.NextEval;
      state = emptyState();
      info(`Monitoring next evaluation ${q(id(currentId))}`);
      continue;
    }
    break;
  }
  if (state.deployment && d.getDeployment) {
    const ok = await monitorDeployment(state.deployment, d);
    if (!ok) return 1;
  }
  return schedFailure ? 2 : 0;
}

function reportChanges(
  prev: EvalState,
  next: EvalState,
  allocs: AllocationListStub[],
  out: (s: string) => void,
  id: (s: string) => string,
): void {
  if (!prev.node && next.node) out(`Evaluation triggered by node ${q(id(next.node))}`);
  if (!prev.job && next.job) out(`Evaluation triggered by job ${q(next.job)}`);
  if (!prev.deployment && next.deployment) out(`Evaluation within deployment: ${q(id(next.deployment))}`);
  for (const a of allocs) {
    const before = prev.allocs.get(a.ID);
    if (!before) {
      const created = (a as AllocationListStub & { CreateIndex?: number }).CreateIndex ?? next.index;
      if (created < next.index) {
        out(`Allocation ${q(id(a.ID))} modified: node ${q(id(a.NodeID))}, group ${q(a.TaskGroup)}`);
      } else if (a.DesiredStatus === "run") {
        out(`Allocation ${q(id(a.ID))} created: node ${q(id(a.NodeID))}, group ${q(a.TaskGroup)}`);
      }
    } else if (before.client !== a.ClientStatus) {
      const why = a.ClientDescription ? ` (${a.ClientDescription})` : "";
      out(`Allocation ${q(id(a.ID))} status changed: ${q(before.client)} -> ${q(a.ClientStatus)}${why}`);
    }
  }
  if (prev.evalStatus !== next.evalStatus) {
    out(`Evaluation status changed: ${q(prev.evalStatus)} -> ${q(next.evalStatus)}`);
  }
}

const TERMINAL_DEPLOYMENT = new Set(["successful", "failed", "cancelled", "blocked"]);

/**
 * Nomad's non-terminal deployment monitor: prints the deployment at once and again whenever it
 * changes, each time with why it is not done yet (deployment_wait.ts), then the final state.
 */
async function monitorDeployment(deploymentId: string, d: MonitorDeps): Promise<boolean> {
  const id = (s: string) => shortId(s, d.verbose);
  const time = () => d.formatTime(d.io.now());
  d.io.stdout("");
  d.io.stdout(`==> ${time()}: Monitoring deployment ${q(id(deploymentId))}`);
  let dep: MonitoredDeployment;
  let shown = "";
  for (;;) {
    try {
      dep = await d.getDeployment!(deploymentId);
    } catch (err) {
      d.io.stderr(`==> ${time()}: Error fetching deployment ${q(id(deploymentId))}: ${describeError(err)}`);
      return false;
    }
    if (TERMINAL_DEPLOYMENT.has(dep.Status)) break;
    const lines = [
      ...deploymentLines(dep, d.verbose),
      ...deploymentWaitReasons(dep, await blockedEval(dep, d), id(deploymentId)),
    ];
    const text = lines.join("\n");
    if (text !== shown) {
      shown = text;
      d.io.stdout("");
      d.io.stdout(`    ${time()}`);
      for (const l of lines) d.io.stdout(l ? `    ${l}` : "");
    }
    await d.sleep(MONITOR_POLL_MS);
  }
  const verdict = dep.Status === "successful" ? "successful" : dep.Status;
  const line = `==> ${time()}: Deployment ${q(id(deploymentId))} ${verdict}`;
  if (dep.Status === "successful") d.io.stdout(line);
  else d.io.stderr(line);
  d.io.stdout("");
  d.io.stdout(`    ${time()}`);
  for (const l of deploymentLines(dep, d.verbose)) d.io.stdout(l ? `    ${l}` : "");
  return dep.Status === "successful";
}

/** The job's blocked evaluation while some group has allocs left to place (else none is asked for). */
async function blockedEval(dep: MonitoredDeployment, d: MonitorDeps): Promise<Evaluation | undefined> {
  const short = Object.values(dep.TaskGroups ?? {}).some(
    (s) => (s.PlacedAllocs ?? 0) < (s.DesiredTotal ?? 0),
  );
  if (!short || !d.jobEvaluations) return undefined;
  try {
    return (await d.jobEvaluations(dep.JobID)).find((e) => e.Status === "blocked");
  } catch {
    return undefined; // only the explanation is lost; the deployment is still followed
  }
}

/** Nomad's formatDeployment: the high-level key/values, then the "Deployed" table. */
export function deploymentLines(dep: MonitoredDeployment, verbose: boolean): string[] {
  const pairs: [string, string][] = [
    ["ID", shortId(dep.ID, verbose)],
    ["Job ID", dep.JobID],
    ["Job Version", String(dep.JobVersion)],
    ["Status", dep.Status],
    ["Description", dep.StatusDescription],
  ];
  const out = kv(pairs);
  const groups = Object.keys(dep.TaskGroups ?? {}).sort();
  if (groups.length === 0) return out;
  const states = groups.map((g) => dep.TaskGroups![g]!);
  const autoRevert = states.some((s) => s.AutoRevert);
  const canaries = states.some((s) => (s.DesiredCanaries ?? 0) > 0);
  const header = ["Task Group"];
  if (autoRevert) header.push("Auto Revert");
  if (canaries) header.push("Promoted");
  header.push("Desired");
  if (canaries) header.push("Canaries");
  header.push("Placed", "Healthy", "Unhealthy");
  const rows = [header];
  groups.forEach((g, i) => {
    const s = states[i]!;
    const row = [g];
    if (autoRevert) row.push(String(s.AutoRevert ?? false));
    if (canaries) row.push((s.DesiredCanaries ?? 0) > 0 ? String(s.Promoted ?? false) : "N/A");
    row.push(String(s.DesiredTotal ?? 0));
    if (canaries) row.push(String(s.DesiredCanaries ?? 0));
    row.push(String(s.PlacedAllocs ?? 0), String(s.HealthyAllocs ?? 0), String(s.UnhealthyAllocs ?? 0));
    rows.push(row);
  });
  return [...out, "", "Deployed", ...table(rows)];
}

/** Nomad's formatTime: RFC 3339 with the local offset, seconds precision. */
export function rfc3339Local(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  const off = -d.getTimezoneOffset();
  const zone =
    off === 0
      ? "Z"
      : `${off > 0 ? "+" : "-"}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${zone}`
  );
}
