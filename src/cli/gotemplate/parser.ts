/**
 * Go's text/template grammar over lexer.ts's tokens, into ast.ts's nodes: actions, pipelines with
 * declarations, if / else if / else, with / else with, range (with `$i, $x :=`), break, continue.
 * Errors are Go's texts (`template: :1: unexpected "}" in operand`, `function "x" not defined`,
 * `undefined variable "$x"`, `unexpected EOF`, `unexpected {{end}}`). `define`, `template` and
 * `block` (named templates) are refused: `-t` takes one template.
 */
import { lineOf, TemplateError, type Arg, type Command, type Node, type Pipe } from "./ast.js";
import { lex, type Token, type TokenKind } from "./lexer.js";

/** How Go's parser names a token in an error: `"}"`, `<end>`, `EOF`. */
function tokenString(t: Token): string {
  if (t.kind === "eof") return "EOF";
  if (t.kind === "error") return t.val;
  if (t.kind === "keyword" || t.kind === "dot" || t.kind === "nil") return `<${t.val}>`;
  if (t.val.length > 10) return `${JSON.stringify(t.val.slice(0, 10))}...`;
  return JSON.stringify(t.val);
}

/** What an itemList stopped at. */
type Stop = { kind: "end" | "else"; pos: number };

const OPERAND_START = new Set<TokenKind>([
  "bool",
  "charConstant",
  "dot",
  "field",
  "identifier",
  "number",
  "nil",
  "rawString",
  "string",
  "variable",
  "lparen",
]);

class Parser {
  private i = 0;
  private vars: string[] = ["$"];
  private rangeDepth = 0;

  constructor(
    private readonly src: string,
    private readonly tokens: Token[],
    private readonly funcs: ReadonlySet<string>,
  ) {}

  // The stream ends with eof or error; reading past it reads that last token again.
  private peek(): Token {
    return this.tokens[Math.min(this.i, this.tokens.length - 1)]!;
  }
  private next(): Token {
    const t = this.peek();
    this.i++;
    return t;
  }
  private peekNonSpace(): Token {
    while (this.peek().kind === "space") this.next();
    return this.peek();
  }
  private nextNonSpace(): Token {
    this.peekNonSpace();
    return this.next();
  }

  errorf(
    msg: string,
    pos = this.tokens[Math.min(Math.max(0, this.i - 1), this.tokens.length - 1)]!.pos,
  ): never {
    throw new TemplateError(`template: :${lineOf(this.src, pos)}: ${msg}`);
  }
  private unexpected(t: Token, context: string): never {
    if (t.kind === "error") this.errorf(t.val, t.pos);
    this.errorf(`unexpected ${tokenString(t)} in ${context}`, t.pos);
  }
  private expect(kind: TokenKind, context: string): Token {
    const t = this.nextNonSpace();
    if (t.kind !== kind) this.unexpected(t, context);
    return t;
  }

  parse(): Node[] {
    const list: Node[] = [];
    while (this.peek().kind !== "eof") {
      const n = this.textOrAction();
      if ("kind" in n) this.errorf(`unexpected {{${n.kind}}}`, n.pos);
      list.push(n);
    }
    return list;
  }

  private itemList(): { list: Node[]; stop: Stop } {
    const list: Node[] = [];
    while (this.peekNonSpace().kind !== "eof") {
      const n = this.textOrAction();
      if ("kind" in n) return { list, stop: n };
      list.push(n);
    }
    return this.errorf("unexpected EOF");
  }

  private textOrAction(): Node | Stop {
    const t = this.nextNonSpace();
    if (t.kind === "text") return { type: "text", text: t.val, pos: t.pos };
    if (t.kind === "open") return this.action();
    return this.unexpected(t, "input");
  }

