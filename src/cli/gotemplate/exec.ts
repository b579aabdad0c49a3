/**
 * Runs a parsed Go template over JSON data the way Go's text/template executes one: dot and
 * variables, field chains (a missing map key is `<no value>`, a missing struct field an error naming
 * it — values.ts says which objects are which), pipelines whose value becomes the next command's
 * last argument, if/with/range with else, lazy `and`/`or`, and funcs.ts's functions. An execution
 * error is Go's one line: `template: :1:2: executing "" at <.Foo>: can't evaluate field Foo in type
 * struct`.
 */
import {
  argString,
  commandString,
  lineOf,
  pipeString,
  TemplateError,
  type Arg,
  type Command,
  type ControlNode,
  type Node,
  type Pipe,
} from "./ast.js";
import { ArgTypeError, FUNC_NAMES, FUNCS } from "./funcs.js";
import { formatValue } from "./gofmt.js";
import { parse } from "./parser.js";
import { isTrue, kindOf, reachedBy, sortedEntries, typeName } from "./values.js";

/** The absent "previous pipeline value" of a pipeline's first command. */
const MISSING = Symbol("missing");
type Final = unknown;

/** Thrown by {{break}} and {{continue}}, caught by the innermost range. */
const BREAK = new Error("{{break}}");
const CONTINUE = new Error("{{continue}}");

class State {
  out = "";
  private vars: { name: string; value: unknown }[];

  constructor(
    private readonly src: string,
    data: unknown,
  ) {
    this.vars = [{ name: "$", value: data }];
  }

  /** Stops with Go's execution error, at `pos` with `context` as the `<…>` part. */
  errorf(pos: number, context: string, msg: string): never {
    const line = lineOf(this.src, pos);
    const nl = this.src.lastIndexOf("\n", pos - 1);
    const col = nl < 0 ? pos : pos - nl - 1;
    const ctx = context.length > 20 ? `${context.slice(0, 20)}...` : context;
    throw new TemplateError(`template: :${line}:${col}: executing "" at <${ctx}>: ${msg}`);
  }

