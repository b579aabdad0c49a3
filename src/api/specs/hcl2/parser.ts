/**
 * A recursive-descent parser for HCL2's native expression and template syntax (the grammar of
 * hclsyntax's spec: operators and their precedence, conditionals, for expressions, splats, index
 * and attribute access, function calls with `...` expansion, tuple and object constructors, quoted
 * templates with `${…}` and `%{ if }`/`%{ for }` directives and `~` strip markers, heredocs).
 *
 * @cdktn/hcl2json hands berth every attribute that is not a constant as its source text wrapped in
 * `${…}`, and every string as template source; this parser turns both into a tree (ast.ts) that
 * evaluate.ts evaluates. Identifiers may contain `-` after the first character, as in HCL: `a-b` is
 * one name.
 */
import { HclError, type ForNode, type Node, type TmplPart } from "./ast.js";

const IDENT = /[A-Za-z_][A-Za-z0-9_-]*/y;
const NUMBER = /[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const PUNCT = ["...", "==", "!=", "<=", ">=", "&&", "||", "=>", "%{", "${"];
/** Binary operators by precedence level, loosest first (hclsyntax's binaryOps table). */
const LEVELS = [["||"], ["&&"], ["==", "!="], [">", ">=", "<", "<="], ["+", "-"], ["*", "/", "%"]];

export interface Tok {
  t: "ident" | "num" | "punct" | "eof";
  v: string;
  at: number;
  end: number;
}

/**
 * The expression half of the parser; template.ts adds templates (quoted strings inside expressions
 * are templates, so `term` calls back into `templateParts`).
 */
export abstract class ExprParser {
  pos = 0;
  constructor(readonly src: string) {}

  err(summary: string, detail: string, at = this.pos): HclError {
    return new HclError(summary, detail, at);
  }

  // ---- scanner ----

  protected skip(): void {
    const s = this.src;
    for (;;) {
      const c = s[this.pos];
      if (c === " " || c === "\t" || c === "\n" || c === "\r") this.pos++;
      else if (c === "#" || (c === "/" && s[this.pos + 1] === "/")) {
        const nl = s.indexOf("\n", this.pos);
        this.pos = nl < 0 ? s.length : nl + 1;
      } else if (c === "/" && s[this.pos + 1] === "*") {
        const end = s.indexOf("*/", this.pos + 2);
        if (end < 0)
          throw this.err("Unterminated comment", "There is no closing marker for this multi-line comment.");
        this.pos = end + 2;
      } else return;
    }
  }

  peek(): Tok {
    this.skip();
    const at = this.pos;
    if (at >= this.src.length) return { t: "eof", v: "end of expression", at, end: at };
    for (const [re, t] of [
      [IDENT, "ident"],
      [NUMBER, "num"],
    ] as const) {
      re.lastIndex = at;
      const m = re.exec(this.src);
      if (m) return { t, v: m[0], at, end: at + m[0].length };
    }
    const p = PUNCT.find((x) => this.src.startsWith(x, at)) ?? this.src[at]!;
    return { t: "punct", v: p, at, end: at + p.length };
  }

  next(): Tok {
    const t = this.peek();
    this.pos = t.end;
    return t;
  }

  protected is(v: string): boolean {
    const t = this.peek();
    return t.t === "punct" && t.v === v;
  }

  protected accept(v: string): boolean {
    if (!this.is(v)) return false;
    this.next();
    return true;
  }

  protected expect(v: string, what: string): void {
    const t = this.peek();
    if (t.t !== "punct" || t.v !== v) {
      throw this.err(
        "Invalid expression",
        `Expected ${what} ("${v}"), found ${t.t === "eof" ? t.v : `"${t.v}"`}.`,
        t.at,
      );
    }
    this.next();
  }

  protected ident(what: string): string {
    const t = this.next();
    if (t.t !== "ident") throw this.err("Invalid expression", `Expected ${what}, found "${t.v}".`, t.at);
    return t.v;
  }

  // ---- expressions ----

  expr(): Node {
    const c = this.binary(0);
    if (!this.accept("?")) return c;
    const t = this.expr();
    this.expect(":", "the colon of a conditional");
    const f = this.expr();
    return { k: "cond", c, t, f, at: c.at };
  }

  private binary(level: number): Node {
    if (level === LEVELS.length) return this.unary();
    let l = this.binary(level + 1);
    for (;;) {
      const t = this.peek();
      if (t.t !== "punct" || !LEVELS[level]!.includes(t.v)) return l;
      this.next();
      const r = this.binary(level + 1);
      l = { k: "binary", op: t.v, l, r, at: t.at };
    }
  }

  private unary(): Node {
    const t = this.peek();
    if (t.t === "punct" && (t.v === "-" || t.v === "!")) {
      this.next();
      return { k: "unary", op: t.v, x: this.unary(), at: t.at };
    }
    return this.postfix(this.term());
  }

  /** Attribute access, indexing and splats after a term; their source text is kept for run-time references. */
  private postfix(x: Node): Node {
    const start = x.at;
    for (;;) {
      if (this.is(".")) {
        const dot = this.next();
        const t = this.peek();
        if (t.t === "punct" && t.v === "*") {
          this.next();
          return { k: "splat", src: x, each: this.splatEach({ k: "anon", at: dot.at }, true), at: dot.at };
        }
        if (t.t === "num") {
          // Legacy index syntax: `list.0`.
          this.next();
          x = {
            k: "index",
            obj: x,
            key: { k: "lit", v: Number(t.v), at: t.at },
            at: t.at,
            src: this.src.slice(start, t.end),
          };
          continue;
        }
        const name = this.ident("an attribute name");
        x = { k: "attr", obj: x, name, at: t.at, src: this.src.slice(start, this.pos) };
      } else if (this.is("[")) {
        const open = this.next();
        if (this.accept("*")) {
          this.expect("]", "the end of a splat");
          return { k: "splat", src: x, each: this.splatEach({ k: "anon", at: open.at }, false), at: open.at };
        }
        const key = this.expr();
        this.expect("]", "the end of an index");
        x = { k: "index", obj: x, key, at: open.at, src: this.src.slice(start, this.pos) };
      } else {
        return x;
      }
    }
  }

  /** The traversal applied to each element by a splat: `.a.b` for `.*`, and also `[i]` for `[*]`. */
  private splatEach(x: Node, attrOnly: boolean): Node {
    for (;;) {
      if (this.is(".")) {
        this.next();
        const t = this.peek();
        const name = this.ident("an attribute name");
        x = { k: "attr", obj: x, name, at: t.at, src: name };
      } else if (!attrOnly && this.is("[")) {
        const open = this.next();
        const key = this.expr();
        this.expect("]", "the end of an index");
        x = { k: "index", obj: x, key, at: open.at, src: "" };
      } else {
        return x;
      }
    }
  }

  private term(): Node {
    const t = this.peek();
    if (t.t === "num") {
      this.next();
      return { k: "lit", v: Number(t.v), at: t.at };
    }
    if (t.t === "ident") {
      this.next();
      if (t.v === "true" || t.v === "false") return { k: "lit", v: t.v === "true", at: t.at };
      if (t.v === "null") return { k: "lit", v: null, at: t.at };
      if (this.is("(")) return this.call(t);
      return { k: "var", name: t.v, at: t.at, src: t.v };
    }
    if (t.t === "punct") {
      // hcl2json hands over a heredoc inside an expression as its source text.
      if (t.v === "<" && this.src.startsWith("<<", t.at)) return this.heredoc(t.at);
      if (t.v === "(") {
        this.next();
        const x = this.expr();
        this.expect(")", "a closing parenthesis");
        return { k: "paren", x, at: t.at };
      }
      if (t.v === '"') {
        this.next();
        const parts = this.templateParts(true);
        return { k: "tmpl", parts, at: t.at };
      }
      if (t.v === "[") return this.tupleOrFor(t.at);
      if (t.v === "{") return this.objectOrFor(t.at);
    }
    throw this.err(
      "Invalid expression",
      `Expected the start of an expression, but found ${t.t === "eof" ? t.v : `"${t.v}"`}.`,
      t.at,
    );
  }

  private call(name: Tok): Node {
    this.next(); // (
    const args: Node[] = [];
    let expand = false;
    while (!this.is(")")) {
      args.push(this.expr());
      if (this.accept("...")) {
        expand = true;
        break;
      }
      if (!this.accept(",")) break;
    }
    this.expect(")", "the end of the function call");
    return { k: "call", name: name.v, args, expand, at: name.at };
  }

  private isFor(): boolean {
    const t = this.peek();
    if (t.t !== "ident" || t.v !== "for") return false;
    // `for` followed by an identifier starts a for expression; otherwise it is a plain name.
    const save = this.pos;
    this.next();
    const n = this.peek();
    this.pos = save;
    return n.t === "ident";
  }

  private forHead(at: number): Pick<ForNode, "keyVar" | "valVar" | "coll" | "at"> {
    this.next(); // for
    let valVar = this.ident("an iterator name");
    let keyVar: string | undefined;
    if (this.accept(",")) {
      keyVar = valVar;
      valVar = this.ident("an iterator name");
    }
    const kw = this.next();
    if (kw.t !== "ident" || kw.v !== "in")
      throw this.err("Invalid 'for' expression", 'The "in" keyword must follow the iterator names.', kw.at);
    const coll = this.expr();
    this.expect(":", "the colon of a for expression");
    return { keyVar, valVar, coll, at };
  }

  private forTail(): Node | undefined {
    const t = this.peek();
    if (t.t === "ident" && t.v === "if") {
      this.next();
      return this.expr();
    }
    return undefined;
  }

  private tupleOrFor(at: number): Node {
    this.next(); // [
    if (this.isFor()) {
      const head = this.forHead(at);
      const value = this.expr();
      const cond = this.forTail();
      this.expect("]", "the end of a for expression");
      return { k: "for", ...head, value, cond, group: false };
    }
    const items: Node[] = [];
    while (!this.is("]")) {
      items.push(this.expr());
      if (!this.accept(",")) break;
    }
    this.expect("]", "a comma or the end of the tuple");
    return { k: "tuple", items, at };
  }

  private objectOrFor(at: number): Node {
    this.next(); // {
    if (this.isFor()) {
      const head = this.forHead(at);
      const key = this.expr();
      this.expect("=>", "the arrow of an object for expression");
      const value = this.expr();
      const group = this.accept("...");
      const cond = this.forTail();
      this.expect("}", "the end of a for expression");
      return { k: "for", ...head, key, value, cond, group, object: true } as ForNode;
    }
    const items: { key: Node; value: Node }[] = [];
    while (!this.is("}")) {
      const kt = this.peek();
      let key: Node;
      if (kt.t === "ident") {
        // A bare name is the literal key, as in HCL; write (name) to use a variable's value.
        this.next();
        key = { k: "lit", v: kt.v, at: kt.at };
      } else {
        key = this.expr();
      }
      if (!this.accept("=") && !this.accept(":")) {
        throw this.err(
          "Missing key/value separator",
          'Expected an equals sign ("=") to mark the beginning of the attribute value.',
        );
      }
      items.push({ key, value: this.expr() });
      this.accept(",");
    }
    this.next(); // }
    return { k: "object", items, at };
  }

  /** Template parts up to the end of the text, or to the closing `"` when `quoted`. */
  abstract templateParts(quoted: boolean): TmplPart[];

  /** The heredoc template (`<<EOT` … `EOT`) that starts at `at`, the position left after its marker. */
  abstract heredoc(at: number): Node;
}
