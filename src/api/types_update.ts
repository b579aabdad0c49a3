/**
 * Nomad's DeploymentUpdateResponse (deployment promote/fail/allocation-health). The plan and
 * version shapes are in types_plan.ts. Part of the API's own DTOs (see types.ts).
 */

export interface DeploymentUpdateResponse {
  EvalID: string;
  EvalCreateIndex: number;
  DeploymentModifyIndex: number;
  RevertedJobVersion: number | null;
  Index: number;
}
