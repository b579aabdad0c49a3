/**
 * The warnings a job answers with, the same for `job run` (Job.Register), `job plan` and `job
 * validate`, as Nomad's three show one list: the stanzas berth keeps but does not act on
 * (structs/job_warnings.ts) and what an update of a single-writer group will do
 * (scheduler/reconcile_update.ts). Nomad's format ("N warnings:\n\n* a\n* b"); "" when none.
 */
import type { Job } from "../structs/job.js";
import { formatWarnings, jobWarningList } from "../structs/job_warnings.js";
import { singleWriterUpdateWarnings } from "./scheduler/reconcile_update.js";
import type { StateReader } from "./state/store.js";

export function registerWarnings(state: StateReader, job: Job): string {
  return formatWarnings([...jobWarningList(job), ...singleWriterUpdateWarnings(state, job)]);
}
