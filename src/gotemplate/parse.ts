/**
 * The parser of the template language (Go's text/template grammar): a tree of text, actions,
 * `if`/`else if`/`else`, `range` (with `else`, `break`, `continue`), `with` (with `else`), variables
 * (`$x := …`, `$x = …`, `range $i, $e := …`), pipelines (`a | b c`), parenthesized pipelines, field
 * chains (`.A.B`, `$x.A`, `(…).A`) and literals. `define`, `template` and `block` (named templates)
 * are refused with a clear error: one template per stanza is what Nomad jobs use. A function name
 * the language does not know is a parse error, as in Go (`function "x" not defined`).
 */
import { TemplateError } from "./errors.js";
import { lex, type Delims, type Token } from "./lexer.js";

export interface Pos {
  line: number;
  col: number;
}

export type Arg =
  | { t: "func"; name: string; pos: Pos }
  | { t: "field"; chain: string[]; pos: Pos }
  | { t: "var"; name: string; chain: string[]; pos: Pos }
  | { t: "str"; v: string; pos: Pos }
  | { t: "num"; v: number; pos: Pos }
  | { t: "bool"; v: boolean; pos: Pos }
  | { t: "nil"; pos: Pos }
  | { t: "pipe"; pipe: Pipe; chain: string[]; pos: Pos };

export interface Cmd {
  args: Arg[];
  pos: Pos;
}

export interface Pipe {
  decl: string[];
  /** `=` (assign to existing variables) rather than `:=`. */
  assign: boolean;
  cmds: Cmd[];
  pos: Pos;
}

export interface Control {
  t: "if" | "with" | "range";
  pipe: Pipe;
  list: Node[];
  else: Node[] | null;
  pos: Pos;
}

export type Node =
  | { t: "text"; text: string }
  | { t: "action"; pipe: Pipe; pos: Pos }
  | Control
  | { t: "break" | "continue"; pos: Pos };

const KEYWORDS = new Set([
  "if",
  "else",
  "end",
  "range",
  "with",
  "break",
  "continue",
  "define",
  "template",
  "block",
]);

type Stop = { kind: "end" } | { kind: "else"; tokens: Token[]; pos: Pos } | { kind: "eof" };

