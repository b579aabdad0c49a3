/**
 * HCL 1's tokens, as hashicorp/hcl v1's scanner reads them: identifiers (letters, digits, `_`, `-`,
 * `.`), `true`/`false`, decimal, octal (leading 0) and hex integers, floats, quoted strings (Go
 * escapes; `${…}` kept verbatim, and may hold quotes), heredocs (`<<EOF` and the indent-stripping
 * `<<-EOF`), punctuation, and the three comment forms, which are skipped. Every error names the line
 * and column.
 */
import { Hcl1Error, type LiteralType, type Pos } from "./ast.js";

export type TokenType = LiteralType | "ident" | "{" | "}" | "[" | "]" | "," | "=" | "eof";

export interface Token {
  type: TokenType;
  /** The source text of the token. */
  text: string;
  /** Literals' values: unquoted strings, numbers, booleans; identifiers' names. */
  value: string | number | boolean;
  pos: Pos;
}

const PUNCT = new Set(["{", "}", "[", "]", ",", "="]);
const isLetter = (c: string) => /^[A-Za-z_]$/.test(c) || (c >= "\x80" && /^\p{L}$/u.test(c));
const isDigit = (c: string) => /^[0-9]$/.test(c) || (c >= "\x80" && /^\p{Nd}$/u.test(c));
const isDecimal = (c: string) => c >= "0" && c <= "9";

export class Lexer {
  private i = 0;
  private line = 1;
  private col = 1;

  constructor(
    private readonly file: string,
    private readonly src: string,
  ) {}

  private peek(ahead = 0): string {
    return this.src[this.i + ahead] ?? "";
  }

  private next(): string {
    const c = this.src[this.i++] ?? "";
    if (c === "\n") {
      this.line++;
      this.col = 1;
    } else if (c !== "") this.col++;
    return c;
  }

  private here(): Pos {
    return { line: this.line, col: this.col };
  }

  private fail(pos: Pos, problem: string): never {
    throw new Hcl1Error(this.file, pos, problem);
  }

  /** The next token, comments and whitespace skipped. */
  scan(): Token {
    for (;;) {
      const c = this.peek();
      if (c === " " || c === "\t" || c === "\n" || c === "\r") this.next();
      else if (c === "#" || (c === "/" && this.peek(1) === "/")) this.lineComment();
      else if (c === "/" && this.peek(1) === "*") this.blockComment();
      else break;
    }
    const pos = this.here();
    const start = this.i;
    const c = this.peek();
    const tok = (type: TokenType, value: string | number | boolean): Token => ({
      type,
      text: this.src.slice(start, this.i),
      value,
      pos,
    });
    if (c === "") return tok("eof", "");
    if (PUNCT.has(c)) {
      this.next();
      return tok(c as TokenType, c);
    }
    if (isLetter(c)) {
      while (isLetter(this.peek()) || isDigit(this.peek()) || this.peek() === "-" || this.peek() === ".")
        this.next();
      const text = this.src.slice(start, this.i);
      return text === "true" || text === "false" ? tok("bool", text === "true") : tok("ident", text);
    }
    if (isDecimal(c) || (c === "-" && isDecimal(this.peek(1))) || (c === "." && isDecimal(this.peek(1)))) {
      const type = this.number(pos);
      const text = this.src.slice(start, this.i);
      return tok(type, numberValue(this.file, pos, type, text));
    }
    if (c === '"') return tok("string", this.string(pos));
    if (c === "<" && this.peek(1) === "<") {
      const text = this.heredoc(pos);
      return { type: "heredoc", text, value: unindentHeredoc(text), pos };
    }
    if (c === "/") this.fail(pos, "expected '/' for comment");
    this.fail(pos, `illegal character ${JSON.stringify(c)}`);
  }

  private lineComment(): void {
    while (this.peek() !== "\n" && this.peek() !== "") this.next();
  }

  private blockComment(): void {
    const pos = this.here();
    this.next();
    this.next();
    while (!(this.peek() === "*" && this.peek(1) === "/")) {
      if (this.peek() === "") this.fail(pos, "comment not terminated");
      this.next();
    }
    this.next();
    this.next();
  }

  private digits(ok: (c: string) => boolean): number {
    let n = 0;
    while (ok(this.peek())) {
      this.next();
      n++;
    }
    return n;
  }

  /** Scans a number; returns whether it is an integer ("number") or a "float". */
  private number(pos: Pos): "number" | "float" {
    if (this.peek() === "-") this.next();
    if (this.peek() === "0" && (this.peek(1) === "x" || this.peek(1) === "X")) {
      this.next();
      this.next();
      if (this.digits((c) => /^[0-9a-fA-F]$/.test(c)) === 0) this.fail(pos, "illegal hexadecimal number");
      return "number";
    }
    this.digits(isDecimal);
    let float = false;
    if (this.peek() === "." && isDecimal(this.peek(1))) {
      this.next();
      this.digits(isDecimal);
      float = true;
    }
    if (this.peek() === "e" || this.peek() === "E") {
      this.next();
      if (this.peek() === "+" || this.peek() === "-") this.next();
      if (this.digits(isDecimal) === 0) this.fail(pos, "illegal exponent in number");
      float = true;
    }
    return float ? "float" : "number";
  }

