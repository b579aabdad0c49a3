/**
 * `PUT|POST /v1/validate/job` (Nomad's JobValidateRequest → JobValidateResponse): the server's job
 * validation without registering anything. An invalid job is an answer (200 with the errors), not
 * a failed request, as in Nomad; only a body that is not `{"Job": {...}}` is a 400.
 */
import { asBerthError, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import { validateJob } from "../../structs/job_validate.js";
import { readJson, sendJson } from "./respond.js";
import type { Route } from "./context.js";

export interface JobValidateResponse {
  DriverConfigValidated: boolean;
  ValidationErrors: string[] | null;
  Error: string;
  Warnings: string;
}

export const validateJobRoute: Route = async (ctx) => {
  const body = await readJson(ctx.req);
  if (!isObject(body) || !isObject(body.Job)) throw validationError("Job", 'the body must be {"Job": {...}}');
  sendJson(ctx.res, validationAnswer(body.Job));
};

export function validationAnswer(job: unknown): JobValidateResponse {
  try {
    validateJob(job);
    return { DriverConfigValidated: true, ValidationErrors: null, Error: "", Warnings: "" };
  } catch (err) {
    const e = asBerthError(err);
    // Only the validator's own refusals are answers; anything else is the server's failure.
    if (e.code !== "ERR_VALIDATION") throw err;
    return { DriverConfigValidated: false, ValidationErrors: [e.message], Error: e.message, Warnings: "" };
  }
}
