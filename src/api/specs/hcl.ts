/**
 * HCL decoding through @cdktn/hcl2json (HashiCorp's own HCL parser, compiled to wasm). `${…}`
 * interpolations come back as their source text, which is what berth wants for run-time references:
 * the agent expands them (`${node.unique.id}`, `${NOMAD_TASK_DIR}`) when it starts a task. Any other
 * expression, and a reference to a variable berth cannot define, is refused (expressions.ts).
 */
import { SpecError } from "./body.js";
import { checkExpressions } from "./expressions.js";

export async function decodeHcl(file: string, text: string): Promise<Record<string, unknown>> {
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
