/**
 * A parser for the filter language of Nomad's `?filter=` (HashiCorp's go-bexpr), over the subset
 * Nomad documents: match expressions
 *   Selector == Value        Selector != Value
 *   Value in Selector        Value not in Selector
 *   Selector contains Value  Selector not contains Value
 *   Selector is empty        Selector is not empty
 *   Selector matches Value   Selector not matches Value
 * joined with `and`, `or`, `not` and parentheses (`not` binds tightest, then `and`, then `or`).
 * A selector is a dotted path (`NodeResources.Memory.MemoryMB`) whose steps may also be written
 * `["key"]` (map keys with dots or dashes: `Meta["rack-id"]`). A value is a "double-quoted"
 * string (with Go escapes), a `backtick` raw string, or a bare word (`running`, `42`, `true`).
 *
 * Pure: the result is a tree that evaluate.ts runs against one item at a time. Errors say where
 * (1-based column) and what was expected; the route answers them as 400s.
 *
 * `matches` patterns are RE2 (Go's regexp, which go-bexpr uses), compiled by re2js, a port of RE2
 * that matches in time linear in the input: V8's backtracking RegExp let one request's pattern
 * (`^.{6}([0-9a-f-]+)+#` on node IDs) freeze the server for a minute. RE2 refuses what Go refuses
 * (backreferences, lookaround), and a pattern is at most MAX_PATTERN_LENGTH characters.
 */
import { RE2JS } from "re2js";

/** The longest `matches` pattern (a compiled RE2 program grows with it). */
export const MAX_PATTERN_LENGTH = 1024;

export type Selector = string[];

export type MatchOp =
  | "=="
  | "!="
  | "in"
  | "not in"
  | "contains"
  | "not contains"
  | "is empty"
  | "is not empty"
  | "matches"
  | "not matches";

export type Expr =
  | { kind: "and" | "or"; left: Expr; right: Expr }
  | { kind: "not"; operand: Expr }
  | { kind: "match"; op: MatchOp; selector: Selector; value: string; regex?: RE2JS };

export class FilterSyntaxError extends Error {}

type Token =
  | { t: "word"; v: string; pos: number }
  | { t: "string"; v: string; pos: number }
  | { t: "op"; v: "==" | "!=" | "(" | ")" | "[" | "]" | "."; pos: number };

const WORD = /[A-Za-z0-9_\-/:+@]/;

function lex(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const pos = i + 1;
    if (c === "=" || c === "!") {
      if (src[i + 1] !== "=")
        throw new FilterSyntaxError(
          `column ${pos}: expected "${c}=", got ${JSON.stringify(src.slice(i, i + 2))}`,
        );
      out.push({ t: "op", v: c === "=" ? "==" : "!=", pos });
      i += 2;
    } else if (c === "(" || c === ")" || c === "[" || c === "]" || c === ".") {
      out.push({ t: "op", v: c, pos });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"') j += src[j] === "\\" ? 2 : 1;
      if (j >= src.length) throw new FilterSyntaxError(`column ${pos}: unterminated string`);
      let v: unknown;
      try {
        v = JSON.parse(src.slice(i, j + 1));
      } catch {
        throw new FilterSyntaxError(`column ${pos}: invalid escape in string ${src.slice(i, j + 1)}`);
      }
      out.push({ t: "string", v: v as string, pos });
      i = j + 1;
    } else if (c === "`") {
      const j = src.indexOf("`", i + 1);
      if (j < 0) throw new FilterSyntaxError(`column ${pos}: unterminated raw string`);
      out.push({ t: "string", v: src.slice(i + 1, j), pos });
      i = j + 1;
    } else if (WORD.test(c)) {
      let j = i;
      while (j < src.length && WORD.test(src[j]!)) j++;
      out.push({ t: "word", v: src.slice(i, j), pos });
      i = j;
    } else {
      throw new FilterSyntaxError(`column ${pos}: unexpected character ${JSON.stringify(c)}`);
    }
  }
  return out;
}

const KEYWORDS = new Set(["and", "or", "not", "in", "contains", "is", "empty", "matches"]);
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

class Parser {
  private i = 0;
  constructor(
    private readonly toks: Token[],
    private readonly len: number,
  ) {}

  private peek(k = 0): Token | undefined {
    return this.toks[this.i + k];
  }
  private where(): string {
    const t = this.peek();
    return t ? `column ${t.pos}` : `column ${this.len + 1} (end of input)`;
  }
  private isWord(v: string, k = 0): boolean {
    const t = this.peek(k);
    return t?.t === "word" && t.v === v;
  }
  private isOp(v: string, k = 0): boolean {
    const t = this.peek(k);
    return t?.t === "op" && t.v === v;
  }
  private fail(expected: string): never {
    const t = this.peek();
    const got = t ? JSON.stringify(t.v) : "end of input";
    throw new FilterSyntaxError(`${this.where()}: expected ${expected}, got ${got}`);
  }

