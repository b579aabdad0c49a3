/**
 * `berth job history [options] <job>`: the job's kept versions, newest first, as Nomad's: Version,
 * Stable and Submit Date each (`-full` adds the job's JSON; `-version N` shows one; `-json` prints
 * the API's JSON; `-p` adds each version's diff against the version before it, as Nomad's `Diff =`
 * block). A unique prefix of the ID works.
 */
import { fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { formatTimeNs, json, kv } from "../format.js";
import { maybeFormatted, OUTPUT_FLAGS, outputArgs, refuseBoth, type OutputArgs } from "../output_format.js";
import { getByIdOrPrefix } from "../prefix.js";
import { jobDiffLines } from "../plan_format.js";
import type { JobDiff, JobVersionsResponse } from "../../api/index.js";

export interface JobHistoryArgs extends Parsed, OutputArgs {
  id: string;
  version: number | undefined;
  full: boolean;
  /** `-p`: each version's diff against the one before it. */
  diffs: boolean;
}

export const jobHistory: Command<JobHistoryArgs> = {
  usage: "Usage: berth job history [options] <job>",
  help: "Shows the job's kept versions (the last six), newest first: version, whether it deployed successfully (Stable) and when it was submitted. -version N shows one; -full adds each version's JSON; -p each version's diff against the version before it; -json prints the API's JSON, -t formats it with a Go template.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      version: { type: "string" },
      full: { type: "boolean" },
      ...OUTPUT_FLAGS,
      p: { type: "boolean" },
    });
    expectArgs(positionals, 1, 1, "<job>");
    const v = values.version;
    if (v !== undefined && !/^\d+$/.test(v)) throw new UsageError("-version must be a non-negative integer");
    return {
      address: values.address,
      id: positionals[0]!,
      version: v === undefined ? undefined : Number(v),
      full: values.full ?? false,
      ...outputArgs(values),
      diffs: values.p ?? false,
    };
  },
  async run(p, io) {
    const refused = refuseBoth(io, p);
    if (refused !== undefined) return refused;
    let versions: JobVersionsResponse["Versions"];
    let diffs: (JobDiff | undefined)[] = [];
    try {
      const job = await getByIdOrPrefix(
        p.id,
        "job",
        (id) => io.api.jobs.info(id),
        () => io.api.jobs.list(),
      );
      const res = await io.api.jobs.versions(job.ID, { diffs: p.diffs });
      versions = res.Versions;
      // Diffs[i] is Versions[i]'s change from Versions[i + 1] (the oldest has none).
      diffs = versions.map((_, i) => res.Diffs?.[i]);
    } catch (err) {
      return fail(io, "retrieving job versions", err);
    }
    if (p.version !== undefined) {
      diffs = diffs.filter((_, i) => versions[i]!.Version === p.version);
      versions = versions.filter((v) => v.Version === p.version);
      if (versions.length === 0) {
        io.stderr(
          `Error: version ${p.version} of job ${JSON.stringify(p.id)} is not kept (or never existed)`,
        );
        return 1;
      }
    }
    const done = maybeFormatted(io, p, p.version !== undefined ? versions[0] : versions);
    if (done !== undefined) return done;
    versions.forEach((v, i) => {
      if (i > 0) io.stdout("");
      kv([
        ["Version", String(v.Version)],
        ["Stable", String(v.Stable ?? false)],
        ["Submit Date", formatTimeNs(v.SubmitTime)],
      ]).forEach((l) => io.stdout(l));
      const diff = diffs[i];
      if (p.diffs && diff) {
        io.stdout("Diff        =");
        jobDiffLines(diff, false).forEach((l) => io.stdout(l));
      }
      if (p.full) {
        io.stdout("Full     = JSON Job:");
        json(v)
          .split("\n")
          .forEach((l) => io.stdout(l));
      }
    });
    return 0;
  },
};
