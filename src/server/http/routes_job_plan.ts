/**
 * PUT /v1/job/:id/plan (Nomad's JobPlanRequest → JobPlanResponse): the scheduler's pass over the
 * submitted job, a dry run that changes nothing (scheduler/job_plan.ts).
 */
import { validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import { NS_PER_MS } from "../../structs/job.js";
import { validateJob } from "../../structs/job_validate.js";
import { plannedVolumeCreates } from "../../structs/job_volume_create.js";
import { specOf } from "../rpc/job.js";
import { planJob } from "../scheduler/job_plan.js";
import { registerWarnings } from "../job_register_warnings.js";
import { readJson } from "../wire/http_io.js";
import { sendJson } from "./respond.js";
import { inRequestNamespace } from "./routes_namespaces.js";
import { checkJobDrivers, requireJobNamespace } from "../../structs/namespace.js";
import { param, type Route } from "../request_ctx.js";
import { authorizeJob } from "../acl/authorize.js";

/** Nomad's zero time: a job that is not periodic has no next launch. */
const ZERO_TIME = "0001-01-01T00:00:00Z";

export const planJobRoute: Route = async (ctx, api) => {
  const id = param(ctx, "id");
  const body = await readJson(ctx.req);
  if (!isObject(body) || !isObject(body.Job)) throw validationError("Job", 'the body must be {"Job": {...}}');
  if (body.Diff !== undefined && typeof body.Diff !== "boolean")
    throw validationError("Diff", "must be a boolean");
  const spec = validateJob(inRequestNamespace(ctx, body.Job));
  if (spec.ID !== id)
    throw validationError("Job.ID", `does not match the job in the URL (${JSON.stringify(id)})`);
  authorizeJob(ctx, spec, ["submit-job", "plan-job"]);
  // As Nomad's plan runs the register's admission checks: the namespace exists, allows the drivers.
  checkJobDrivers(requireJobNamespace(api.store.getNamespace(spec.Namespace), spec), spec);
  const prev = api.store.getJob(spec.Namespace, spec.ID);
  const same = prev !== undefined && specOf(prev) === specOf({ ...spec, Status: prev.Status });
  const result = planJob(api.store, spec, same, body.Diff === true, Date.now() * NS_PER_MS);
  const index = api.store.index();
  sendJson(
    ctx.res,
    {
      Annotations: { DesiredTGUpdates: result.annotations, PreemptedAllocs: null },
      FailedTGAllocs: result.failed,
      JobModifyIndex: result.jobModifyIndex,
      CreatedEvals: null,
      Diff: result.diff,
      NextPeriodicLaunch: ZERO_TIME,
      Warnings: registerWarnings(api.store, spec),
      // berth: the volumes the job's `volume { create { … } }` blocks would create on placement.
      CreatedVolumes: nullIfEmpty(
        plannedVolumeCreates(spec, (ns, vid) => api.store.getVolume(ns, vid) !== undefined),
      ),
      Index: index,
    },
    index,
  );
};

function nullIfEmpty<T>(list: T[]): T[] | null {
  return list.length === 0 ? null : list;
}
