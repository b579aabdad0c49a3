/**
 * HCL decoding through @cdktn/hcl2json (HashiCorp's own HCL parser, compiled to wasm). `${…}`
 * interpolations come back as their source text, which is what berth wants for run-time references:
 * the agent expands them (`${node.unique.id}`, `${NOMAD_TASK_DIR}`) when it starts a task. Any other
 * expression, and a reference to a variable berth cannot define, is refused (expressions.ts).
 */
import { SpecError } from "./body.js";
import { checkExpressions } from "./expressions.js";

/**
 * What a jobspec's `variable` blocks are filled from, highest precedence first: `-var k=v` flags,
 * then `-var-file` files (HCL or JSON, later files win), then `NOMAD_VAR_<name>` in `env`, then the
 * block's `default`. Volume specs and agent config take none.
 */
export interface HclInputs {
  /** `-var` flags as written: `name=value`. */
  vars?: string[];
  /** `-var-file` files, in the order given. */
  varFiles?: { file: string; text: string }[];
  /** The environment `NOMAD_VAR_*` is read from. */
  env?: Record<string, string | undefined>;
}

export async function decodeHcl(
  file: string,
  text: string,
  _inputs: HclInputs = {},
): Promise<Record<string, unknown>> {
  // Loaded on first use: importing the bridge costs about half a second, which every CLI command
  // that reads no spec (and the UI) should not pay.
  const { parse } = await import("@cdktn/hcl2json");
  let decoded: Record<string, unknown>;
  try {
    decoded = (await parse(file, text)) as Record<string, unknown>;
  } catch (err) {
    // The bridge reports "parse config: [file:line,col-line,col: Summary; detail]".
    const msg = err instanceof Error ? err.message : String(err);
    throw new SpecError(msg.replace(/^parse config: \[(.*)\]$/s, "$1"));
  }
  // Unevaluated expressions (var.x, 1 + 2) come back as "${…}" text: refuse them here, once, for
  // jobspecs and volume specs alike (expressions.ts).
  checkExpressions(file, text, decoded);
  return decoded;
}
