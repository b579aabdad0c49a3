/**
 * Go's `text/template`, as berth renders task templates (client/…/template): parse against a function table (a name the table lacks is a parse
 * error, as Go's), then execute with `data` as dot. Errors are TemplateErrors naming template,
 * line and column. The engine is berth's own: no maintained npm package implements Go's templates
 * faithfully (trim markers, pipelines passing the last argument, Go's truth and printing rules).
 */
import { execute, type TemplateFunc } from "./exec.js";
import { parseTemplate } from "./parse.js";
import type { Value } from "./values.js";

export interface GoTemplateOptions {
  /** The name errors show. */
  name: string;
  funcs: { get(name: string): TemplateFunc | undefined };
  data?: Value;
  leftDelim?: string;
  rightDelim?: string;
  /** A missing map key fails instead of printing `<no value>` (Go's missingkey=error). */
  errMissingKey?: boolean;
}

export function renderGoTemplate(src: string, opts: GoTemplateOptions): string {
  const nodes = parseTemplate(
    opts.name,
    src,
    { left: opts.leftDelim || "{{", right: opts.rightDelim || "}}" },
    (fn) => opts.funcs.get(fn) !== undefined,
  );
  return execute(nodes, {
    name: opts.name,
    funcs: opts.funcs,
    errMissingKey: opts.errMissingKey ?? false,
    data: opts.data,
  });
}