  parse(): Expr {
    if (this.toks.length === 0) throw new FilterSyntaxError("the expression is empty");
    const e = this.or();
    if (this.i < this.toks.length) this.fail('"and", "or" or the end of the expression');
    return e;
  }
  private or(): Expr {
    let left = this.and();
    while (this.isWord("or")) {
      this.i++;
      left = { kind: "or", left, right: this.and() };
    }
    return left;
  }
  private and(): Expr {
    let left = this.unary();
    while (this.isWord("and")) {
      this.i++;
      left = { kind: "and", left, right: this.unary() };
    }
    return left;
  }
  private unary(): Expr {
    if (this.isWord("not")) {
      this.i++;
      return { kind: "not", operand: this.unary() };
    }
    if (this.isOp("(")) {
      this.i++;
      const e = this.or();
      if (!this.isOp(")")) this.fail('")"');
      this.i++;
      return e;
    }
    return this.match();
  }
  /** `Value in Selector` starts with a value; everything else starts with a selector. */
  private match(): Expr {
    const t = this.peek();
    const valueFirst =
      t !== undefined &&
      (t.t === "string" ||
        (t.t === "word" && !IDENT.test(t.v)) ||
        this.isWord("in", 1) ||
        (this.isWord("not", 1) && this.isWord("in", 2)));
    if (valueFirst) {
      const value = this.value();
      let op: MatchOp = "in";
      if (this.isWord("not")) {
        this.i++;
        op = "not in";
      }
      if (!this.isWord("in")) this.fail('"in" or "not in"');
      this.i++;
      return { kind: "match", op, selector: this.selector(), value };
    }
    const selector = this.selector();
    if (this.isOp("==") || this.isOp("!=")) {
      const op = this.peek()!.v as "==" | "!=";
      this.i++;
      return { kind: "match", op, selector, value: this.value() };
    }
    if (this.isWord("is")) {
      this.i++;
      let op: MatchOp = "is empty";
      if (this.isWord("not")) {
        this.i++;
        op = "is not empty";
      }
      if (!this.isWord("empty")) this.fail('"empty"');
      this.i++;
      return { kind: "match", op, selector, value: "" };
    }
    let negate = false;
    if (this.isWord("not")) {
      this.i++;
      negate = true;
    }
    if (this.isWord("contains")) {
      this.i++;
      return { kind: "match", op: negate ? "not contains" : "contains", selector, value: this.value() };
    }
    if (this.isWord("matches")) {
      this.i++;
      const pos = this.where();
      const value = this.value();
      if (value.length > MAX_PATTERN_LENGTH) {
        throw new FilterSyntaxError(
          `${pos}: regular expression is ${value.length} characters long (at most ${MAX_PATTERN_LENGTH})`,
        );
      }
      let regex: RE2JS;
      try {
        regex = RE2JS.compile(value);
      } catch (err) {
        throw new FilterSyntaxError(
          `${pos}: invalid regular expression ${JSON.stringify(value)}: ${(err as Error).message}`,
        );
      }
      return { kind: "match", op: negate ? "not matches" : "matches", selector, value, regex };
    }
    return this.fail(
      negate ? '"contains" or "matches"' : 'a match operator ("==", "!=", "contains", "is", "matches", "in")',
    );
  }
  private selector(): Selector {
    const path: string[] = [];
    const first = this.peek();
    if (first?.t !== "word" || !IDENT.test(first.v) || KEYWORDS.has(first.v)) this.fail("a selector");
    path.push(first.v);
    this.i++;
    for (;;) {
      if (this.isOp(".")) {
        this.i++;
        const t = this.peek();
        if (t?.t !== "word" || !IDENT.test(t.v)) this.fail('a field name after "."');
        path.push(t.v);
        this.i++;
      } else if (this.isOp("[")) {
        this.i++;
        const t = this.peek();
        if (t?.t !== "string") this.fail('a quoted key after "["');
        path.push(t.v);
        this.i++;
        if (!this.isOp("]")) this.fail('"]"');
        this.i++;
      } else return path;
    }
  }
  private value(): string {
    const t = this.peek();
    if (t?.t === "string") {
      this.i++;
      return t.v;
    }
    if (t?.t === "word" && !KEYWORDS.has(t.v)) {
      this.i++;
      // A bare word may carry dots (`1.2.3`, `10.0.0.1`): join them back.
      let v = t.v;
      while (this.isOp(".") && this.peek(1)?.t === "word") {
        v += "." + this.peek(1)!.v;
        this.i += 2;
      }
      return v;
    }
    return this.fail("a value");
  }
}

/** Parses a filter expression; throws FilterSyntaxError naming the column and what was expected. */
export function parseFilter(src: string): Expr {
  return new Parser(lex(src), src.length).parse();
}
