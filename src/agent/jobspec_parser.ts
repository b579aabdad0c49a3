/**
 * The server's `/v1/jobs/parse` reader (server/jobspec_parser.ts): berth's own jobspec reader, as
 * the CLI reads a file, with nothing of the server's host let in — no file functions (Nomad's
 * AllowFS false) and no `NOMAD_VAR_*` from its environment. A spec that does not parse is
 * ERR_VALIDATION "Failed to parse job: …" (the reader's message: `input.hcl`, line and column), as
 * Nomad's answer.
 */
import { parseJobHcl } from "../api/specs/jobspec.js";
import { SpecError } from "../api/specs/body.js";
import { BerthError } from "../structs/errors.js";
import type { JobspecParser } from "../server/jobspec_parser.js";

export const parseJobspecForServer: JobspecParser = async (hcl, variables) => {
  try {
    return await parseJobHcl("input.hcl", hcl, {
      allowFS: false,
      env: {},
      varFiles: variables === "" ? [] : [{ file: "variables.hcl", text: variables }],
    });
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    throw new BerthError("ERR_VALIDATION", `Failed to parse job: ${err.message}`, { field: "JobHCL" });
  }
};
