/**
 * A job named by a unique prefix of its ID, as Nomad's CLI resolves one (`command/meta.go`,
 * JobIDByPrefix): the server's prefix list (20 at most); none is "No job(s) with prefix or ID … found",
 * several are refused with their table unless the first is the exact ID. A token that may not list
 * jobs gets the text as given (the server then decides).
 */
import { hasErrorCode, type JobListStub } from "../api/index.js";
import { formatTimeNs, table } from "./format.js";
import type { CommandIO } from "./io.js";

const MAX_MATCHES = 20;

export async function jobIdByPrefix(io: CommandIO, prefix: string): Promise<string> {
  let jobs: JobListStub[];
  try {
    jobs = await io.api.jobs.list({ prefix, perPage: MAX_MATCHES });
  } catch (err) {
    if (hasErrorCode(err, "ERR_PERMISSION_DENIED")) return prefix;
    throw err;
  }
  const first = jobs[0];
  if (first === undefined) throw new Error(`No job(s) with prefix or ID ${JSON.stringify(prefix)} found`);
  if (jobs.length > 1 && first.ID !== prefix) {
    const rows = [
      ["ID", "Type", "Priority", "Status", "Submit Date"],
      ...jobs.map((j) => [j.ID, j.Type, String(j.Priority), j.Status, formatTimeNs(j.SubmitTime)]),
    ];
    const truncated = jobs.length >= MAX_MATCHES ? ["(results may be truncated)"] : [];
    throw new Error(
      [`Prefix ${JSON.stringify(prefix)} matched multiple jobs`, "", ...table(rows), ...truncated].join("\n"),
    );
  }
  return first.ID;
}
