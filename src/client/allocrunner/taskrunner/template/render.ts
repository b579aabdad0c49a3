/**
 * Renders one template source with the task's environment: parse (Go's text/template grammar,
 * parse.ts) against the function table (funcs.ts), then execute (exec.ts) with no data, as Nomad
 * does. Any problem is a TemplateError naming the template, line and column.
 */
import { execute } from "./exec.js";
import { templateFuncs, type FuncEnv } from "./funcs.js";
import { parseTemplate } from "./parse.js";

export interface RenderOptions extends FuncEnv {
  /** The name errors show (Nomad's jobs see the destination path). */
  name: string;
  leftDelim?: string;
  rightDelim?: string;
  errMissingKey?: boolean;
}

export function renderTemplate(src: string, opts: RenderOptions): string {
  const funcs = templateFuncs(opts);
  const nodes = parseTemplate(
    opts.name,
    src,
    { left: opts.leftDelim || "{{", right: opts.rightDelim || "}}" },
    (fn) => funcs.has(fn),
  );
  return execute(nodes, { name: opts.name, funcs, errMissingKey: opts.errMissingKey ?? false });
}
