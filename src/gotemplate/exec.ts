/**
 * Executes a parsed template (parse.ts) as Go's text/template does: text is copied, an action
 * prints its pipeline's value (unless it declares a variable), `if`/`with` test Go's truth,
 * `range` walks lists, maps (sorted keys) and integers, variables are scoped to their block, and
 * each stage of a pipeline gets the previous stage's value as its last argument. `and`/`or`
 * evaluate their arguments lazily and return the deciding one, as Go's do. The dot is `data`
 * (Nomad renders with none). A failing function becomes `executing … error calling <fn>: …`.
 */
import { TemplateError } from "./errors.js";
import type { Arg, Cmd, Control, Node, Pipe, Pos } from "./parse.js";
import { isMap, printValue, truth, typeName, type Value } from "./values.js";

/** A template function: its arguments already evaluated; throws an Error to fail the render. */
export type TemplateFunc = (args: Value[]) => Value;

export interface ExecOptions {
  name: string;
  funcs: { get(name: string): TemplateFunc | undefined };
  /** Nomad's `error_on_missing_key`: a missing map key fails instead of printing `<no value>`. */
  errMissingKey: boolean;
  data?: Value;
}

/** Thrown through the walk by `{{break}}` / `{{continue}}` and caught by the enclosing range. */
class Break extends Error {}
class Continue extends Error {}

/**
 * Upper bounds on output size and on range iterations (all ranges of one render together): the
 * render runs on the agent's event loop, so a template must not be able to stall or exhaust it.
 */
const MAX_OUTPUT = 64 * 1024 * 1024;
const MAX_ITERATIONS = 10_000_000;