  private mark(): number {
    return this.vars.length;
  }
  private pop(mark: number): void {
    this.vars.length = mark;
  }
  private varValue(name: string, pos: number): unknown {
    for (let i = this.vars.length - 1; i >= 0; i--)
      if (this.vars[i]!.name === name) return this.vars[i]!.value;
    return this.errorf(pos, name, `undefined variable: ${name}`);
  }
  private setVar(name: string, value: unknown, pos: number): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    }
    this.errorf(pos, name, `undefined variable: ${name}`);
  }

  walkList(dot: unknown, list: Node[]): void {
    for (const n of list) this.walk(dot, n);
  }

  private walk(dot: unknown, node: Node): void {
    switch (node.type) {
      case "text":
        this.out += node.text;
        return;
      case "action": {
        const v = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.out += formatValue(v);
        return;
      }
      case "if":
      case "with": {
        const mark = this.mark();
        const v = this.evalPipeline(dot, node.pipe);
        if (isTrue(v)) this.walkList(node.type === "with" ? v : dot, node.list);
        else if (node.elseList) this.walkList(dot, node.elseList);
        this.pop(mark);
        return;
      }
      case "range":
        return this.walkRange(dot, node);
      case "break":
        throw BREAK;
      case "continue":
        throw CONTINUE;
    }
  }

  private walkRange(dot: unknown, node: ControlNode): void {
    const outer = this.mark();
    const v = this.evalPipeline(dot, node.pipe);
    const mark = this.mark();
    const decl = node.pipe.decl.length;
    let entries: [unknown, unknown][];
    const k = kindOf(v);
    if (k === "slice") entries = (v as unknown[]).map((e, i) => [i, e]);
    else if (k === "map") entries = sortedEntries(v as object);
    else if (k === "int") entries = Array.from({ length: Math.max(0, Number(v)) }, (_, i) => [i, i]);
    else if (k === "invalid" || k === "nil") entries = [];
    else
      return this.errorf(
        node.pos,
        `range ${pipeString(node.pipe)}`,
        `range can't iterate over ${formatValue(v)}`,
      );
    for (const [key, elem] of entries) {
      if (decl > 0) this.vars[this.vars.length - 1]!.value = elem;
      if (decl > 1) this.vars[this.vars.length - 2]!.value = key;
      try {
        this.walkList(elem, node.list);
      } catch (err) {
        if (err === BREAK) break;
        if (err !== CONTINUE) throw err;
      } finally {
        this.pop(mark);
      }
    }
    if (entries.length === 0 && node.elseList) this.walkList(dot, node.elseList);
    this.pop(outer);
  }

  private evalPipeline(dot: unknown, pipe: Pipe): unknown {
    let value: Final = MISSING;
    for (const cmd of pipe.cmds) value = this.evalCommand(dot, cmd, value);
    for (const name of pipe.decl) {
      if (pipe.isAssign) this.setVar(name, value, pipe.pos);
      else this.vars.push({ name, value });
    }
    return value;
  }

  private notAFunction(cmd: Command, final: Final): void {
    if (cmd.args.length > 1 || final !== MISSING) {
      this.errorf(
        cmd.pos,
        commandString(cmd),
        `can't give argument to non-function ${argString(cmd.args[0]!)}`,
      );
    }
  }

  private evalCommand(dot: unknown, cmd: Command, final: Final): unknown {
    const first = cmd.args[0]!;
    switch (first.type) {
      case "field":
        return this.evalFieldChain(dot, first, first.idents, cmd.args, final);
      case "chain":
        return this.evalFieldChain(this.evalArg(dot, first.node), first, first.fields, cmd.args, final);
      case "identifier":
        return this.evalFunction(dot, first.name, cmd, cmd.args, final);
      case "variable": {
        const value = this.varValue(first.idents[0]!, first.pos);
        if (first.idents.length === 1) {
          this.notAFunction(cmd, final);
          return value;
        }
        return this.evalFieldChain(value, first, first.idents.slice(1), cmd.args, final);
      }
      default:
        this.notAFunction(cmd, final);
        if (first.type === "nil") return this.errorf(first.pos, "nil", "nil is not a command");
        return this.evalArg(dot, first);
    }
  }

  private evalFieldChain(receiver: unknown, node: Arg, idents: string[], args: Arg[], final: Final): unknown {
    let r = receiver;
    idents.forEach((name, i) => {
      r = this.evalField(
        name,
        node,
        i === idents.length - 1 ? args : [node],
        i === idents.length - 1 ? final : MISSING,
        r,
      );
    });
    return r;
  }

  private evalField(name: string, node: Arg, args: Arg[], final: Final, receiver: unknown): unknown {
    const at = (msg: string): never => this.errorf(node.pos, argString(node), msg);
    const k = kindOf(receiver);
    if (k === "invalid") return undefined;
    if (k === "nil") return at(`nil pointer evaluating interface {}.${name}`);
    const hasArgs = args.length > 1 || final !== MISSING;
    const obj = receiver as Record<string, unknown>;
    if (k === "struct") {
      if (!Object.hasOwn(obj, name)) return at(`can't evaluate field ${name} in type ${typeName(receiver)}`);
      if (hasArgs) return at(`${name} has arguments but cannot be invoked as function`);
      return reachedBy(name, obj[name]);
    }
    if (k === "map") {
      if (hasArgs) return at(`${name} is not a method but has arguments`);
      return Object.hasOwn(obj, name) ? reachedBy(name, obj[name]) : undefined;
    }
    return at(`can't evaluate field ${name} in type ${typeName(receiver)}`);
  }

  private evalFunction(dot: unknown, name: string, cmd: Command | Arg, args: Arg[], final: Final): unknown {
    const pos = cmd.pos;
    const context = "args" in cmd ? commandString(cmd) : argString(cmd);
    const argNodes = args.slice(1);
    if (name === "and" || name === "or") {
      const n = argNodes.length + (final !== MISSING ? 1 : 0);
      if (n < 1) this.errorf(pos, context, `wrong number of args for ${name}: want at least 1 got 0`);
      let v: unknown;
      for (const a of argNodes) {
        v = this.evalArg(dot, a);
        if (isTrue(v) === (name === "or")) return v;
      }
      return final !== MISSING ? final : v;
    }
    const fn = FUNCS.get(name)!;
    const numIn = argNodes.length + (final !== MISSING ? 1 : 0);
    if (fn.variadic ? numIn < fn.params : numIn !== fn.params) {
      const want = fn.variadic ? `at least ${fn.params}` : String(fn.params);
      this.errorf(
        pos,
        context,
        `wrong number of args for ${name}: want ${want} got ${fn.variadic ? argNodes.length : numIn}`,
      );
    }
    const values = argNodes.map((a) => this.evalArg(dot, a));
    if (final !== MISSING) values.push(final);
    try {
      return fn.fn(values);
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      this.errorf(pos, context, err instanceof ArgTypeError ? msg : `error calling ${name}: ${msg}`);
    }
  }

  private evalArg(dot: unknown, n: Arg): unknown {
    switch (n.type) {
      case "dot":
        return dot;
      case "nil":
        return null;
      case "field":
        return this.evalFieldChain(dot, n, n.idents, [n], MISSING);
      case "variable": {
        const value = this.varValue(n.idents[0]!, n.pos);
        return n.idents.length === 1 ? value : this.evalFieldChain(value, n, n.idents.slice(1), [n], MISSING);
      }
      case "chain":
        return this.evalFieldChain(this.evalArg(dot, n.node), n, n.fields, [n], MISSING);
      case "pipe":
        return this.evalPipeline(dot, n.pipe);
      case "identifier":
        return this.evalFunction(dot, n.name, n, [n], MISSING);
      case "bool":
      case "number":
      case "string":
        return n.value;
    }
  }
}

/** `template` (Go text/template syntax) executed over `data`; throws TemplateError with Go's message. */
export function render(template: string, data: unknown): string {
  const nodes = parse(template, FUNC_NAMES);
  const state = new State(template, data);
  state.walkList(data, nodes);
  return state.out;
}
