/**
 * Renders one template source with the task's environment: Go's text/template (src/gotemplate/)
 * against consul-template's function table (funcs.ts), with no data, as Nomad does. Any problem is
 * a TemplateError naming the template, line and column.
 */
import type { TemplateFunc } from "../../../../gotemplate/exec.js";
import { renderGoTemplate } from "../../../../gotemplate/template.js";
import { templateFuncs, type FuncEnv } from "./funcs.js";

export interface RenderOptions extends FuncEnv {
  /** The name errors show (Nomad's jobs see the destination path). */
  name: string;
  leftDelim?: string;
  rightDelim?: string;
  errMissingKey?: boolean;
}

/** consul-template adds Sprig's functions as `sprig_<name>`; berth has none of them. */
const SPRIG_PREFIX = "sprig_";

const sprigUnsupported: TemplateFunc = () => {
  throw new Error("berth's template renderer does not implement Sprig functions (sprig_*)");
};

export function renderTemplate(src: string, opts: RenderOptions): string {
  const table = templateFuncs(opts);
  const funcs = {
    get: (fn: string): TemplateFunc | undefined =>
      table.get(fn) ?? (fn.startsWith(SPRIG_PREFIX) ? sprigUnsupported : undefined),
  };
  return renderGoTemplate(src, { ...opts, funcs });
}