export function execute(nodes: Node[], opts: ExecOptions): string {
  const out: string[] = [];
  let size = 0;
  let iterations = 0;
  const vars: [string, Value][] = [["$", opts.data]];
  const fail = (pos: Pos, msg: string): never => {
    throw new TemplateError(opts.name, pos.line, pos.col, msg);
  };
  const write = (s: string, pos: Pos): void => {
    size += s.length;
    if (size > MAX_OUTPUT) fail(pos, `output exceeds ${MAX_OUTPUT} bytes`);
    out.push(s);
  };

  const lookupVar = (name: string, pos: Pos): Value => {
    for (let i = vars.length - 1; i >= 0; i--) if (vars[i]![0] === name) return vars[i]![1];
    return fail(pos, `undefined variable: ${name}`);
  };
  const setVar = (name: string, v: Value, pos: Pos): void => {
    for (let i = vars.length - 1; i >= 0; i--) {
      if (vars[i]![0] === name) {
        vars[i]![1] = v;
        return;
      }
    }
    fail(pos, `undefined variable: ${name}`);
  };

  const field = (v: Value, chain: string[], pos: Pos): Value => {
    let cur = v;
    for (const name of chain) {
      if (cur === undefined || cur === null) {
        if (cur === null) fail(pos, `nil pointer evaluating interface {}.${name}`);
        return undefined;
      }
      if (!isMap(cur)) return fail(pos, `can't evaluate field ${name} in type ${typeName(cur)}`);
      if (!Object.hasOwn(cur, name)) {
        if (opts.errMissingKey) fail(pos, `map has no entry for key "${name}"`);
        return undefined;
      }
      cur = cur[name];
    }
    return cur;
  };

  const evalArg = (a: Arg, dot: Value): Value => {
    switch (a.t) {
      case "str":
        return a.v;
      case "num":
        return a.v;
      case "bool":
        return a.v;
      case "nil":
        return fail(a.pos, "nil is not a command");
      case "field":
        return field(dot, a.chain, a.pos);
      case "var":
        return field(lookupVar(a.name, a.pos), a.chain, a.pos);
      case "pipe":
        return field(evalPipe(a.pipe, dot), a.chain, a.pos);
      case "func":
        return call(a.name, [], a.pos, dot, undefined);
    }
  };

  const call = (name: string, args: Arg[], pos: Pos, dot: Value, final: Value | typeof NONE): Value => {
    if (name === "and" || name === "or") {
      const all: (() => Value)[] = args.map((x) => () => evalArg(x, dot));
      if (final !== NONE) all.push(() => final);
      if (all.length === 0) fail(pos, `wrong number of args for ${name}: want at least 1 got 0`);
      let v: Value = undefined;
      for (const get of all) {
        v = get();
        if (truth(v) === (name === "or")) return v;
      }
      return v;
    }
    const fn = opts.funcs.get(name);
    if (!fn) return fail(pos, `function ${JSON.stringify(name)} not defined`);
    const values = args.map((x) => {
      if (x.t === "nil") return null;
      return evalArg(x, dot);
    });
    if (final !== NONE) values.push(final);
    try {
      return fn(values);
    } catch (err) {
      if (err instanceof TemplateError) throw err;
      const msg = err instanceof Error ? err.message : String(err);
      return fail(pos, `executing "${opts.name}" at <${name}>: error calling ${name}: ${msg}`);
    }
  };

  const evalCmd = (c: Cmd, dot: Value, final: Value | typeof NONE): Value => {
    const [head, ...rest] = c.args;
    if (head!.t === "func") return call(head!.name, rest, head!.pos, dot, final);
    if (rest.length > 0 || final !== NONE) {
      return fail(c.pos, `can't give argument to non-function ${describe(head!)}`);
    }
    return evalArg(head!, dot);
  };

  const evalPipe = (p: Pipe, dot: Value): Value => {
    let v: Value | typeof NONE = NONE;
    for (const c of p.cmds) v = evalCmd(c, dot, v);
    const value = v as Value;
    if (p.decl.length > 0) {
      if (p.assign) setVar(p.decl[0]!, value, p.pos);
      else vars.push([p.decl[0]!, value]);
    }
    return value;
  };

  const walk = (nodes: Node[], dot: Value): void => {
    for (const n of nodes) {
      switch (n.t) {
        case "text":
          write(n.text, { line: 0, col: 0 });
          break;
        case "action": {
          const v = evalPipe(n.pipe, dot);
          if (n.pipe.decl.length === 0) write(printValue(v), n.pos);
          break;
        }
        case "if":
        case "with": {
          const mark = vars.length;
          const v = evalPipe(n.pipe, dot);
          if (truth(v)) walk(n.list, n.t === "with" ? v : dot);
          else if (n.else) walk(n.else, dot);
          vars.length = mark;
          break;
        }
        case "range":
          range(n, dot);
          break;
        case "break":
          throw new Break();
        case "continue":
          throw new Continue();
      }
    }
  };

  const range = (n: Control, dot: Value): void => {
    const mark = vars.length;
    const p = n.pipe;
    // The declared variables get each element, not the ranged value.
    const v = evalPipe({ ...p, decl: [] }, dot);
    let count: number;
    let entry: (i: number) => [Value, Value];
    if (Array.isArray(v)) {
      count = v.length;
      entry = (i) => [i, v[i]];
    } else if (isMap(v)) {
      const keys = Object.keys(v).sort();
      count = keys.length;
      entry = (i) => [keys[i]!, v[keys[i]!]];
    } else if (typeof v === "number" && Number.isInteger(v)) {
      count = Math.max(0, v);
      entry = (i) => [i, i];
    } else if (v === undefined || v === null) {
      count = 0;
      entry = () => [null, null];
    } else return fail(n.pos, `range can't iterate over ${printValue(v)}`);
    if (count === 0) {
      vars.length = mark;
      if (n.else) walk(n.else, dot);
      return;
    }
    for (let i = 0; i < count; i++) {
      if (++iterations > MAX_ITERATIONS)
        fail(n.pos, `range exceeds ${MAX_ITERATIONS} iterations in one render`);
      const [k, e] = entry(i);
      vars.length = mark;
      if (p.decl.length === 1) vars.push([p.decl[0]!, e]);
      if (p.decl.length === 2) vars.push([p.decl[0]!, k], [p.decl[1]!, e]);
      try {
        walk(n.list, e);
      } catch (err) {
        if (err instanceof Break) break;
        if (!(err instanceof Continue)) throw err;
      }
    }
    vars.length = mark;
  };

  walk(nodes, opts.data);
  return out.join("");
}

const NONE: unique symbol = Symbol("no final value");

function describe(a: Arg): string {
  switch (a.t) {
    case "str":
      return JSON.stringify(a.v);
    case "num":
      return String(a.v);
    case "bool":
      return String(a.v);
    case "field":
      return a.chain.length === 0 ? "." : `.${a.chain.join(".")}`;
    case "var":
      return [a.name, ...a.chain].join(".");
    default:
      return a.t;
  }
}
