/**
 * HCL2 templates: literal text with `${…}` interpolations and `%{ if }`/`%{ else }`/`%{ endif }`
 * and `%{ for }`/`%{ endfor }` directives, `~` strip markers, `$${` and `%%{` escapes, in quoted
 * strings HCL's backslash escapes, and heredocs (`<<EOT`, and `<<-EOT` with its indentation
 * flushed). The public entry points of the parser are here.
 *
 * Parsed in hclsyntax's three steps (parser_template.go), so whitespace comes out as Nomad's HCL
 * gives it: (1) a flat list of tokens, where a `~` trims the one literal token beside it — in a
 * heredoc or a bare template a literal token ends with its line, so `%{ for x in xs ~}` eats the
 * rest of its own line and not the next line's indentation; (2) for `<<-`, the indentation the
 * lines share is removed from the tokens that start a line, after the trimming; (3) adjacent
 * literals are joined and the directives nested. A template that is one interpolation and nothing
 * else (no literal, not even one a `~` emptied) keeps the value's type.
 */
import { type Node, type TmplPart } from "./ast.js";
import { ExprParser, type Tok } from "./parser.js";

/** Parses `src` as a bare template (the whole string; `$${` and `%%{` are escapes). */
export function parseTemplate(src: string): Node {
  const p = new Parser(src);
  return { k: "tmpl", parts: p.templateParts(false), at: 0 };
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

/** One token of step (1). */
type TTok =
  | { k: "lit"; s: string }
  | { k: "interp"; x: Node; at: number }
  | { k: "if"; c: Node; at: number }
  | { k: "for"; keyVar?: string; valVar: string; coll: Node; at: number }
  | { k: "end"; name: "else" | "endif" | "endfor"; at: number };

type Mode = "quoted" | "bare" | "heredoc";

const HEREDOC = /<<(-?)([A-Za-z_][A-Za-z0-9_-]*)\r?\n/y;

class Parser extends ExprParser {
  /** Where the template being scanned ends (a heredoc's body ends before its closing marker). */
  private limit = -1;

  /** A quoted template (after its opening `"`, through its closing one) or the whole bare text. */
  override templateParts(quoted: boolean): TmplPart[] {
    return this.build(this.scan(quoted ? "quoted" : "bare"));
  }

  /** A heredoc at `at` (`<<EOT` or `<<-EOT`, its lines, the marker alone on a line). */
  override heredoc(at: number): Node {
    HEREDOC.lastIndex = at;
    const m = HEREDOC.exec(this.src);
    if (!m)
      throw this.err("Invalid expression", "A heredoc begins with <<MARKER or <<-MARKER and a newline.", at);
    const [, flush, marker] = m;
    const bodyStart = at + m[0].length;
    let lineStart = bodyStart;
    for (;;) {
      const nl = this.src.indexOf("\n", lineStart);
      if (nl < 0)
        throw this.err(
          "Unterminated template string",
          `No closing marker ${marker} was found for the heredoc.`,
          at,
        );
      if (this.src.slice(lineStart, nl).trim() === marker) break;
      lineStart = nl + 1;
    }
    const outer = this.limit;
    this.limit = lineStart;
    this.pos = bodyStart;
    const toks = this.scan("heredoc");
    this.limit = outer;
    this.pos = this.src.indexOf(marker, lineStart) + marker.length;
    if (flush === "-") flushIndentation(toks);
    return { k: "tmpl", parts: this.build(toks), at };
  }

  /** Step (1): the tokens up to the end of the template, each `~` trimming its neighbour. */
  private scan(mode: Mode): TTok[] {
    const s = this.src;
    const end = this.limit >= 0 ? this.limit : s.length;
    const toks: TTok[] = [];
    let text = "";
    let ltrimNext = false;
    /** Ends the literal token being read, if any; the first one after a `~}` loses its leading whitespace. */
    const endLiteral = (): void => {
      if (text === "") return;
      toks.push({ k: "lit", s: ltrimNext ? text.replace(/^\s+/u, "") : text });
      ltrimNext = false;
      text = "";
    };
    while (this.pos < end) {
      const c = s[this.pos]!;
      if (mode === "quoted" && c === '"') {
        this.pos++;
        endLiteral();
        return toks;
      }
      if (mode === "quoted" && c === "\\") {
        text += this.escape();
        continue;
      }
      if ((c === "$" || c === "%") && s[this.pos + 1] === c && s[this.pos + 2] === "{") {
        text += `${c}{`;
        this.pos += 3;
        continue;
      }
      if ((c === "$" || c === "%") && s[this.pos + 1] === "{") {
        const at = this.pos;
        const strip = s[this.pos + 2] === "~";
        endLiteral();
        const prev = toks[toks.length - 1];
        if (strip && prev?.k === "lit") prev.s = prev.s.replace(/\s+$/u, "");
        ltrimNext = false; // a `~}` trims only a literal token right after it
        this.pos = at + (strip ? 3 : 2);
        toks.push(c === "$" ? { k: "interp", x: this.expr(), at } : this.directive(at));
        ltrimNext = this.closeMarker();
        continue;
      }
      text += c;
      this.pos++;
      // Outside quotes a literal token ends with its line: a `~` trims no further.
      if (mode !== "quoted" && c === "\n") endLiteral();
    }
    if (mode === "quoted")
      throw this.err("Unterminated template string", "No closing marker was found for the string.");
    endLiteral();
    return toks;
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

  /** The directive after `%{` (or `%{~`) at `at`, up to its closing marker. */
  private directive(at: number): TTok {
    const kw: Tok = this.peek();
    if (kw.t !== "ident")
      throw this.err(
        "Invalid template directive",
        'A template directive keyword ("if", "for", etc) is expected at the beginning of a %{ sequence.',
        kw.at,
      );
    this.next();
    if (kw.v === "if") return { k: "if", c: this.expr(), at };
    if (kw.v === "else" || kw.v === "endif" || kw.v === "endfor") return { k: "end", name: kw.v, at };
    if (kw.v === "for") {
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
      return { k: "for", keyVar, valVar, coll: this.expr(), at };
    }
    throw this.err(
      "Invalid template directive",
      `"${kw.v}" is not a template directive: use %{ if }, %{ for }, or %%{ for a literal "%{".`,
      kw.at,
    );
  }

  /** Step (3): adjacent literals joined, directives nested with their bodies. */
  private build(toks: TTok[]): TmplPart[] {
    const melded: TTok[] = [];
    for (const t of toks) {
      const last = melded[melded.length - 1];
      if (t.k === "lit" && last?.k === "lit") melded[melded.length - 1] = { k: "lit", s: last.s + t.s };
      else melded.push(t);
    }
    let i = 0;
    const seq = (closers: string[]): { parts: TmplPart[]; closer?: TTok & { k: "end" } } => {
      const parts: TmplPart[] = [];
      while (i < melded.length) {
        const t = melded[i++]!;
        if (t.k === "end") {
          if (closers.includes(t.name)) return { parts, closer: t };
          throw this.err(
            "Unexpected template directive",
            closers.length > 0
              ? `Expected %{ ${closers[closers.length - 1]} }, found %{ ${t.name} }.`
              : `Nothing opened this %{ ${t.name} }.`,
            t.at,
          );
        }
        if (t.k === "lit") parts.push({ k: "text", s: t.s });
        else if (t.k === "interp") parts.push(t);
        else if (t.k === "if") {
          const then = seq(["else", "endif"]);
          const els = then.closer?.name === "else" ? seq(["endif"]) : { parts: [], closer: then.closer };
          if (!els.closer) throw unterminated(this, "endif", t.at);
          parts.push({ k: "if", c: t.c, then: then.parts, else: els.parts, at: t.at });
        } else {
          const body = seq(["endfor"]);
          if (!body.closer) throw unterminated(this, "endfor", t.at);
          parts.push({
            k: "tfor",
            keyVar: t.keyVar,
            valVar: t.valVar,
            coll: t.coll,
            body: body.parts,
            at: t.at,
          });
        }
      }
      return { parts };
    };
    return seq([]).parts;
  }
}

function unterminated(p: Parser, name: string, at: number) {
  return p.err("Unterminated template directive", `Expected %{ ${name} } to close this directive.`, at);
}

/**
 * Step (2) of a `<<-` heredoc (hclsyntax's flushHeredocTemplateParts): the fewest leading spaces of
 * the literal tokens that start a line (blank lines aside; a line that starts with a sequence
 * counts as none) are removed from each of them. A token starts a line when the literal token
 * before it ended with a newline, so a line after one a `~` emptied is left as it is.
 */
function flushIndentation(toks: TTok[]): void {
  let min = Infinity;
  let lineStart = true;
  const adjust: { k: "lit"; s: string }[] = [];
  for (const t of toks) {
    if (lineStart) {
      lineStart = false;
      if (t.k !== "lit") min = 0;
      else {
        const rest = t.s.replace(/^\s+/u, "");
        if (!(rest === "" && t.s.endsWith("\n"))) {
          min = Math.min(min, [...t.s.slice(0, t.s.length - rest.length)].length);
          adjust.push(t);
        }
      }
    }
    if (t.k === "lit" && t.s.endsWith("\n")) lineStart = true;
  }
  if (min === Infinity || min === 0) return;
  for (const t of adjust) t.s = [...t.s].slice(min).join("");
}
