/**
 * HCL decoding through @cdktn/hcl2json (HashiCorp's own HCL parser, compiled to wasm), which returns
 * every expression that is not a constant as its source text `"${…}"`.
 *
 * Jobspecs get Nomad's HCL2 language on top (hcl2/): `variable`, `variables` and `locals` blocks are
 * taken out of the body, their values collected from `inputs`, and every expression in the rest is
 * evaluated, with references to anything but `var`/`local` kept as `${…}` text for the client to
 * interpolate at run time, as Nomad does. Volume specs and agent config (called without `inputs`)
 * get no language: an expression there is refused (expressions.ts).
 */
import { dirname } from "node:path";
import { SpecError } from "./body.js";
import { checkExpressions } from "./expressions.js";
import { evalDecoded } from "./hcl2/decoded.js";
import { jobspecFunctions } from "./hcl2/functions.js";
import { collectInputs, type VarFile } from "./hcl2/inputs.js";
import { declareLocals, declareVariables, jobspecScope, variableValues } from "./hcl2/variables.js";

/**
 * What a jobspec's `variable` blocks are filled from, highest precedence first: `-var k=v` flags,
 * then `-var-file` files (HCL or JSON, later files win), then `NOMAD_VAR_<name>` in `env`, then the
 * block's `default`. Volume specs and agent config take none.
 */
export interface HclInputs {
  /** `-var` flags as written: `name=value`. */
  vars?: string[];
  /** `-var-file` files, in the order given; a name ending in `.json` is read as JSON. */
  varFiles?: { file: string; text: string }[];
  /** The environment `NOMAD_VAR_*` is read from. */
  env?: Record<string, string | undefined>;
  /**
   * Whether a value for a variable the jobspec does not declare is an error (Nomad's
   * `-hcl2-strict`, default true); when false it is ignored.
   */
  strict?: boolean;
  /**
   * Whether `file()` and the other filesystem functions may read files, relative to the jobspec's
   * directory (Nomad's AllowFS: on for the CLI, the default here; pass false for a spec that does
   * not come from the local filesystem).
   */
  allowFS?: boolean;
}

type Decoded = Record<string, unknown>;

async function hcl2json(file: string, text: string): Promise<Decoded> {
  // Loaded on first use: importing the bridge costs about half a second, which every CLI command
  // that reads no spec (and the UI) should not pay.
  const { parse } = await import("@cdktn/hcl2json");
  try {
    return (await parse(file, text)) as Decoded;
  } catch (err) {
    // The bridge reports "parse config: [file:line,col-line,col: Summary; detail]".
    const msg = err instanceof Error ? err.message : String(err);
    throw new SpecError(msg.replace(/^parse config: \[(.*)\]$/s, "$1"));
  }
}

async function varFile(f: { file: string; text: string }): Promise<VarFile> {
  if (!f.file.endsWith(".json")) return { ...f, attrs: await hcl2json(f.file, f.text) };
  let attrs: unknown;
  try {
    attrs = JSON.parse(f.text);
  } catch (err) {
    throw new SpecError(`${f.file}: not valid JSON: ${(err as Error).message}`);
  }
  if (typeof attrs !== "object" || attrs === null || Array.isArray(attrs)) {
    throw new SpecError(`${f.file}: a JSON variable file must be an object of variable values`);
  }
  return { ...f, attrs: attrs as Decoded };
}

/**
 * The body of `file` with its language evaluated (see above): with `inputs`, as a jobspec; without,
 * as a volume spec or agent config, which must hold no expression but run-time references.
 */
export async function decodeHcl(file: string, text: string, inputs?: HclInputs): Promise<Decoded> {
  const decoded = await hcl2json(file, text);
  if (inputs === undefined) {
    checkExpressions(file, text, decoded);
    return decoded;
  }
  return evaluateJobspec(file, text, decoded, inputs);
}

/** A jobspec body (as hcl2json decodes it) without its variable and locals blocks, evaluated. */
export async function evaluateJobspec(
  file: string,
  text: string,
  decoded: Decoded,
  inputs: HclInputs,
): Promise<Decoded> {
  const src = { file, text };
  const varFiles = await Promise.all((inputs.varFiles ?? []).map(varFile));
  const functions = jobspecFunctions(inputs.allowFS === false ? undefined : dirname(file));
  const vars = declareVariables(src, decoded);
  collectInputs(src, vars, {
    vars: inputs.vars ?? [],
    varFiles,
    env: inputs.env ?? {},
    strict: inputs.strict ?? true,
  });
  const varObj = variableValues(src, vars, functions);
  const scope = jobspecScope(src, varObj, declareLocals(src, decoded), functions);
  // Every local is evaluated, used or not, as Nomad does: an error in one is an error in the spec.
  scope.roots.get("local")!();
  const { variable: _v, variables: _vs, locals: _l, ...body } = decoded;
  return evalDecoded(src, body, [], scope) as Decoded;
}
