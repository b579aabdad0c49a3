/**
 * The lexer of the template language Nomad's `template` stanza uses: consul-template's, which is Go's
 * text/template. It splits the source into text and actions between `LeftDelim` and `RightDelim`
 * (default `{{` `}}`), applies the trim markers (`{{- ` eats the whitespace before the action, ` -}}`
 * the whitespace after it; the marker must be followed/preceded by a space, as in Go), drops
 * comments (`{{/* … *\/}}`), and tokenizes actions. Every token keeps its line and column (1-based)
 * so errors point at the template's source as Go's do (`name:line:col`).
 */
import { TemplateError } from "./errors.js";

export type TokenKind =
  | "ident" // function name or keyword (if, range, end, …), true/false/nil
  | "field" // .Name (one component; chains are consecutive field tokens)
  | "dot" // .
  | "variable" // $ or $name
  | "string" // "…" or `…` (value unquoted)
  | "char" // 'x' (value is the code point as a number string)
  | "number"
  | "pipe" // |
  | "declare" // :=
  | "assign" // =
  | "comma"
  | "lparen"
  | "rparen";

export interface Token {
  kind: TokenKind;
  value: string;
  line: number;
  col: number;
  /** For field/rparen/variable: no space before it (a `.Field` chained onto the previous operand). */
  adjacent: boolean;
}

export type Item =
  { kind: "text"; text: string } | { kind: "action"; tokens: Token[]; line: number; col: number };

export interface Delims {
  left: string;
  right: string;
}

const SPACE = /[ \t\r\n]/;
const TRIM_SPACE = /^[ \t\r\n]+/;

/** Positions (1-based line and column) of offsets in `src`: line starts found once, then searched. */
function positioner(src: string): (i: number) => { line: number; col: number } {
  const starts = [0];
  for (let k = src.indexOf("\n"); k >= 0; k = src.indexOf("\n", k + 1)) starts.push(k + 1);
  return (i) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= i) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: i - starts[lo]! + 1 };
  };
}

export function lex(name: string, src: string, delims: Delims): Item[] {
  const left = delims.left || "{{";
  const right = delims.right || "}}";
  const items: Item[] = [];
  const position = positioner(src);
  let i = 0;
  let trimNext = false;
  while (i <= src.length) {
    const open = src.indexOf(left, i);
    let text = open < 0 ? src.slice(i) : src.slice(i, open);
    if (trimNext) text = text.replace(TRIM_SPACE, "");
    if (open < 0) {
      if (text) items.push({ kind: "text", text });
      break;
    }
    let start = open + left.length;
    // `{{- ` trims the text before; the `-` must be followed by white space (else `{{-3}}` is -3).
    if (src[start] === "-" && SPACE.test(src[start + 1] ?? "")) {
      text = text.replace(/[ \t\r\n]+$/, "");
      start += 1;
    }
    if (text) items.push({ kind: "text", text });
    const at = position(open);
    const { tokens, end, trimAfter } = lexAction(name, src, start, right, at, position);
    trimNext = trimAfter;
    if (tokens !== null) items.push({ kind: "action", tokens, line: at.line, col: at.col });
    i = end;
  }
  return items;
}

