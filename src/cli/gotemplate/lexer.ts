/**
 * The tokens of a Go text/template, as Go's text/template/parse lexer cuts them: text between
 * actions, and inside `{{ }}` fields, variables, identifiers, literals, `|`, `:=`, `=`, parens,
 * spaces. Trim markers (`{{- `, ` -}}`) strip the whitespace of the text beside them here, as Go
 * does; comments (`{{/* … *\/}}`) produce nothing. A lexical error ends the stream with an error
 * token whose text is Go's message (`unterminated quoted string`, `unclosed action`).
 */

export type TokenKind =
  | "text"
  | "open"
  | "close"
  | "field"
  | "variable"
  | "identifier"
  | "keyword"
  | "dot"
  | "string"
  | "rawString"
  | "char"
  | "charConstant"
  | "number"
  | "bool"
  | "nil"
  | "pipe"
  | "declare"
  | "assign"
  | "lparen"
  | "rparen"
  | "space"
  | "error"
  | "eof";

export interface Token {
  kind: TokenKind;
  val: string;
  /** Offset in the template source, for line numbers and error context. */
  pos: number;
}

export const KEYWORDS = new Set([
  "if",
  "else",
  "end",
  "range",
  "with",
  "define",
  "template",
  "block",
  "break",
  "continue",
]);

const isSpace = (c: string | undefined) => c === " " || c === "\t" || c === "\r" || c === "\n";
const isAlnum = (c: string | undefined) => c !== undefined && /^[\p{L}\p{Nd}_]$/u.test(c);

/** Go's %#U of one character: `U+007D '}'`. */
export function goRune(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")} '${c}'`;
}