  private action(): Node | Stop {
    const t = this.nextNonSpace();
    if (t.kind === "keyword") {
      switch (t.val) {
        case "end":
          this.expect("close", "end");
          return { kind: "end", pos: t.pos };
        case "else": {
          const p = this.peekNonSpace();
          // `else if` / `else with`: the keyword stays for the enclosing control to read.
          if (!(p.kind === "keyword" && (p.val === "if" || p.val === "with"))) this.expect("close", "else");
          return { kind: "else", pos: t.pos };
        }
        case "if":
        case "with":
        case "range":
          return this.control(t.val, t.pos);
        case "break":
        case "continue":
          if (this.rangeDepth === 0) this.errorf(`{{${t.val}}} outside {{range}}`, t.pos);
          this.expect("close", t.val);
          return { type: t.val, pos: t.pos };
        default:
          return this.errorf(`{{${t.val}}} is not supported: -t takes a single template`, t.pos);
      }
    }
    this.i--;
    const start = this.peekNonSpace();
    if (start.kind === "error") this.unexpected(start, "command");
    return { type: "action", pipe: this.pipeline("command", "close"), pos: start.pos };
  }

  private control(context: "if" | "with" | "range", pos: number): Node {
    const mark = this.vars.length;
    const pipe = this.pipeline(context, "close");
    if (context === "range") this.rangeDepth++;
    const body = this.itemList();
    if (context === "range") this.rangeDepth--;
    let elseList: Node[] | undefined;
    if (body.stop.kind === "else") {
      const p = this.peekNonSpace();
      if (context !== "range" && p.kind === "keyword" && (p.val === "if" || p.val === "with")) {
        // `else if`: a nested control that the one {{end}} closes.
        this.next();
        elseList = [this.control(p.val, p.pos)];
      } else {
        const rest = this.itemList();
        if (rest.stop.kind !== "end") this.errorf("expected end; found {{else}}", rest.stop.pos);
        elseList = rest.list;
      }
    }
    this.vars.length = mark;
    return { type: context, pipe, list: body.list, elseList, pos };
  }

