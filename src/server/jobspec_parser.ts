/**
 * The jobspec reader `/v1/jobs/parse` uses (http/routes_job_parse.ts). berth's reader lives with the
 * API client (api/specs/), which the server may not import (docs/design.md's arrows), so the agent
 * hands one in (agent/jobspec_parser.ts); a bare server without one answers the route with
 * ERR_INTERNAL.
 *
 * `hcl` is the spec, `variables` the content of one variables file ("" for none). Resolves with the
 * job in the API's JSON shape; rejects with ERR_VALIDATION naming the problem when the spec does
 * not parse. Must read no file and nothing of the server's environment.
 */
export type JobspecParser = (hcl: string, variables: string) => Promise<unknown>;
