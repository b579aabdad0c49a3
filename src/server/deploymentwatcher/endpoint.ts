/**
 * The deployment endpoints (Nomad's Deployment RPCs behind /v1/deployment*): read, promote, fail
 * and set alloc health by hand. Each write checks and changes the deployment in one transaction and
 * then evaluates its job, answering Nomad's DeploymentUpdateResponse; errors name the deployment and
 * the problem with Nomad's wording where Nomad has one, and change nothing.
 */
import type { Allocation } from "../../structs/alloc.js";
import {
  awaitsPromotion,
  DEPLOYMENT_DESC,
  isCanary,
  isDeploymentActive,
  rollbackDescription,
  ZERO_TIME,
  type Deployment,
} from "../../structs/deployment.js";
import { BerthError, notFound, validationError } from "../../structs/errors.js";
import type { JobScheduler } from "../deps.js";
import type { StateStore, StateWriter } from "../state/store.js";
import { revertJob } from "./watcher.js";

export interface DeploymentUpdateResponse {
  EvalID: string;
  EvalCreateIndex: number;
  DeploymentModifyIndex: number;
  /** The job version a failed deployment rolled back to (auto_revert), or null. */
  RevertedJobVersion: number | null;
  Index: number;
}

export class DeploymentEndpoint {
  constructor(
    private readonly store: StateStore,
    private readonly scheduler: JobScheduler,
  ) {}

  list(namespace?: string): Deployment[] {
    return this.store.listDeployments(namespace);
  }

  get(id: string): Deployment {
    const d = this.store.getDeployment(id);
    if (!d) throw notFound("deployment", id);
    return d;
  }

  allocations(id: string): Allocation[] {
    const d = this.get(id);
    return this.store.allocsByJob(d.Namespace, d.JobID).filter((a) => a.DeploymentID === d.ID);
  }

  /** The job's deployments, newest first (Nomad's /v1/job/:id/deployments order). */
  byJob(namespace: string, jobId: string): Deployment[] {
    return this.store.deploymentsByJob(namespace, jobId).reverse();
  }

  /** `{"All": true}` or `{"Groups": [...]}`: the groups' canaries must all be healthy. */
  async promote(id: string, all: boolean, groups: string[]): Promise<DeploymentUpdateResponse> {
    if (!all && groups.length === 0) throw validationError("Groups", "name at least one group, or set All");
    const d = await this.store.txn((tx) => {
      const cur = active(tx, id);
      for (const g of groups) {
        if (!cur.TaskGroups[g])
          throw validationError("Groups", `deployment has no task group ${JSON.stringify(g)}`);
      }
      const chosen = Object.keys(cur.TaskGroups).filter((g) => all || groups.includes(g));
      const allocs = tx.allocsByJob(cur.Namespace, cur.JobID).filter((a) => a.DeploymentID === cur.ID);
      const problems: string[] = [];
      for (const g of chosen) {
        const need = cur.TaskGroups[g]!.DesiredCanaries;
        if (need === 0) continue;
        const have = allocs.filter(
          (a) =>
            a.TaskGroup === g &&
            isCanary(a) &&
            a.DesiredStatus === "run" &&
            a.DeploymentStatus?.Healthy === true,
        ).length;
        if (have < need)
          problems.push(`Task group ${JSON.stringify(g)} has ${have}/${need} healthy allocations`);
      }
      if (problems.length > 0) throw new BerthError("ERR_CONFLICT", problems.join("; "));
      const TaskGroups = { ...cur.TaskGroups };
      for (const g of chosen) TaskGroups[g] = { ...TaskGroups[g]!, Promoted: true };
      const waiting = Object.values(TaskGroups).some(awaitsPromotion);
      return tx.putDeployment({
        ...cur,
        TaskGroups,
        StatusDescription: waiting ? DEPLOYMENT_DESC.needsPromotion : DEPLOYMENT_DESC.running,
        ModifyTime: Date.now() * 1e6,
      });
    });
    return this.evaluated(d, null);
  }

  /** Marks the deployment failed (Nomad's "Deployment marked as failed"), rolling back with auto_revert. */
  async fail(id: string): Promise<DeploymentUpdateResponse> {
    const nowMs = Date.now();
    const { d, reverted } = await this.store.txn((tx) => {
      const cur = active(tx, id);
      let reverted: number | null = null;
      let description: string = DEPLOYMENT_DESC.failedByUser;
      if (Object.values(cur.TaskGroups).some((s) => s.AutoRevert)) {
        const stable = tx
          .jobVersions(cur.Namespace, cur.JobID)
          .find((v) => v.Stable && v.Version < cur.JobVersion);
        reverted = stable ? stable.Version : null;
        description = rollbackDescription(description, reverted);
        if (reverted !== null) revertJob(tx, cur.Namespace, cur.JobID, reverted, nowMs);
      }
      const d = tx.putDeployment({
        ...cur,
        Status: "failed",
        StatusDescription: description,
        ModifyTime: nowMs * 1e6,
      });
      return { d, reverted };
    });
    return this.evaluated(d, reverted);
  }

