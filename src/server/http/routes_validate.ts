/**
 * `PUT|POST /v1/validate/job` (Nomad's JobValidateRequest → JobValidateResponse): the server's job
 * validation without registering anything. An invalid job is an answer (200 with the errors), not
 * a failed request, as in Nomad; only a body that is not `{"Job": {...}}` is a 400.
 */
import { asBerthError, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import { validateJob } from "../../structs/job_validate.js";
import { readJson } from "../wire/http_io.js";
import { sendJson } from "./respond.js";
import type { Route } from "../request_ctx.js";
import { inRequestNamespace } from "./routes_namespaces.js";
import type { Job } from "../../structs/job.js";
import { checkJobDrivers, requireJobNamespace } from "../../structs/namespace.js";
import { registerWarnings } from "../job_register_warnings.js";

export interface JobValidateResponse {
  DriverConfigValidated: boolean;
  ValidationErrors: string[] | null;
  Error: string;
  Warnings: string;
}

export const validateJobRoute: Route = async (ctx, api) => {
  const body = await readJson(ctx.req);
  if (!isObject(body) || !isObject(body.Job)) throw validationError("Job", 'the body must be {"Job": {...}}');
  // As Nomad's Job.Validate runs the register's admission checks: the job's namespace (the request's
  // ?namespace= first, as for a register) must exist and allow the job's drivers.
  const admit = (job: Job) =>
    checkJobDrivers(requireJobNamespace(api.store.getNamespace(job.Namespace), job), job);
  const warnings = (job: Job) => registerWarnings(api.store, job);
  sendJson(ctx.res, validationAnswer(inRequestNamespace(ctx, body.Job), admit, warnings));
};

/** The answer for `job`: its errors, or none and the warnings `job run` would print. */
export function validationAnswer(
  job: unknown,
  admit: (job: Job) => void = () => {},
  warnings: (job: Job) => string = () => "",
): JobValidateResponse {
  try {
    const valid = validateJob(job);
    admit(valid);
    return { DriverConfigValidated: true, ValidationErrors: null, Error: "", Warnings: warnings(valid) };
  } catch (err) {
    const e = asBerthError(err);
    // Only the validator's own refusals are answers; anything else is the server's failure.
    if (e.code !== "ERR_VALIDATION") throw err;
    return { DriverConfigValidated: false, ValidationErrors: [e.message], Error: e.message, Warnings: "" };
  }
}
