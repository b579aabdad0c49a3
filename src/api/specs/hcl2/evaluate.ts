/**
 * Evaluation of the syntax tree (ast.ts) as Nomad's jobspec2 evaluates a jobspec: `var` and `local`
 * are the known roots, plus the iterator names of enclosing `for` expressions; a reference rooted
 * at any other name (`NOMAD_TASK_DIR`, `node.unique.name`, `attr.kernel.name`, `meta.rack`,
 * `env["HOME"]`) evaluates to its own source text wrapped in `${…}`, which the client interpolates
 * when it starts the task (Nomad's EvalContext.UnknownVariable does the same).
 */
import { HclError, type ForNode, type Node, type TmplPart, type Value } from "./ast.js";
import { binaryOp, bool, getAttr, getIndex, num } from "./ops.js";
import { convert, typeFromExpr } from "./types.js";
import { isObj, own, setKey, sortedKeys, toBool, toStr, typeName, type Obj } from "./values.js";

export type HclFunction = (args: Value[], at: number) => Value;

export interface Scope {
  /** Root objects by name (`var`, `local`); a getter lets `local` evaluate on first use. */
  roots: Map<string, () => Value>;
  /** Roots whose attributes are looked up one by one (`local.x` evaluates only x, and first). */
  lazy?: Map<string, (name: string, at: number) => Value>;
  /** null where HCL evaluates without a context (defaults, -var values): no calls, no references. */
  functions: ReadonlyMap<string, HclFunction> | null;
  /** Iterator names bound by enclosing `for` expressions and directives. */
  iter?: Map<string, Value>;
}

function withIter(s: Scope, bind: [string | undefined, Value][]): Scope {
  const iter = new Map(s.iter);
  for (const [n, v] of bind) if (n !== undefined) iter.set(n, v);
  return { ...s, iter };
}

export function evaluate(x: Node, s: Scope): Value {
  switch (x.k) {
    case "lit":
      return x.v;
    case "paren":
      return evaluate(x.x, s);
    case "tmpl":
      return template(x.parts, s);
    case "var":
    case "attr":
    case "index": {
      if (s.functions === null)
        throw new HclError("Variables not allowed", "Variables may not be used here.", x.at);
      if (x.k === "attr" && x.obj.k === "var" && !s.iter?.has(x.obj.name)) {
        const lazy = s.lazy?.get(x.obj.name);
        if (lazy !== undefined) return lazy(x.name, x.at);
      }
      const runtime = runtimeReference(x, s);
      if (runtime !== undefined) return runtime;
      if (x.k === "var") return lookupRoot(x.name, x.at, s);
      if (x.k === "attr") return getAttr(evaluate(x.obj, s), x.name, x.at);
      return getIndex(evaluate(x.obj, s), evaluate(x.key, s), x.at);
    }
    case "anon":
      return s.iter?.get("\0splat") ?? null;
    case "splat": {
      const src = evaluate(x.src, s);
      if (src === null) return [];
      const items = Array.isArray(src) ? src : [src];
      return items.map((it) => evaluate(x.each, withIter(s, [["\0splat", it]])));
    }
    case "call":
      return call(x, s);
    case "tuple":
      return x.items.map((it) => evaluate(it, s));
    case "object": {
      const out: Obj = {};
      for (const it of x.items) {
        const k = evaluate(it.key, s);
        if (typeof k !== "string" && typeof k !== "number" && typeof k !== "boolean") {
          throw new HclError(
            "Incorrect key type",
            "Can't use this value as a key: a string is required.",
            it.key.at,
          );
        }
        setKey(out, toStr(k), evaluate(it.value, s));
      }
      return out;
    }
    case "unary": {
      const v = evaluate(x.x, s);
      return x.op === "-" ? -num(v, x.at) : !bool(v, x.at);
    }
    case "binary":
      // && and || evaluate both sides, as HCL does (no short-circuit).
      return binaryOp(x.op, evaluate(x.l, s), evaluate(x.r, s), x.l.at, x.r.at, x.at);
    case "cond": {
      const c = evaluate(x.c, s);
      if (c === null)
        throw new HclError(
          "Null condition",
          "The condition value is null. Conditions must either be true or false.",
          x.c.at,
        );
      return bool(c, x.c.at) ? evaluate(x.t, s) : evaluate(x.f, s);
    }
    case "for":
      return forExpr(x, s);
  }
}

/** `${source}` for a reference whose root is not known here, so the client can interpolate it. */
function runtimeReference(x: Node & { k: "var" | "attr" | "index" }, s: Scope): string | undefined {
  let root: Node = x;
  while (root.k === "attr" || root.k === "index") root = root.obj;
  if (root.k !== "var" || s.roots.has(root.name) || s.iter?.has(root.name)) return undefined;
  return "${" + x.src + "}";
}

function lookupRoot(name: string, at: number, s: Scope): Value {
  const it = s.iter?.get(name);
  if (it !== undefined) return it;
  return s.roots.get(name)!();
}