/** All tokens of `src`, ending with `eof` or one `error`. */
export function lex(src: string): Token[] {
  const out: Token[] = [];
  let pos = 0;
  let parenDepth = 0;
  const emit = (kind: TokenKind, start: number, end: number) =>
    out.push({ kind, val: src.slice(start, end), pos: start });
  const error = (msg: string, at: number) => {
    out.push({ kind: "error", val: msg, pos: at });
    return out;
  };
  // After an identifier, field or variable: what may follow without a space.
  const atTerminator = (i: number) => {
    const c = src[i];
    return c === undefined || isSpace(c) || ".,|:()}=".includes(c) || (c === "-" && src.startsWith("-}}", i));
  };

  while (pos <= src.length) {
    // Text up to the next action.
    const open = src.indexOf("{{", pos);
    const textEnd = open < 0 ? src.length : open;
    let trimLeft = false;
    if (open >= 0 && src[open + 2] === "-" && isSpace(src[open + 3])) trimLeft = true;
    let text = src.slice(pos, textEnd);
    if (trimLeft) text = text.replace(/[ \t\r\n]+$/, "");
    if (text.length > 0) out.push({ kind: "text", val: text, pos });
    if (open < 0) {
      out.push({ kind: "eof", val: "", pos: src.length });
      return out;
    }
    pos = open + 2 + (trimLeft ? 2 : 0);
    const actionStart = open;
    // A comment is the whole action.
    if (src.startsWith("/*", pos)) {
      const end = src.indexOf("*/", pos + 2);
      if (end < 0) return error("unclosed comment", actionStart);
      let p = end + 2;
      let trimRight = false;
      if (src.startsWith(" -}}", p)) {
        trimRight = true;
        p += 4;
      } else if (src.startsWith("}}", p)) p += 2;
      else return error("comment ends before closing delimiter", actionStart);
      pos = p;
      if (trimRight) while (isSpace(src[pos])) pos++;
      continue;
    }
    // An action ends only at depth 0 ("unclosed left paren" otherwise), so each starts there.
    emit("open", actionStart, pos);
    // Inside the action.
    for (;;) {
      if (
        src.startsWith("}}", pos) ||
        (src[pos - 1] !== undefined && isSpace(src[pos - 1]) && src.startsWith("-}}", pos))
      ) {
        if (parenDepth > 0) return error("unclosed left paren", pos);
        const trimRight = src[pos] === "-";
        const end = pos + (trimRight ? 3 : 2);
        emit("close", pos, end);
        pos = end;
        if (trimRight) while (isSpace(src[pos])) pos++;
        break;
      }
      const c = src[pos];
      const start = pos;
      if (c === undefined) return error("unclosed action", start);
      if (isSpace(c)) {
        while (isSpace(src[pos]) && !src.startsWith("-}}", pos)) pos++;
        // " -}}": the space before the trim marker belongs to it.
        emit("space", start, pos);
        continue;
      }
      pos++;
      if (c === ":") {
        if (src[pos] !== "=") return error("expected :=", start);
        pos++;
        emit("declare", start, pos);
      } else if (c === "=") emit("assign", start, pos);
      else if (c === "|") emit("pipe", start, pos);
      else if (c === '"' || c === "'") {
        for (;;) {
          const d = src[pos++];
          if (d === "\\") {
            if (src[pos] === undefined || src[pos] === "\n") pos = -1;
            else pos++;
          }
          if (pos < 0 || d === undefined || d === "\n") {
            return error(c === '"' ? "unterminated quoted string" : "unterminated character constant", start);
          }
          if (d === c) break;
        }
        emit(c === '"' ? "string" : "charConstant", start, pos);
      } else if (c === "`") {
        const end = src.indexOf("`", pos);
        if (end < 0) return error("unterminated raw quoted string", start);
        pos = end + 1;
        emit("rawString", start, pos);
      } else if (c === "$" || (c === "." && !/[0-9]/.test(src[pos] ?? ""))) {
        if (atTerminator(pos)) {
          emit(c === "$" ? "variable" : "dot", start, pos);
          continue;
        }
        while (isAlnum(src[pos])) pos++;
        if (!atTerminator(pos))
          return error(`bad character ${goRune(String.fromCodePoint(src.codePointAt(pos)!))}`, start);
        emit(c === "$" ? "variable" : "field", start, pos);
      } else if (c === "." || c === "+" || c === "-" || /[0-9]/.test(c)) {
        const m =
          /^[+-]?(0[xX][0-9a-fA-F_]*|0[bB][01_]*|0[oO][0-7_]*|[0-9_]*(\.[0-9_]*)?([eE][+-]?[0-9_]+)?)/.exec(
            src.slice(start),
          );
        pos = start + (m?.[0].length ?? 1);
        if (isAlnum(src[pos]) || (pos === start + 1 && /[+-]/.test(c))) {
          pos++;
          return error(`bad number syntax: ${JSON.stringify(src.slice(start, pos))}`, start);
        }
        emit("number", start, pos);
      } else if (isAlnum(c)) {
        while (isAlnum(src[pos])) pos++;
        if (!atTerminator(pos))
          return error(`bad character ${goRune(String.fromCodePoint(src.codePointAt(pos)!))}`, start);
        const word = src.slice(start, pos);
        const kind: TokenKind = KEYWORDS.has(word)
          ? "keyword"
          : word === "true" || word === "false"
            ? "bool"
            : word === "nil"
              ? "nil"
              : "identifier";
        emit(kind, start, pos);
      } else if (c === "(") {
        parenDepth++;
        emit("lparen", start, pos);
      } else if (c === ")") {
        parenDepth--;
        if (parenDepth < 0) return error(`unexpected right paren ${goRune(c)}`, start);
        emit("rparen", start, pos);
      } else if (c.charCodeAt(0) < 0x7f && c.charCodeAt(0) >= 0x20) {
        emit("char", start, pos);
      } else {
        return error(
          `unrecognized character in action: ${goRune(String.fromCodePoint(src.codePointAt(start)!))}`,
          start,
        );
      }
    }
  }
  out.push({ kind: "eof", val: "", pos: src.length });
  return out;
}
