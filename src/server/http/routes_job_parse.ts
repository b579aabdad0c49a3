/**
 * `PUT|POST /v1/jobs/parse` (Nomad's JobsParseRequest, command/agent/job_endpoint.go
 * JobsParseRequest): `{"JobHCL", "Variables", "Canonicalize"}` → the job as JSON (Nomad's api.Job
 * shape, what `job run` would send), parsed by berth's own jobspec reader as the CLI parses a file,
 * handed in by the agent (server/jobspec_parser.ts: no file functions, nothing of the server's
 * environment); `Variables` is read as the content of one variables file, as Nomad's. With `Canonicalize` the job comes back as a register
 * would store it, the server's defaults filled in (structs/job_validate.ts) — a job a register would
 * refuse is then a 400 naming the problem, where Nomad's Canonicalize never refuses.
 * An empty spec is 400 "Job spec is empty"; HCL that does not parse is 400 "Failed to parse job: …"
 * with the reader's message (file `input.hcl`, line and column), as Nomad's.
 * ACL: parse-job or submit-job in the request's namespace (Nomad's check).
 */
import { BerthError, validationError } from "../../structs/errors.js";
import { isObject } from "../../structs/json_check.js";
import { validateJob } from "../../structs/job_validate.js";
import { readJson } from "../wire/http_io.js";
import type { Route } from "../request_ctx.js";
import { sendJson } from "./respond.js";

export const parseJobRoute: Route = async (ctx, api) => {
  const body = await readJson(ctx.req);
  if (!isObject(body)) throw validationError("body", "must be a JSON object");
  const text = optString("JobHCL", body.JobHCL);
  const variables = optString("Variables", body.Variables);
  if (body.Canonicalize !== undefined && typeof body.Canonicalize !== "boolean")
    throw validationError("Canonicalize", "must be a boolean");
  if (text === "") throw new BerthError("ERR_VALIDATION", "Job spec is empty", { field: "JobHCL" });
  if (!api.jobspec) throw new BerthError("ERR_INTERNAL", "this server was started without a jobspec reader");
  const job = await api.jobspec(text, variables);
  sendJson(ctx.res, body.Canonicalize === true ? validateJob(job) : job);
};

function optString(field: string, v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw validationError(field, "must be a string");
  return v;
}
