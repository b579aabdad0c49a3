/**
 * What the HCL→JSON step leaves unevaluated, checked before a spec that has no HCL2 language is used:
 * volume specs and agent config (jobspecs, in HCL or HCL's JSON syntax, get the language, hcl2/).
 * @cdktn/hcl2json turns every expression into its source text wrapped in `${…}`: `password = var.x`
 * comes back as the string "${var.x}", `count = 1 + 2` as "${1 + 2}". Sent as is, such text would be
 * stored literally (in `secrets` too) instead of the value the author meant. So:
 * - a reference rooted at `var` or `local` is an error: there are no variables to define it;
 * - any other expression (arithmetic, a function call, a conditional, a `%{…}` template directive)
 *   is an error: berth would store its source text;
 * - a plain reference with another root passes through, as in Nomad, for run-time interpolation.
 * Errors name the file, the line where the expression appears and the field; never the value, which
 * may be a secret.
 */
import { SpecError } from "./body.js";

/** `root`, `root.a.b`, `root["k"]`, `root[0]`: what run-time interpolation can resolve. */
const REFERENCE = /^[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+|\[\s*(?:"[^"]*"|'[^']*'|\d+)\s*\])*$/;
const UNDEFINABLE_ROOTS = new Set(["var", "local"]);

/** Throws a SpecError for the first expression berth cannot honour (see above). */
export function checkExpressions(file: string, text: string, decoded: unknown): void {
  walk(decoded, [], (value, field) => {
    for (const expr of templateParts(value)) {
      const problem = problemOf(expr);
      if (problem) throw new SpecError(`${file}${lineOf(text, expr)}: ${field || "spec"}: ${problem}`);
    }
  });
}

function walk(v: unknown, path: string[], visit: (s: string, field: string) => void): void {
  if (typeof v === "string") {
    visit(v, path.join("."));
  } else if (Array.isArray(v)) {
    // hcl2json wraps each block body in a one-element list: leave its index out of the field.
    v.forEach((x, i) => walk(x, v.length === 1 ? path : [...path, `[${i}]`], visit));
  } else if (typeof v === "object" && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      visit(k, [...path, k].join("."));
      walk(x, [...path, k], visit);
    }
  }
}

/**
 * The `${…}` interpolations and `%{…}` directives in a template string, each with its delimiters;
 * `$${` and `%%{` are HCL's escapes for literal text and are skipped.
 */
export function templateParts(s: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length - 1; i++) {
    const c = s[i];
    if ((c !== "$" && c !== "%") || s[i + 1] !== "{") continue;
    if (i > 0 && s[i - 1] === c) continue; // escaped
    const end = closingBrace(s, i + 2);
    out.push(s.slice(i, end));
    i = end - 1;
  }
  return out;
}

/** The index just past the `}` closing a `{` opened before `from` (or the end of `s`). */
function closingBrace(s: string, from: number): number {
  let depth = 1;
  let inString = false;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === "{") {
      depth++;
    } else if (c === "}" && --depth === 0) {
      return i + 1;
    }
  }
  return s.length;
}

function problemOf(part: string): string | null {
  if (part.startsWith("%{")) {
    return "HCL template directives (%{ if … }, %{ for … }) are not supported: berth does not evaluate expressions";
  }
  const inner = part.slice(2, part.endsWith("}") ? -1 : undefined).trim();
  if (!REFERENCE.test(inner)) {
    return `an HCL expression that berth does not evaluate (arithmetic, functions, conditionals and the like are not supported); write the literal value`;
  }
  const root = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(inner)![0];
  if (UNDEFINABLE_ROOTS.has(root)) {
    const name = inner.slice(root.length).replace(/^\./, "") || "(none)";
    return `reference to an undefined ${root === "var" ? "variable" : "local value"} ${JSON.stringify(`${root}.${name}`)}: only a jobspec in HCL declares variables and locals; write the value in the spec`;
  }
  return null;
}

/** `:N` for the first source line that shows the expression, "" when it cannot be found. */
function lineOf(text: string, part: string): string {
  const inner = part.slice(2, part.endsWith("}") ? -1 : undefined).trim();
  if (inner === "") return "";
  const at = text.indexOf(inner);
  if (at < 0) return "";
  return `:${text.slice(0, at).split("\n").length}`;
}
