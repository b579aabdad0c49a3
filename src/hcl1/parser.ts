/**
 * HCL 1 text → the item list of its top-level body. The grammar is hashicorp/hcl v1's: a body is a
 * sequence of items, each `keys… = value` (one key) or `keys… { body }` (a block with any number of
 * labels), optionally separated by commas, so `a = 1, b = 2` and `x { a = 1, b = 2 }` fit on one
 * line; values are literals, `{ body }` objects and `[…]` lists (trailing comma allowed).
 *
 * Stricter than hcl v1 where it is lax by accident: a document that ends inside an item
 * (`a = `) is an error here, where hcl v1 silently returns what it had read so far.
 */
import { Hcl1Error, type Item, type Key, type List, type Node, type ObjectNode } from "./ast.js";
import { parseJson } from "./json.js";
import { Lexer, type Token } from "./lexer.js";

/**
 * Parses `text`; like hcl.Parse, text whose first non-blank character is `{` is HCL's JSON form.
 * Throws Hcl1Error (`file:line:col: message`).
 */
export function parseHcl1(file: string, text: string): Item[] {
  if (/^\s*\{/.test(text)) return parseJson(file, text);
  return new Parser(file, text).document();
}

const NAMES: Record<string, string> = { eof: "end of file", ident: "identifier", heredoc: "heredoc" };
const describe = (t: Token) => NAMES[t.type] ?? (t.type.length === 1 ? `'${t.type}'` : `${t.type} ${t.text}`);

class Parser {
  private readonly lexer: Lexer;
  private ahead: Token | undefined;

  constructor(
    private readonly file: string,
    text: string,
  ) {
    this.lexer = new Lexer(file, text);
  }

  private peek(): Token {
    this.ahead ??= this.lexer.scan();
    return this.ahead;
  }

  private scan(): Token {
    const t = this.peek();
    this.ahead = undefined;
    return t;
  }

  private fail(t: Token, problem: string): never {
    throw new Hcl1Error(this.file, t.pos, problem);
  }

  document(): Item[] {
    const items = this.body(false);
    const t = this.peek();
    if (t.type !== "eof") this.fail(t, `unexpected ${describe(t)}`);
    return items;
  }

  /** Items up to the end of file (top level) or up to the closing `}` (inside a block). */
  private body(inBlock: boolean): Item[] {
    const items: Item[] = [];
    for (;;) {
      const t = this.peek();
      if (t.type === "eof") {
        if (inBlock) this.fail(t, "block not closed: expected '}', got end of file");
        return items;
      }
      if (t.type === "}") {
        if (inBlock) return items;
        this.fail(t, "unexpected '}' with no block open");
      }
      items.push(this.item());
      if (this.peek().type === ",") this.scan();
    }
  }

  private item(): Item {
    const keys: Key[] = [];
    for (;;) {
      const t = this.scan();
      if (t.type === "ident" || t.type === "string") {
        keys.push({ name: String(t.value), pos: t.pos });
        continue;
      }
      if (t.type === "=") {
        if (keys.length === 0) this.fail(t, "expected a key before '='");
        if (keys.length > 1)
          this.fail(t, `key '${keys.map((k) => k.name).join(" ")}': labels need a block ('{'), not '='`);
        return { keys, val: this.value() };
      }
      if (t.type === "{") {
        if (keys.length === 0) this.fail(t, "expected a key before '{'");
        return { keys, val: this.object(t) };
      }
      if (keys.length > 0)
        this.fail(
          t,
          `key '${keys.map((k) => k.name).join(" ")}' expected start of object ('{') or assignment ('='), got ${describe(t)}`,
        );
      this.fail(t, `expected a key, got ${describe(t)}`);
    }
  }

  private value(): Node {
    const t = this.scan();
    switch (t.type) {
      case "string":
      case "heredoc":
      case "number":
      case "float":
      case "bool":
        return { kind: "literal", type: t.type, value: t.value, text: t.text, pos: t.pos };
      case "{":
        return this.object(t);
      case "[":
        return this.list(t);
      default:
        this.fail(t, `expected a value, got ${describe(t)}`);
    }
  }

  /** `{` has been read. */
  private object(open: Token): ObjectNode {
    const items = this.body(true);
    this.scan();
    return { kind: "object", items, pos: open.pos };
  }

  /** `[` has been read. */
  private list(open: Token): List {
    const items: Node[] = [];
    for (;;) {
      if (this.peek().type === "]") break;
      items.push(this.value());
      const t = this.peek();
      if (t.type === ",") this.scan();
      else if (t.type !== "]") this.fail(t, `in list: expected ',' or ']', got ${describe(t)}`);
    }
    this.scan();
    return { kind: "list", items, pos: open.pos };
  }
}
