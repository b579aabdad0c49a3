/**
 * Why a running deployment is not done yet, in words (what `job run`'s deployment monitor prints
 * under the table each time it changes, so a deployment that waits never waits silently). Pure:
 * from the deployment and the job's blocked evaluation, if any:
 *
 * - paused: resume it;
 * - a group whose allocs found no node (the blocked eval's FailedTGAllocs): how many, and the
 *   placement metrics' reasons, as `job run` prints a placement failure;
 * - unhealthy allocs (the deployment will fail, or roll back with auto_revert);
 * - canaries healthy and waiting for a manual promotion: the command that promotes them;
 * - placed allocs not yet healthy (min_healthy_time, health checks);
 * - allocs still to place (a rolling update placing max_parallel at a time).
 */
import type { Evaluation } from "../api/index.js";
import { formatAllocMetrics } from "./evals.js";

/** The deployment fields read here (monitor.ts's MonitoredDeployment has them). */
export interface WaitingDeployment {
  Status: string;
  TaskGroups: Record<
    string,
    {
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

const q = (s: string) => JSON.stringify(s);
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

export function deploymentWaitReasons(
  dep: WaitingDeployment,
  blocked: Pick<Evaluation, "FailedTGAllocs"> | undefined,
  shownId: string,
): string[] {
  const out: string[] = [];
  if (dep.Status === "paused")
    out.push(`Deployment is paused; "berth deployment resume ${shownId}" continues it`);
  for (const g of Object.keys(dep.TaskGroups ?? {}).sort()) {
    const s = dep.TaskGroups![g]!;
    const desired = s.DesiredTotal ?? 0;
    const placed = s.PlacedAllocs ?? 0;
    const healthy = s.HealthyAllocs ?? 0;
    const unhealthy = s.UnhealthyAllocs ?? 0;
    const canaries = s.DesiredCanaries ?? 0;
    const failed = blocked?.FailedTGAllocs?.[g];
    if (failed) {
      const n = failed.CoalescedFailures + 1;
      out.push(`Task group ${q(g)} is waiting for capacity: ${plural(n, "allocation")} found no node`);
      out.push(...formatAllocMetrics(failed, "  "));
    }
    if (unhealthy > 0) out.push(`Task group ${q(g)} has ${plural(unhealthy, "unhealthy allocation")}`);
    const awaitingPromotion = canaries > 0 && s.Promoted !== true;
    if (awaitingPromotion && healthy >= canaries && s.AutoPromote !== true) {
      out.push(
        `Task group ${q(g)}: canaries healthy, waiting for promotion ("berth deployment promote ${shownId}")`,
      );
    } else if (placed > healthy + unhealthy) {
      out.push(
        `Task group ${q(g)} is waiting for ${plural(placed - healthy - unhealthy, "allocation")} to become healthy`,
      );
    } else if (!failed && !awaitingPromotion && placed < desired && dep.Status === "running") {
      out.push(`Task group ${q(g)} has placed ${placed} of ${desired} allocations`);
    }
  }
  return out;
}