function call(x: Node & { k: "call" }, s: Scope): Value {
  if (s.functions === null)
    throw new HclError("Function calls not allowed", "Functions may not be called here.", x.at);
  if (x.name === "try" || x.name === "can") return tryCan(x, s);
  if (x.name === "convert") {
    if (x.args.length !== 2)
      throw new HclError(
        "Error in function call",
        'Call to function "convert" failed: 2 arguments required.',
        x.at,
      );
    try {
      return convert(evaluate(x.args[0]!, s), typeFromExpr(x.args[1]!));
    } catch (err) {
      if (err instanceof HclError) throw err;
      throw new HclError('Invalid value for "value" parameter', `${(err as Error).message}.`, x.args[0]!.at);
    }
  }
  const fn = s.functions.get(x.name);
  if (fn === undefined) {
    throw new HclError(
      "Call to unknown function",
      `There is no function named ${JSON.stringify(x.name)}.`,
      x.at,
    );
  }
  let args = x.args.map((a) => evaluate(a, s));
  if (x.expand) {
    const last = args.pop();
    if (!Array.isArray(last))
      throw new HclError(
        "Invalid expanding argument value",
        "The expanding argument (indicated by ...) must be of a tuple, list, or set type.",
        x.at,
      );
    args = [...args, ...last];
  }
  try {
    return fn(args, x.at);
  } catch (err) {
    if (err instanceof HclError && err.at < 0) {
      throw new HclError(
        "Error in function call",
        `Call to function ${JSON.stringify(x.name)} failed: ${err.detail}`,
        x.at,
      );
    }
    throw err;
  }
}

/**
 * `try(a, b, …)`: the first argument that evaluates without error; `can(x)`: whether x does. Both
 * need their arguments unevaluated, so they are part of the evaluator rather than functions.ts.
 */
function tryCan(x: Node & { k: "call" }, s: Scope): Value {
  if (x.name === "can" && x.args.length !== 1)
    throw new HclError("Error in function call", 'Call to function "can" failed: 1 argument required.', x.at);
  for (const a of x.args) {
    try {
      const v = evaluate(a, s);
      return x.name === "can" ? true : v;
    } catch (err) {
      if (!(err instanceof HclError)) throw err;
    }
  }
  if (x.name === "can") return false;
  throw new HclError(
    "Error in function call",
    'Call to function "try" failed: no expression succeeded.',
    x.at,
  );
}

/** The (key, value) pairs a `for` iterates: list indices or object keys in lexical order. */
function pairs(coll: Value, at: number): [Value, Value][] {
  if (Array.isArray(coll)) return coll.map((v, i) => [i, v]);
  if (isObj(coll)) return sortedKeys(coll).map((k) => [k, coll[k]!]);
  const what = coll === null ? "null" : `a ${typeName(coll)}`;
  throw new HclError(
    "Iteration over non-iterable value",
    `A value of type ${what} cannot be used as the collection in a 'for' expression.`,
    at,
  );
}

function forExpr(x: ForNode, s: Scope): Value {
  const items = pairs(evaluate(x.coll, s), x.coll.at);
  const tuple: Value[] = [];
  const obj: Obj = {};
  for (const [k, v] of items) {
    const inner = withIter(s, [
      [x.keyVar, k],
      [x.valVar, v],
    ]);
    if (x.cond !== undefined) {
      const c = evaluate(x.cond, inner);
      if (typeof c !== "boolean")
        throw new HclError(
          "Invalid 'for' condition",
          "The 'if' clause value is invalid: a bool is required.",
          x.cond.at,
        );
      if (!c) continue;
    }
    if (x.key === undefined) {
      tuple.push(evaluate(x.value, inner));
      continue;
    }
    const key = toStr(evaluate(x.key, inner), "key");
    const value = evaluate(x.value, inner);
    const prev = own(obj, key);
    if (x.group) setKey(obj, key, [...((prev as Value[] | undefined) ?? []), value]);
    else if (prev !== undefined) {
      throw new HclError(
        "Duplicate object key",
        `Two different items produced the key ${JSON.stringify(key)} in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.`,
        x.key.at,
      );
    } else setKey(obj, key, value);
  }
  return x.key === undefined ? tuple : obj;
}

/**
 * A template's value: the value of its only interpolation when it has nothing else (HCL's template
 * unwrapping, so `count = "${var.n}"` stays a number), otherwise the string it renders.
 */
function template(parts: TmplPart[], s: Scope): Value {
  const only = parts[0];
  if (parts.length === 1 && only?.k === "interp") return evaluate(only.x, s);
  return render(parts, s);
}

function render(parts: TmplPart[], s: Scope): string {
  let out = "";
  for (const p of parts) {
    if (p.k === "text") out += p.s;
    else if (p.k === "interp") out += interpolated(evaluate(p.x, s), p.x.at);
    else if (p.k === "if") {
      const c = evaluate(p.c, s);
      if (typeof c !== "boolean" && c !== "true" && c !== "false") {
        throw new HclError(
          "Invalid 'if' directive",
          "The condition of an %{ if } directive must be true or false.",
          p.c.at,
        );
      }
      out += render(toBool(c) ? p.then : p.else, s);
    } else {
      for (const [k, v] of pairs(evaluate(p.coll, s), p.coll.at)) {
        out += render(
          p.body,
          withIter(s, [
            [p.keyVar, k],
            [p.valVar, v],
          ]),
        );
      }
    }
  }
  return out;
}

function interpolated(v: Value, at: number): string {
  if (v === null)
    throw new HclError(
      "Invalid template interpolation value",
      "The expression result is null. Cannot include a null value in a string template.",
      at,
    );
  if (typeof v === "object")
    throw new HclError(
      "Invalid template interpolation value",
      `Cannot include the given value in a string template: string required (it is a ${typeName(v)}).`,
      at,
    );
  return toStr(v);
}