/** Tokens of the action starting at `i` (after the left delim); null for a comment. */
function lexAction(
  name: string,
  src: string,
  i: number,
  right: string,
  at: { line: number; col: number },
  position: (i: number) => { line: number; col: number },
): { tokens: Token[] | null; end: number; trimAfter: boolean } {
  const fail = (msg: string, k: number): never => {
    const p = position(k);
    throw new TemplateError(name, p.line, p.col, msg);
  };
  const closes = (k: number): { len: number; trim: boolean } | null => {
    if (SPACE.test(src[k] ?? "") && src[k + 1] === "-" && src.startsWith(right, k + 2))
      return { len: 2 + right.length, trim: true };
    if (src.startsWith(right, k)) return { len: right.length, trim: false };
    return null;
  };
  // A comment: `/*` after the delim (and trim marker), `*/` right before the closing one.
  let k = i;
  while (SPACE.test(src[k] ?? "")) k++;
  if (src.startsWith("/*", k)) {
    const endComment = src.indexOf("*/", k + 2);
    if (endComment < 0) fail("unclosed comment", k);
    const c = closes(endComment + 2);
    if (!c) fail("comment ends before closing delimiter", endComment);
    return { tokens: null, end: endComment + 2 + c!.len, trimAfter: c!.trim };
  }
  const tokens: Token[] = [];
  let spaced = true;
  k = i;
  for (;;) {
    if (k >= src.length) throw new TemplateError(name, at.line, at.col, "unclosed action");
    const c = closes(k);
    if (c) return { tokens, end: k + c.len, trimAfter: c.trim };
    const ch = src[k]!;
    if (SPACE.test(ch)) {
      k++;
      spaced = true;
      continue;
    }
    const p = position(k);
    const push = (kind: TokenKind, value: string, len: number): void => {
      tokens.push({ kind, value, line: p.line, col: p.col, adjacent: !spaced });
      k += len;
      spaced = false;
    };
    if (ch === "|") push("pipe", "|", 1);
    else if (ch === "(") push("lparen", "(", 1);
    else if (ch === ")") push("rparen", ")", 1);
    else if (ch === ",") push("comma", ",", 1);
    else if (ch === ":" && src[k + 1] === "=") push("declare", ":=", 2);
    else if (ch === "=") push("assign", "=", 1);
    else if (ch === '"') {
      const { value, len } = quoted(src, k, fail);
      push("string", value, len);
    } else if (ch === "`") {
      const close = src.indexOf("`", k + 1);
      if (close < 0) fail("unterminated raw quoted string", k);
      push("string", src.slice(k + 1, close).replaceAll("\r", ""), close - k + 1);
    } else if (ch === "'") {
      const { value, len } = quoted(src, k, fail, "'");
      if ([...value].length !== 1) fail(`malformed character constant: ${src.slice(k, k + len)}`, k);
      push("char", String(value.codePointAt(0)), len);
    } else if (ch === "." && !/[0-9]/.test(src[k + 1] ?? "")) {
      const m = /^\.[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(k));
      if (m) push("field", m[0].slice(1), m[0].length);
      else push("dot", ".", 1);
    } else if (ch === "$") {
      const m = /^\$[A-Za-z0-9_]*/.exec(src.slice(k))!;
      push("variable", m[0], m[0].length);
    } else if (/[0-9+\-.]/.test(ch)) {
      const m = /^[+-]?(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(\d[\d_]*)?\.?\d*([eE][+-]?\d+)?)/.exec(
        src.slice(k),
      );
      if (!m || m[0] === "" || /^[+-]?\.?$/.test(m[0])) fail(`bad number syntax: "${ch}"`, k);
      push("number", m![0], m![0].length);
    } else if (/[A-Za-z_]/.test(ch)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(k))!;
      push("ident", m[0], m[0].length);
    } else {
      fail(`unexpected ${JSON.stringify(ch)} in command`, k);
    }
  }
}

/** A Go interpreted string (or rune) literal at `k`: its value and its length in the source. */
function quoted(
  src: string,
  k: number,
  fail: (msg: string, k: number) => never,
  q = '"',
): { value: string; len: number } {
  let out = "";
  let j = k + 1;
  for (;;) {
    const c = src[j];
    if (c === undefined || c === "\n")
      fail(q === '"' ? "unterminated quoted string" : "unterminated character constant", k);
    if (c === q) return { value: out, len: j - k + 1 };
    if (c !== "\\") {
      out += c;
      j++;
      continue;
    }
    const e = src[j + 1];
    const simple: Record<string, string> = {
      n: "\n",
      t: "\t",
      r: "\r",
      a: "\x07",
      b: "\b",
      f: "\f",
      v: "\v",
      "\\": "\\",
      '"': '"',
      "'": "'",
    };
    if (e !== undefined && e in simple) {
      out += simple[e];
      j += 2;
      continue;
    }
    const hex = { x: 2, u: 4, U: 8 }[e ?? ""];
    if (hex) {
      const digits = src.slice(j + 2, j + 2 + hex);
      if (!new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits)) fail("invalid escape in quoted string", j);
      out += String.fromCodePoint(parseInt(digits, 16));
      j += 2 + hex;
      continue;
    }
    if (e !== undefined && /[0-7]/.test(e)) {
      const digits = src.slice(j + 1, j + 4);
      if (!/^[0-7]{3}$/.test(digits)) fail("invalid escape in quoted string", j);
      out += String.fromCharCode(parseInt(digits, 8));
      j += 4;
      continue;
    }
    fail("invalid escape in quoted string", j);
  }
}
