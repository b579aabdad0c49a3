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
import { isObj, own, setKey, sortedKeys, type Obj } from "./values.js";

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
    refuseBareName(src, node, scope);
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
    const dyn = (v as Decoded).dynamic;
    for (const [k, x] of Object.entries(v)) {
      if (k !== "dynamic" || !isDynamic(x)) setKey(out, k, evalDecoded(src, x, [...path, k], scope) as Value);
    }
    // After the static blocks, so that generated blocks join them rather than being replaced.
    if (isDynamic(dyn)) expandDynamic(src, dyn, path, scope, out);
    return out;
  }
  return v;
}

/**
 * A value that is one bare name no scope knows (`command = some_var`: quotes forgotten) is refused
 * as HCL reports an unknown variable. Nomad's jobspec2 would pass it through as "${some_var}"
 * (its EvalContext.UnknownVariable), which no client can interpolate unless a variable of that
 * name happens to be in the task's environment: berth refuses it at parse instead, a deliberate
 * narrowing. Still passed through: the same name written as a template (`"${some_var}"`, found in
 * the source since hcl2json decodes both forms alike), bare `NOMAD_*` names, and references with
 * attributes or indexes (`node.unique.name`, `attr.x`, `meta.x`, `env["X"]`), which evaluate.ts
 * hands to the client as Nomad does.
 */
function refuseBareName(src: Source, node: Node, scope: Scope): void {
  if (scope.functions === null || node.k !== "tmpl" || node.parts.length !== 1) return;
  const part = node.parts[0]!;
  if (part.k !== "interp" || part.x.k !== "var") return;
  const name = part.x.name;
  if (scope.roots.has(name) || scope.iter?.has(name) || scope.lazy?.has(name)) return;
  if (name.startsWith("NOMAD_") || src.text.includes("${" + name + "}")) return;
  throw new HclError("Unknown variable", `There is no variable named ${JSON.stringify(name)}.`, part.x.at);
}

type Decoded = Record<string, unknown>;

function isRecord(v: unknown): v is Decoded {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The bodies of one block type: hcl2json's list, or HCL's JSON syntax's single object. */
const bodiesOf = (specs: unknown): unknown[] => (Array.isArray(specs) ? specs : [specs]);

/** `dynamic "type" { for_each … content { … } }` blocks, as hcl2json decodes them (or JSON syntax). */
function isDynamic(x: unknown): x is Record<string, Decoded | Decoded[]> {
  return (
    isRecord(x) &&
    Object.values(x).every((specs) =>
      bodiesOf(specs).every((d) => isRecord(d) && "content" in d && "for_each" in d),
    )
  );
}

/**
 * Nomad's `dynamic` blocks (HCL's dynblock extension): one `type` block per element of `for_each`,
 * its `content` evaluated with the iterator (named by `iterator`, else the block type) bound to
 * `{ key, value }`, and labelled by `labels`. The blocks join the static ones of the same type.
 */
function expandDynamic(
  src: Source,
  dyn: Record<string, Decoded | Decoded[]>,
  path: string[],
  scope: Scope,
  out: Obj,
): void {
  for (const [type, specs] of Object.entries(dyn)) {
    for (const spec of bodiesOf(specs) as Decoded[]) {
      const field = [...path, "dynamic", type];
      const iterName =
        spec.iterator === undefined
          ? type
          : iteratorName(src, spec.iterator, fieldName([...field, "iterator"]));
      const coll = evalDecoded(src, spec.for_each, [...field, "for_each"], scope) as Value;
      const pairs: [Value, Value][] = Array.isArray(coll)
        ? coll.map((x, i) => [i, x])
        : isObj(coll)
          ? sortedKeys(coll).map((k) => [k, coll[k]!])
          : [];
      if (!Array.isArray(coll) && !isObj(coll)) {
        throw new SpecError(
          `${src.file}: ${fieldName([...field, "for_each"])}: Invalid dynamic for_each value; Cannot use a ${coll === null ? "null" : typeof coll} value in for_each. An iterable collection is required.`,
        );
      }
      for (const [key, value] of pairs) {
        const inner: Scope = { ...scope, iter: new Map(scope.iter).set(iterName, { key, value }) };
        const labels = (evalDecoded(src, spec.labels ?? [], [...field, "labels"], inner) as Value[]).map(
          String,
        );
        const content: unknown = Array.isArray(spec.content)
          ? ((spec.content as unknown[])[0] ?? {})
          : spec.content;
        let body = evalDecoded(src, content, [...field, "content"], inner) as Value;
        // Labels nest as hcl2json writes labelled blocks: {label: [body]}.
        for (const label of [...labels].reverse()) body = { [label]: [body] };
        addBlock(out, type, body, labels.length > 0);
      }
    }
  }
}

function iteratorName(src: Source, raw: unknown, field: string): string {
  const node = typeof raw === "string" ? templateOf(src, raw, field) : undefined;
  const only = node?.k === "tmpl" && node.parts.length === 1 ? node.parts[0] : undefined;
  if (only?.k === "interp" && only.x.k === "var") return only.x.name;
  throw new SpecError(
    `${src.file}: ${field}: Invalid dynamic iterator name; Dynamic iterator must be a single variable name.`,
  );
}

/** Adds one generated block to the body: appended to the list, or merged into the labelled map. */
function addBlock(out: Obj, type: string, body: Value, labelled: boolean): void {
  const have = own(out, type);
  if (!labelled) {
    setKey(out, type, [...(Array.isArray(have) ? have : have === undefined ? [] : [have]), body]);
    return;
  }
  const merged: Obj = isObj(have) ? { ...have } : {};
  const [label, blocks] = Object.entries(body as Obj)[0]!;
  const prev = own(merged, label);
  setKey(merged, label, [...(Array.isArray(prev) ? prev : []), ...(blocks as Value[])]);
  setKey(out, type, merged);
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
