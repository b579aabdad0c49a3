/**
 * How `job run`, `job plan` and `job validate` read their job file (Nomad's JobGetter). A jobspec
 * is HCL or JSON, told by content; `-var`, `-var-file` and NOMAD_VAR_* fill its variables.
 *
 * `-json`, as Nomad's: the file is read
 * as the API's JSON job — the object itself, or its outer `Job` field when it has one (what `job
 * inspect` and `job run -output` print) — and never as HCL, so a jobspec that is not JSON is Go's
 * decoding error rather than an HCL parse. Variables have no place in JSON: `-var`/`-var-file`
 * with `-json` is refused before reading anything.
 */
import { parseJobSpec, type HclInputs, type Job } from "../api/index.js";
import type { CommandIO } from "./io.js";

/** The input flags the three commands share: `-json`, `-var`, `-var-file`. */
export const JOB_FILE_FLAGS = {
  json: { type: "boolean" },
  var: { type: "string", multiple: true },
  "var-file": { type: "string", multiple: true },
} as const;

/** JOB_FILE_FLAGS' values as JobFileArgs. */
export function jobFileArgs(
  file: string,
  values: { json?: boolean | undefined; var?: string[] | undefined; "var-file"?: string[] | undefined },
): JobFileArgs {
  return { file, json: values.json ?? false, vars: values.var ?? [], varFiles: values["var-file"] ?? [] };
}

/** -var, -var-file (read now, in order) and the environment, for the jobspec's variables. */
export async function hclInputs(io: CommandIO, vars: string[], varFiles: string[]): Promise<HclInputs> {
  const files = [];
  for (const file of varFiles) files.push({ file, text: await io.readFile(file) });
  return { vars, varFiles: files, env: io.env ?? {} };
}

export interface JobFileArgs {
  file: string;
  /** `-json`: the file is the API's JSON job. */
  json: boolean;
  vars: string[];
  varFiles: string[];
}

/** Nomad's JobGetter.Validate: the message after `Invalid job options: `, or undefined. */
export function jobOptionsProblem(p: JobFileArgs): string | undefined {
  return p.json && (p.vars.length > 0 || p.varFiles.length > 0)
    ? "cannot use variables with JSON files."
    : undefined;
}

/** What Go's encoding/json says of text that is not JSON, where berth can tell it the same way. */
function goJsonError(text: string, err: unknown): string {
  const first = /\S/.exec(text)?.[0];
  if (first === undefined) return "EOF";
  if (!'{["-0123456789tfn'.includes(first))
    return `invalid character '${first}' looking for beginning of value`;
  return err instanceof Error ? err.message : String(err);
}

/** The job in `text` read as `-json` reads it; throws `Failed to parse JSON job: …`. */
export function parseJobJson(text: string): Job {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new Error(`Failed to parse JSON job: ${goJsonError(text, err)}`, { cause: err });
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    const kind = Array.isArray(v)
      ? "array"
      : v === null
        ? "null"
        : typeof v === "string"
          ? "string"
          : typeof v;
    throw new Error(`Failed to parse JSON job: json: cannot unmarshal ${kind} into Go value of type api.Job`);
  }
  const outer = v as Record<string, unknown>;
  const nested = outer.Job;
  return (typeof nested === "object" && nested !== null && !Array.isArray(nested) ? nested : outer) as Job;
}

/** The job of `job run|plan|validate`: `-json`'s reading, or the jobspec's (HCL or JSON, told by content). */
export async function readJobFile(io: CommandIO, p: JobFileArgs): Promise<Job> {
  const text = await io.readFile(p.file);
  if (p.json) return parseJobJson(text);
  return parseJobSpec(p.file, text, await hclInputs(io, p.vars, p.varFiles));
}