  /**
   * Nomad's Deployment.Pause: `pause` sets the deployment paused (the reconciler then places no
   * more of it and the watcher neither promotes, fails nor completes it); false resumes it and
   * evaluates the job. A resumed group's progress deadline starts again from now, so the time it
   * spent paused does not fail it. Pausing evaluates nothing (EvalID "").
   */
  async pause(id: string, pause: boolean): Promise<DeploymentUpdateResponse> {
    const nowMs = Date.now();
    const d = await this.store.txn((tx) => {
      const cur = active(tx, id);
      if (pause)
        return tx.putDeployment({
          ...cur,
          Status: "paused",
          StatusDescription: DEPLOYMENT_DESC.paused,
          ModifyTime: nowMs * 1e6,
        });
      const TaskGroups = { ...cur.TaskGroups };
      for (const [g, s] of Object.entries(TaskGroups)) {
        if (cur.Status === "paused" && s.RequireProgressBy !== ZERO_TIME && s.ProgressDeadline > 0)
          TaskGroups[g] = {
            ...s,
            RequireProgressBy: new Date(nowMs + s.ProgressDeadline / 1e6).toISOString(),
          };
      }
      const waiting = Object.values(TaskGroups).filter(awaitsPromotion);
      const description =
        waiting.length === 0
          ? DEPLOYMENT_DESC.running
          : waiting.every((s) => s.AutoPromote)
            ? DEPLOYMENT_DESC.autoPromotion
            : DEPLOYMENT_DESC.needsPromotion;
      return tx.putDeployment({
        ...cur,
        TaskGroups,
        Status: "running",
        StatusDescription: description,
        ModifyTime: nowMs * 1e6,
      });
    });
    if (!pause) return this.evaluated(d, null);
    const index = this.store.index();
    return {
      EvalID: "",
      EvalCreateIndex: 0,
      DeploymentModifyIndex: d.ModifyIndex,
      RevertedJobVersion: null,
      Index: index,
    };
  }

  /** Sets the health of allocs of the deployment by hand (what `health_check = "manual"` waits for). */
  async setAllocHealth(
    id: string,
    healthy: string[],
    unhealthy: string[],
  ): Promise<DeploymentUpdateResponse> {
    if (healthy.length + unhealthy.length === 0)
      throw validationError(
        "HealthyAllocationIDs",
        "must specify at least one healthy/unhealthy allocation ID",
      );
    const d = await this.store.txn((tx) => {
      const cur = active(tx, id);
      const stamp = new Date().toISOString();
      for (const [ids, ok] of [
        [healthy, true],
        [unhealthy, false],
      ] as const) {
        for (const allocId of ids) {
          const a = tx.getAlloc(allocId);
          if (!a || a.DeploymentID !== cur.ID)
            throw validationError(
              "HealthyAllocationIDs",
              `allocation ${JSON.stringify(allocId)} is not part of the deployment`,
            );
          tx.putAlloc({ ...a, DeploymentStatus: { Healthy: ok, Canary: isCanary(a), Timestamp: stamp } });
        }
      }
      return cur;
    });
    return this.evaluated(d, null);
  }

  private async evaluated(d: Deployment, reverted: number | null): Promise<DeploymentUpdateResponse> {
    const r = await this.scheduler.evaluate(d.Namespace, d.JobID, "deployment-watcher");
    const index = this.store.index();
    return {
      EvalID: r.evalId,
      EvalCreateIndex: r.index,
      DeploymentModifyIndex: this.store.getDeployment(d.ID)?.ModifyIndex ?? d.ModifyIndex,
      RevertedJobVersion: reverted,
      Index: index,
    };
  }
}

/** The deployment, which must exist and be active (Nomad's words for both refusals). */
function active(tx: StateWriter, id: string): Deployment {
  const d = tx.getDeployment(id);
  if (!d)
    throw new BerthError(
      "ERR_NOT_FOUND",
      `Deployment ID ${JSON.stringify(id)} couldn't be updated as it does not exist`,
    );
  if (!isDeploymentActive(d))
    throw new BerthError(
      "ERR_CONFLICT",
      `Deployment ${JSON.stringify(d.ID)} has terminal status ${JSON.stringify(d.Status)}`,
    );
  return d;
}
