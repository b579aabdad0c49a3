/**
 * HCL2 templates: literal text with `${…}` interpolations and `%{ if }`/`%{ else }`/`%{ endif }`
 * and `%{ for }`/`%{ endfor }` directives, `~` strip markers, `$${` and `%%{` escapes, and in
 * quoted strings HCL's backslash escapes. The public entry points of the parser are here.
 */
import { type Node, type TmplPart } from "./ast.js";
import { ExprParser, type Tok } from "./parser.js";

/** Parses `src` as a template (the whole string; `$${` and `%%{` are escapes). */
export function parseTemplate(src: string): Node {
  const p = new Parser(src);
  const parts = p.templateParts(false);
  if (p.pos < src.length)
    throw p.err("Unexpected template directive", `Nothing opened this ${src.slice(p.pos, p.pos + 8)}…`);
  return { k: "tmpl", parts, at: 0 };
}

/** Parses `src` as one expression (nothing may follow it but whitespace and comments). */
export function parseExpression(src: string): Node {
  const p = new Parser(src);
  const x = p.expr();
  const t = p.peek();
  if (t.t !== "eof")
    throw p.err(
      "Extra characters after expression",
      `An expression was successfully parsed, but extra characters were found after it: "${t.v}".`,
      t.at,
    );
  return x;
}

class Parser extends ExprParser {
  /** Whether the directive just closed ended with `~}`, stripping the text after it. */
  private stripAfterDirective = false;

  /**
   * Template parts up to the end of the text (`quoted` false), or up to the closing `"` of a quoted
   * template, whose backslash escapes are decoded. Stops before `%{ else/endif/endfor }`.
   */
  override templateParts(quoted: boolean): TmplPart[] {
    const parts: TmplPart[] = [];
    let text = "";
    let stripNext = false;
    const flush = (stripBefore: boolean): void => {
      let s = text;
      if (stripNext) s = s.replace(/^\s+/, "");
      if (stripBefore) s = s.replace(/\s+$/, "");
      if (s !== "") parts.push({ k: "text", s });
      text = "";
      stripNext = false;
    };
    const s = this.src;
    while (this.pos < s.length) {
      const c = s[this.pos]!;
      if (quoted && c === '"') {
        this.pos++;
        flush(false);
        return parts;
      }
      if (quoted && c === "\\") {
        text += this.escape();
        continue;
      }
      if ((c === "$" || c === "%") && s[this.pos + 1] === "{") {
        const at = this.pos;
        this.pos += 2;
        const strip = s[this.pos] === "~";
        if (strip) this.pos++;
        if (c === "$") {
          flush(strip);
          const x = this.expr();
          stripNext = this.closeMarker();
          parts.push({ k: "interp", x, at });
          continue;
        }
        const kw = this.peek();
        if (kw.t === "ident" && ["else", "endif", "endfor"].includes(kw.v)) {
          this.pos = at; // the caller's directive consumes it
          flush(strip);
          return parts;
        }
        flush(strip);
        parts.push(this.directive(kw, at, quoted));
        stripNext = this.stripAfterDirective;
        continue;
      }
      if ((c === "$" || c === "%") && s[this.pos + 1] === c && s[this.pos + 2] === "{") {
        text += `${c}{`;
        this.pos += 3;
        continue;
      }
      text += c;
      this.pos++;
    }
    if (quoted) throw this.err("Unterminated template string", "No closing marker was found for the string.");
    flush(false);
    return parts;
  }

  private escape(): string {
    const s = this.src;
    const e = s[this.pos + 1];
    const simple: Record<string, string> = { n: "\n", r: "\r", t: "\t", '"': '"', "\\": "\\" };
    if (e !== undefined && simple[e] !== undefined) {
      this.pos += 2;
      return simple[e];
    }
    const len = e === "u" ? 4 : e === "U" ? 8 : 0;
    const hex = s.slice(this.pos + 2, this.pos + 2 + len);
    if (len === 0 || !/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== len) {
      throw this.err(
        "Invalid escape sequence",
        `The symbol "${e ?? ""}" is not a valid escape sequence selector.`,
      );
    }
    this.pos += 2 + len;
    return String.fromCodePoint(parseInt(hex, 16));
  }

  /** Consumes `}` or `~}` after an interpolation or directive; true when it strips what follows. */
  private closeMarker(): boolean {
    const strip = this.accept("~");
    this.expect("}", "the end of the template sequence");
    return strip;
  }

  /** Opens `%{ name` (already at `kw`) and expects `%{ name }` as the closing directive. */
  private closeDirective(name: string): { strip: boolean; stripAfter: boolean } {
    const at = this.pos;
    if (!this.src.startsWith("%{", at)) {
      throw this.err("Unterminated template directive", `Expected %{ ${name} } to close this directive.`, at);
    }
    this.pos += 2;
    const strip = this.src[this.pos] === "~";
    if (strip) this.pos++;
    const kw = this.next();
    if (kw.v !== name)
      throw this.err("Unexpected template directive", `Expected %{ ${name} }, found %{ ${kw.v} }.`, kw.at);
    return { strip, stripAfter: this.closeMarker() };
  }

  private directive(kw: Tok, at: number, quoted: boolean): TmplPart {
    if (kw.t === "ident" && kw.v === "if") {
      this.next();
      const c = this.expr();
      const lead = this.closeMarker();
      const then = this.body(quoted, lead);
      let els: TmplPart[] = [];
      if (
        this.src.startsWith("%{", this.pos) &&
        /^%\{~?\s*else\b/.test(this.src.slice(this.pos, this.pos + 12))
      ) {
        const { stripAfter } = this.closeDirective("else");
        els = this.body(quoted, stripAfter);
      }
      this.stripAfterDirective = this.closeDirective("endif").stripAfter;
      return { k: "if", c, then, else: els, at };
    }
    if (kw.t === "ident" && kw.v === "for") {
      this.next();
      let valVar = this.ident("an iterator name");
      let keyVar: string | undefined;
      if (this.accept(",")) {
        keyVar = valVar;
        valVar = this.ident("an iterator name");
      }
      const inKw = this.next();
      if (inKw.v !== "in")
        throw this.err(
          "Invalid 'for' directive",
          'The "in" keyword must follow the iterator names.',
          inKw.at,
        );
      const coll = this.expr();
      const lead = this.closeMarker();
      const body = this.body(quoted, lead);
      this.stripAfterDirective = this.closeDirective("endfor").stripAfter;
      return { k: "tfor", keyVar, valVar, coll, body, at };
    }
    throw this.err(
      "Invalid template directive",
      `"${kw.v}" is not a template directive: use %{ if }, %{ for }, or %%{ for a literal "%{".`,
      kw.at,
    );
  }

  /** A directive's body; `stripLead` removes its leading whitespace (`~}` before it). */
  private body(quoted: boolean, stripLead: boolean): TmplPart[] {
    const parts = this.templateParts(quoted);
    const first = parts[0];
    if (stripLead && first?.k === "text") first.s = first.s.replace(/^\s+/, "");
    if (this.src[this.pos + 2] === "~") {
      const last = parts[parts.length - 1];
      if (last?.k === "text") last.s = last.s.replace(/\s+$/, "");
    }
    return parts.filter((p) => p.k !== "text" || p.s !== "");
  }
}