  private pipeline(context: string, end: TokenKind): Pipe {
    const pipe: Pipe = { decl: [], isAssign: false, cmds: [], pos: this.peekNonSpace().pos };
    for (;;) {
      const v = this.peekNonSpace();
      if (v.kind !== "variable") break;
      const save = this.i;
      this.next();
      const after = this.peekNonSpace();
      if (after.kind === "declare" || after.kind === "assign") {
        this.next();
        pipe.isAssign = after.kind === "assign";
        pipe.decl.push(v.val);
        if (pipe.isAssign) this.useVar(v);
        else this.vars.push(v.val);
        break;
      }
      if (after.kind === "char" && after.val === ",") {
        this.next();
        pipe.decl.push(v.val);
        this.vars.push(v.val);
        if (context === "range" && pipe.decl.length < 2) {
          const k = this.peekNonSpace().kind;
          if (k === "variable" || k === "close" || k === "rparen") continue;
          this.errorf("range can only initialize variables");
        }
        this.errorf(`too many declarations in ${context}`);
      }
      this.i = save;
      break;
    }
    for (;;) {
      const t = this.nextNonSpace();
      if (t.kind === end) {
        if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`, t.pos);
        pipe.cmds.slice(1).forEach((c, k) => {
          if (["bool", "dot", "nil", "number", "string"].includes(c.args[0]!.type)) {
            this.errorf(`non executable command in pipeline stage ${k + 2}`, t.pos);
          }
        });
        return pipe;
      }
      if (!OPERAND_START.has(t.kind)) this.unexpected(t, context);
      this.i--;
      pipe.cmds.push(this.command());
    }
  }

  private command(): Command {
    const cmd: Command = { args: [], pos: this.peekNonSpace().pos };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const t = this.next();
      if (t.kind === "space") continue;
      if (t.kind === "close" || t.kind === "rparen") this.i--;
      else if (t.kind !== "pipe") this.unexpected(t, "operand");
      break;
    }
    if (cmd.args.length === 0) this.errorf("empty command");
    return cmd;
  }

  private operand(): Arg | undefined {
    const node = this.term();
    if (!node || this.peek().kind !== "field") return node;
    // Go places a chain at its first trailing field, and errors report that column.
    const pos = this.peek().pos;
    const fields: string[] = [];
    while (this.peek().kind === "field") fields.push(this.next().val.slice(1));
    switch (node.type) {
      case "field":
      case "variable":
        return { ...node, idents: [...node.idents, ...fields], pos };
      case "bool":
      case "string":
      case "number":
      case "nil":
      case "dot":
        return this.errorf(
          `unexpected . after term ${JSON.stringify(node.type === "string" ? node.quoted : String(node.type === "dot" ? "." : node.type === "nil" ? "nil" : node.type === "bool" ? node.value : node.text))}`,
        );
      default:
        return { type: "chain", node, fields, pos };
    }
  }

  private useVar(t: Token): void {
    const name = t.val.split(".")[0]!;
    if (!this.vars.includes(name)) this.errorf(`undefined variable ${JSON.stringify(name)}`, t.pos);
  }

  private term(): Arg | undefined {
    const t = this.nextNonSpace();
    switch (t.kind) {
      case "identifier":
        if (!this.funcs.has(t.val)) this.errorf(`function ${JSON.stringify(t.val)} not defined`, t.pos);
        return { type: "identifier", name: t.val, pos: t.pos };
      case "dot":
        return { type: "dot", pos: t.pos };
      case "nil":
        return { type: "nil", pos: t.pos };
      case "variable":
        this.useVar(t);
        return { type: "variable", idents: [t.val], pos: t.pos };
      case "field":
        return { type: "field", idents: [t.val.slice(1)], pos: t.pos };
      case "bool":
        return { type: "bool", value: t.val === "true", pos: t.pos };
      case "number":
      case "charConstant":
        return this.number(t);
      case "lparen":
        return { type: "pipe", pipe: this.pipeline("parenthesized pipeline", "rparen"), pos: t.pos };
      case "string":
      case "rawString":
        return { type: "string", value: this.unquote(t), quoted: t.val, pos: t.pos };
      default:
        this.i--;
        return undefined;
    }
  }

  private number(t: Token): Arg {
    if (t.kind === "charConstant") {
      const ch = this.unquote({ ...t, val: `"${t.val.slice(1, -1).replace(/"/g, '\\"')}"` });
      if ([...ch].length !== 1) this.errorf(`malformed character constant: ${t.val}`, t.pos);
      return { type: "number", value: ch.codePointAt(0)!, isInt: true, text: t.val, pos: t.pos };
    }
    const text = t.val.replace(/_/g, "");
    const sign = text.startsWith("-") ? -1 : 1;
    const body = text.replace(/^[+-]/, "");
    let value: number;
    if (/^0[xX]/.test(body)) value = parseInt(body.slice(2), 16);
    else if (/^0[bB]/.test(body)) value = parseInt(body.slice(2), 2);
    else if (/^0[oO]/.test(body)) value = parseInt(body.slice(2), 8);
    else if (/^0[0-7]+$/.test(body)) value = parseInt(body.slice(1), 8);
    else value = Number(body);
    if (!Number.isFinite(value) || body === "" || body === ".")
      this.errorf(`illegal number syntax: ${JSON.stringify(t.val)}`, t.pos);
    const isInt = !/[.eE]/.test(body) || /^0[xX]/.test(body);
    return {
      type: "number",
      value: sign * value,
      isInt: isInt && Number.isInteger(value),
      text: t.val,
      pos: t.pos,
    };
  }

  private unquote(t: Token): string {
    if (t.kind === "rawString") return t.val.slice(1, -1);
    try {
      // Go's escapes that JSON lacks: \a \v \' \xHH \ooo \UXXXXXXXX.
      const json = t.val
        .replace(/\\(a|v|'|x[0-9a-fA-F]{2}|[0-7]{3}|U[0-9a-fA-F]{8})/g, (_m, e: string) => {
          const code =
            e === "a"
              ? 7
              : e === "v"
                ? 11
                : e === "'"
                  ? 39
                  : e[0] === "x"
                    ? parseInt(e.slice(1), 16)
                    : e[0] === "U"
                      ? parseInt(e.slice(1), 16)
                      : parseInt(e, 8);
          return code === 34 || code === 92
            ? `\\${String.fromCharCode(code)}`
            : code < 0x20
              ? `\\u${code.toString(16).padStart(4, "0")}`
              : String.fromCodePoint(code);
        })
        .replace(/\t/g, "\\t");
      return JSON.parse(json) as string;
    } catch {
      return this.errorf(`invalid syntax: ${t.val}`, t.pos);
    }
  }
}

/** The nodes of `src`; `funcs` are the names a template may call (Go checks them while parsing). */
export function parse(src: string, funcs: ReadonlySet<string>): Node[] {
  return new Parser(src, lex(src), funcs).parse();
}
