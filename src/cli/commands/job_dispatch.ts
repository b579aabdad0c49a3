/**
 * `berth job dispatch [-meta k=v ...] [-idempotency-token T] [-detach] [-verbose] <job> [input]`
 * (Nomad's `job dispatch`): runs a child of the parameterized job with the meta given and, as its
 * payload, the bytes of the input source (a file; `-` reads standard input), then monitors the
 * child's evaluation as `job run` does unless -detach.
 */
import { attempt, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { monitorEvaluation, rfc3339Local } from "../monitor.js";

export interface JobDispatchArgs extends Parsed {
  id: string;
  meta: Record<string, string>;
  input: string | undefined;
  detach: boolean;
  verbose: boolean;
  idempotencyToken: string;
}

/** `-meta key=value` flags as a map; a flag without `=` is a usage error (Nomad's message). */
export function metaFlags(list: readonly string[]): Record<string, string> {
  const meta: Record<string, string> = {};
  for (const m of list) {
    const eq = m.indexOf("=");
    if (eq <= 0) throw new UsageError(`Error parsing meta value: ${JSON.stringify(m)}`);
    meta[m.slice(0, eq)] = m.slice(eq + 1);
  }
  return meta;
}

export const jobDispatch: Command<JobDispatchArgs> = {
  usage: "Usage: berth job dispatch [options] <parameterized job> [input source]",
  help:
    "Dispatches a child of a parameterized job. -meta key=value (repeatable) sets the child's meta " +
    "(the job's meta_required keys must be given, only meta_required and meta_optional keys are " +
    "allowed); [input source] is a file whose bytes become the payload (- reads standard input, at " +
    "most 16 KiB), written to the task's dispatch_payload file. -idempotency-token makes a retry " +
    "return the child the first dispatch with that token made. -detach returns after dispatching, " +
    "-verbose shows full IDs.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      meta: { type: "string", multiple: true },
      detach: { type: "boolean" },
      verbose: { type: "boolean" },
      "idempotency-token": { type: "string" },
    });
    expectArgs(positionals, 1, 2, "<parameterized job> [input source]");
    return {
      address: values.address,
      id: positionals[0]!,
      input: positionals[1],
      meta: metaFlags(values.meta ?? []),
      detach: values.detach ?? false,
      verbose: values.verbose ?? false,
      idempotencyToken: values["idempotency-token"] ?? "",
    };
  },
  async run(p, io) {
    let evalId = "";
    const code = await attempt(io, "dispatching job", async () => {
      const payload =
        p.input === undefined
          ? undefined
          : io.readFileBytes
            ? await io.readFileBytes(p.input)
            : Buffer.from(await io.readFile(p.input), "utf8");
      const res = await io.api.jobs.dispatch(p.id, {
        meta: p.meta,
        payload,
        idempotencyToken: p.idempotencyToken || undefined,
      });
      evalId = res.EvalID;
      io.stdout(`Dispatched Job ID = ${res.DispatchedJobID}`);
      if (evalId) io.stdout(`Evaluation ID     = ${p.verbose ? evalId : evalId.slice(0, 8)}`);
    });
    if (code !== 0 || p.detach || !evalId) return code;
    io.stdout("");
    return monitorEvaluation(evalId, {
      io,
      verbose: p.verbose,
      sleep: (ms) => (io.sleep ? io.sleep(ms) : new Promise((r) => setTimeout(r, ms))),
      formatTime: rfc3339Local,
      getDeployment: (id) => io.api.deployments.info(id),
    });
  },
};
