/**
 * Evaluation of a body as @cdktn/hcl2json decodes it: every string is HCL template source (an
 * expression that is not a constant comes back as `"${source}"`), lists and objects hold more of
 * the same, and object keys are attribute names or block labels, which HCL never evaluates.
 * Errors become SpecErrors naming the file, the line and the field: the line is found by looking
 * for the expression's text in the file, since the decoded body keeps no positions.
 */
import { SpecError } from "../body.js";
import { HclError, type Node, type Value } from "./ast.js";
import { evaluate, type Scope } from "./evaluate.js";
import { parseTemplate } from "./template.js";
import { setKey, type Obj } from "./values.js";

export interface Source {
  file: string;
  text: string;
}

/** The parsed template of a decoded string; parsing errors are located like evaluation errors. */
export function templateOf(src: Source, s: string, field: string): Node {
  try {
    return parseTemplate(s);
  } catch (err) {
    throw located(src, s, field, err);
  }
}

/** Evaluates one decoded string in `scope`. */
export function evalString(src: Source, s: string, field: string, scope: Scope): Value {
  const node = templateOf(src, s, field);
  try {
    return evaluate(node, scope);
  } catch (err) {
    throw located(src, s, field, err);
  }
}

/** A decoded value with every string in it evaluated; `path` names it for errors. */
export function evalDecoded(src: Source, v: unknown, path: string[], scope: Scope): unknown {
  if (typeof v === "string") return evalString(src, v, fieldName(path), scope);
  if (Array.isArray(v)) {
    // hcl2json wraps each block body in a one-element list: leave its index out of the field.
    return v.map((x, i) => evalDecoded(src, x, v.length === 1 ? path : [...path, `[${i}]`], scope));
  }
  if (typeof v === "object" && v !== null) {
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) setKey(out, k, evalDecoded(src, x, [...path, k], scope) as Value);
    return out;
  }
  return v;
}

export function fieldName(path: string[]): string {
  return path.join(".") || "spec";
}

/**
 * A SpecError for `err` raised while handling the decoded string `s`: `file:line: field: Summary;
 * detail`. Anything that is not a language error is passed through unchanged.
 */
export function located(src: Source, s: string, field: string, err: unknown): unknown {
  if (!(err instanceof HclError)) return err;
  return new SpecError(`${src.file}${lineOf(src.text, s, err.at)}: ${field}: ${err.summary}; ${err.detail}`);
}

/** Whether `s` is one `${…}` interpolation and nothing else: how hcl2json hands over an expression. */
function isWrapped(s: string): boolean {
  if (!s.startsWith("${") || !s.endsWith("}")) return false;
  try {
    const t = parseTemplate(s);
    return t.k === "tmpl" && t.parts.length === 1 && t.parts[0]!.k === "interp";
  } catch {
    return false;
  }
}

/** `:N` for the line of the source that shows `s` (at offset `at` in it), "" when not found. */
export function lineOf(text: string, s: string, at = -1): string {
  const wrapped = isWrapped(s);
  const body = wrapped ? s.slice(2, -1) : s;
  const offset = wrapped ? Math.max(0, at - 2) : Math.max(0, at);
  const probe = body.split("\n")[0]!.slice(0, 80);
  if (probe.trim() === "") return "";
  const found = text.indexOf(probe);
  if (found < 0) return "";
  const line = text.slice(0, found).split("\n").length;
  return `:${line + (at >= 0 ? body.slice(0, offset).split("\n").length - 1 : 0)}`;
}