export function parseTemplate(
  name: string,
  src: string,
  delims: Delims,
  isFunc: (name: string) => boolean,
): Node[] {
  const items = lex(name, src, delims);
  let idx = 0;
  let rangeDepth = 0;
  const err = (p: Pos, msg: string): never => {
    throw new TemplateError(name, p.line, p.col, msg);
  };

  /** Nodes up to `{{end}}`, `{{else …}}` or the end of the source. */
  const list = (): { nodes: Node[]; stop: Stop } => {
    const nodes: Node[] = [];
    while (idx < items.length) {
      const item = items[idx++]!;
      if (item.kind === "text") {
        nodes.push({ t: "text", text: item.text });
        continue;
      }
      const pos = { line: item.line, col: item.col };
      const toks = item.tokens;
      if (toks.length === 0) err(pos, "missing value for command");
      const head = toks[0]!;
      const kw = head.kind === "ident" && KEYWORDS.has(head.value) ? head.value : null;
      if (kw === "end") {
        if (toks.length > 1) err(tokPos(toks[1]!), `unexpected ${show(toks[1]!)} in end`);
        return { nodes, stop: { kind: "end" } };
      }
      if (kw === "else") return { nodes, stop: { kind: "else", tokens: toks.slice(1), pos } };
      if (kw === "if" || kw === "with" || kw === "range") {
        nodes.push(control(kw, toks.slice(1), pos));
      } else if (kw === "break" || kw === "continue") {
        if (rangeDepth === 0) err(pos, `{{${kw}}} outside {{range}}`);
        if (toks.length > 1) err(tokPos(toks[1]!), `unexpected ${show(toks[1]!)} in ${kw}`);
        nodes.push({ t: kw, pos });
      } else if (kw !== null) {
        err(pos, `{{${kw}}} (named templates) is not supported by berth's template renderer`);
      } else {
        nodes.push({ t: "action", pipe: pipeline(toks, pos, "command", true), pos });
      }
    }
    return { nodes, stop: { kind: "eof" } };
  };

  const control = (kw: "if" | "with" | "range", toks: Token[], pos: Pos): Node => {
    const pipe = pipeline(toks, pos, kw, true, kw === "range");
    if (kw === "range") rangeDepth++;
    const body = list();
    if (kw === "range") rangeDepth--;
    if (body.stop.kind === "eof") err(pos, `unexpected EOF: {{${kw}}} has no {{end}}`);
    let elseNodes: Node[] | null = null;
    if (body.stop.kind === "else") {
      const rest = body.stop.tokens;
      const chained = rest[0]?.kind === "ident" && (rest[0].value === "if" || rest[0].value === "with");
      if (chained) {
        // `{{else if …}}` is an `if` inside the else branch, closed by the same `{{end}}`.
        elseNodes = [control(rest[0]!.value as "if" | "with", rest.slice(1), body.stop.pos)];
      } else {
        if (rest.length > 0) err(tokPos(rest[0]!), `unexpected ${show(rest[0]!)} in else`);
        const tail = list();
        if (tail.stop.kind === "else") err(tail.stop.pos, "expected end; found {{else}}");
        if (tail.stop.kind === "eof") err(pos, `unexpected EOF: {{${kw}}} has no {{end}}`);
        elseNodes = tail.nodes;
      }
    }
    return { t: kw, pipe, list: body.nodes, else: elseNodes, pos };
  };

  const pipeline = (toks: Token[], pos: Pos, ctx: string, top: boolean, twoVars = false): Pipe => {
    let i = 0;
    const decl: string[] = [];
    let assign = false;
    // `$x :=`, `$x =`, and for range `$i, $e :=`.
    if (top && toks[0]?.kind === "variable") {
      const names = [toks[0].value];
      let j = 1;
      if (twoVars && toks[1]?.kind === "comma" && toks[2]?.kind === "variable") {
        names.push(toks[2].value);
        j = 3;
      }
      const op = toks[j];
      if (op?.kind === "declare" || op?.kind === "assign") {
        decl.push(...names);
        assign = op.kind === "assign";
        i = j + 1;
      }
    }
    const cmds: Cmd[] = [];
    let args: Arg[] = [];
    let cmdPos = toks[i] ? tokPos(toks[i]!) : pos;
    const endCmd = (at: Pos): void => {
      if (args.length === 0) err(at, `missing value for ${ctx}`);
      cmds.push({ args, pos: cmdPos });
      args = [];
    };
    while (i < toks.length) {
      const t = toks[i]!;
      if (t.kind === "pipe") {
        endCmd(tokPos(t));
        i++;
        cmdPos = toks[i] ? tokPos(toks[i]!) : tokPos(t);
        continue;
      }
      const r = operand(toks, i, ctx);
      args.push(r.arg);
      i = r.next;
    }
    endCmd(pos);
    for (const c of cmds.slice(1)) {
      const a = c.args[0]!;
      if (a.t === "str" || a.t === "num" || a.t === "bool" || a.t === "nil")
        err(a.pos, `non executable command in pipeline stage ${cmds.indexOf(c) + 1}`);
    }
    return { decl, assign, cmds, pos };
  };

  const operand = (toks: Token[], i: number, ctx: string): { arg: Arg; next: number } => {
    const t = toks[i]!;
    const p = tokPos(t);
    const chain = (from: number): { chain: string[]; next: number } => {
      const out: string[] = [];
      let k = from;
      while (toks[k]?.kind === "field" && toks[k]!.adjacent) out.push(toks[k++]!.value);
      return { chain: out, next: k };
    };
    switch (t.kind) {
      case "string":
        return { arg: { t: "str", v: t.value, pos: p }, next: i + 1 };
      case "char":
        return { arg: { t: "num", v: Number(t.value), pos: p }, next: i + 1 };
      case "number": {
        const v = Number(t.value.replaceAll("_", "").replace(/^([+-]?)0[oO]/, "$10o"));
        if (!Number.isFinite(v)) err(p, `bad number syntax: ${JSON.stringify(t.value)}`);
        return { arg: { t: "num", v, pos: p }, next: i + 1 };
      }
      case "dot":
        return { arg: { t: "field", chain: [], pos: p }, next: i + 1 };
      case "field": {
        const c = chain(i + 1);
        return { arg: { t: "field", chain: [t.value, ...c.chain], pos: p }, next: c.next };
      }
      case "variable": {
        const c = chain(i + 1);
        return { arg: { t: "var", name: t.value, chain: c.chain, pos: p }, next: c.next };
      }
      case "lparen": {
        let depth = 1;
        let k = i + 1;
        for (; k < toks.length && depth > 0; k++) {
          if (toks[k]!.kind === "lparen") depth++;
          else if (toks[k]!.kind === "rparen") depth--;
        }
        if (depth > 0) err(p, "unclosed left paren");
        const inner = pipeline(toks.slice(i + 1, k - 1), p, "parenthesized pipeline", true);
        const c = chain(k);
        return { arg: { t: "pipe", pipe: inner, chain: c.chain, pos: p }, next: c.next };
      }
      case "ident": {
        if (t.value === "true" || t.value === "false")
          return { arg: { t: "bool", v: t.value === "true", pos: p }, next: i + 1 };
        if (t.value === "nil") return { arg: { t: "nil", pos: p }, next: i + 1 };
        if (KEYWORDS.has(t.value)) err(p, `unexpected <${t.value}> in ${ctx}`);
        if (!isFunc(t.value)) err(p, `function ${JSON.stringify(t.value)} not defined`);
        return { arg: { t: "func", name: t.value, pos: p }, next: i + 1 };
      }
      default:
        return err(p, `unexpected ${show(t)} in ${ctx}`);
    }
  };

  const { nodes, stop } = list();
  if (stop.kind === "end") err(lastActionPos(items, idx), "unexpected {{end}}");
  if (stop.kind === "else") err(stop.pos, "unexpected {{else}}");
  return nodes;
}

function tokPos(t: Token): Pos {
  return { line: t.line, col: t.col };
}

function show(t: Token): string {
  return t.kind === "string" ? JSON.stringify(t.value) : `<${t.value}>`;
}

function lastActionPos(items: ReturnType<typeof lex>, idx: number): Pos {
  const it = items[idx - 1];
  return it?.kind === "action" ? { line: it.line, col: it.col } : { line: 1, col: 1 };
}