  /** Scans a quoted string and returns its value. */
  private string(pos: Pos): string {
    this.next();
    let out = "";
    let braces = 0;
    for (;;) {
      const c = this.peek();
      if (c === "" || (c === "\n" && braces === 0)) this.fail(pos, "literal not terminated");
      if (c === '"' && braces === 0) {
        this.next();
        return out;
      }
      if (braces === 0 && c === "$" && this.peek(1) === "{") {
        // An interpolation is kept as written, quotes and backslashes included.
        braces = 1;
        out += this.next() + this.next();
        continue;
      }
      if (braces > 0) {
        if (c === "{") braces++;
        if (c === "}") braces--;
        out += this.next();
        continue;
      }
      if (c === "\\") {
        out += this.escape();
        continue;
      }
      out += this.next();
    }
  }

  private escape(): string {
    const pos = this.here();
    this.next();
    const c = this.next();
    const simple: Record<string, string> = {
      a: "\x07",
      b: "\b",
      f: "\f",
      n: "\n",
      r: "\r",
      t: "\t",
      v: "\v",
      "\\": "\\",
      '"': '"',
    };
    if (simple[c] !== undefined) return simple[c];
    const code = (digits: string, base: number): number => {
      const n = digits.length === 0 ? NaN : parseInt(digits, base);
      if (!Number.isInteger(n) || n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff))
        this.fail(pos, "illegal char escape");
      return n;
    };
    const take = (n: number, re: RegExp): string => {
      let s = "";
      while (s.length < n && re.test(this.peek())) s += this.next();
      if (s.length !== n) this.fail(pos, "illegal char escape");
      return s;
    };
    if (c >= "0" && c <= "7") {
      const n = code(c + take(2, /^[0-7]$/), 8);
      if (n > 255) this.fail(pos, "illegal char escape");
      return String.fromCharCode(n);
    }
    if (c === "x") return String.fromCharCode(code(take(2, /^[0-9a-fA-F]$/), 16));
    if (c === "u") return String.fromCodePoint(code(take(4, /^[0-9a-fA-F]$/), 16));
    if (c === "U") return String.fromCodePoint(code(take(8, /^[0-9a-fA-F]$/), 16));
    this.fail(pos, "illegal char escape");
  }

  /**
   * Scans a heredoc and returns its text from `<<` through the newline after the closing anchor,
   * which is a line holding only the anchor (after optional whitespace) and must end in a newline.
   */
  private heredoc(pos: Pos): string {
    const start = this.i;
    this.next();
    this.next();
    const indented = this.peek() === "-";
    if (indented) this.next();
    const anchorStart = this.i;
    while (isLetter(this.peek()) || isDigit(this.peek())) this.next();
    const anchor = this.src.slice(anchorStart, this.i);
    if (this.peek() === "\r" && this.peek(1) === "\n") this.next();
    if (this.peek() === "") this.fail(pos, "heredoc not terminated");
    if (this.peek() !== "\n") this.fail(pos, "invalid characters in heredoc anchor");
    if (anchor === "") this.fail(pos, "zero-length heredoc anchor");
    this.next();
    const end = new RegExp(`^[ \\t\\n\\r\\f\\v]*${anchor}\\r*$`);
    let lineStart = this.i;
    for (;;) {
      const c = this.next();
      if (c === "") this.fail(pos, "heredoc not terminated");
      if (c === "\n") {
        if (end.test(this.src.slice(lineStart, this.i - 1))) return this.src.slice(start, this.i);
        lineStart = this.i;
      }
    }
  }
}

function numberValue(file: string, pos: Pos, type: "number" | "float", text: string): number {
  if (type === "float") return Number(text);
  const neg = text.startsWith("-");
  const digits = neg ? text.slice(1) : text;
  let n: number;
  if (/^0[xX]/.test(digits)) n = parseInt(digits.slice(2), 16);
  else if (digits.length > 1 && digits.startsWith("0")) {
    if (/[89]/.test(digits)) throw new Hcl1Error(file, pos, "illegal octal number");
    n = parseInt(digits, 8);
  } else n = parseInt(digits, 10);
  if (!Number.isSafeInteger(n)) throw new Hcl1Error(file, pos, `number ${text} is out of range`);
  return neg && n !== 0 ? -n : n;
}

/**
 * A heredoc's value, as hcl v1 computes it from the token text: `<<EOF` keeps the lines as written
 * (and, quirk kept, the closing line's leading whitespace); `<<-EOF` removes the closing line's
 * indentation from every line when all lines start with it, and otherwise keeps the lines as written.
 */
export function unindentHeredoc(text: string): string {
  const idx = text.indexOf("\n");
  if (text[2] !== "-") return text.slice(idx + 1, text.length - idx + 1);
  const lines = text.slice(idx + 1, text.length - idx + 2).split("\n");
  const prefix = lines[lines.length - 1]!;
  if (!lines.every((l) => l.startsWith(prefix))) {
    return text.slice(idx + 1, text.length - idx + 1).replace(/[ \t]+$/, "");
  }
  return lines.map((l, k) => (k === lines.length - 1 ? "" : l.slice(prefix.length))).join("\n");
}
