/**
 * HCL's JSON form → the same items as HCL text, the way hashicorp/hcl v1's JSON parser builds them:
 * an object property is an item keyed by the property name; `null` is the empty string; then the
 * tree is flattened as hcl v1 does, so JSON decodes like the equivalent HCL:
 *  - a property whose value is a non-empty array of objects becomes one item per object (a
 *    repeated block: `"capability": [{…}, {…}]` ≡ two `capability { … }` blocks);
 *  - a property whose value is a non-empty object whose values are all objects becomes one item
 *    per inner property, the keys joined (`"volume": {"a": {…}}` ≡ `volume "a" { … }`).
 */
import { Hcl1Error, type Item, type Node, type Pos } from "./ast.js";

export function parseJson(file: string, text: string): Item[] {
  const p = new JsonParser(file, text);
  const top = p.value();
  p.end();
  if (top.kind !== "object") throw new Hcl1Error(file, top.pos, "the document must be a JSON object");
  return flatten(top.items);
}

function flatten(items: Item[]): Item[] {
  return items.flatMap(expand).map((i) => ({ keys: i.keys, val: deep(i.val) }));
}

function deep(n: Node): Node {
  if (n.kind === "object") return { ...n, items: flatten(n.items) };
  if (n.kind === "list") return { ...n, items: n.items.map(deep) };
  return n;
}

function expand(item: Item): Item[] {
  const v = item.val;
  if (v.kind === "list" && v.items.length > 0 && v.items.every((e) => e.kind === "object")) {
    return v.items.flatMap((e) => expand({ keys: item.keys, val: e }));
  }
  if (v.kind === "object" && v.items.length > 0 && v.items.every((s) => s.val.kind === "object")) {
    return v.items.flatMap((s) => expand({ keys: [...item.keys, ...s.keys], val: s.val }));
  }
  return [item];
}

class JsonParser {
  private i = 0;
  private line = 1;
  private col = 1;

  constructor(
    private readonly file: string,
    private readonly src: string,
  ) {}

  private pos(): Pos {
    return { line: this.line, col: this.col };
  }

  private fail(problem: string, pos = this.pos()): never {
    throw new Hcl1Error(this.file, pos, problem);
  }

  private advance(n: number): void {
    for (let k = 0; k < n; k++) {
      if (this.src[this.i++] === "\n") {
        this.line++;
        this.col = 1;
      } else this.col++;
    }
  }

  private skip(): string {
    while (/^[ \t\r\n]$/.test(this.src[this.i] ?? "")) this.advance(1);
    return this.src[this.i] ?? "";
  }

  private expect(c: string): void {
    const got = this.skip();
    if (got !== c) this.fail(`expected '${c}', got ${got === "" ? "end of file" : `'${got}'`}`);
    this.advance(1);
  }

  end(): void {
    const c = this.skip();
    if (c !== "") this.fail(`unexpected '${c}' after the JSON document`);
  }

  private match(re: RegExp): string | undefined {
    re.lastIndex = this.i;
    const m = re.exec(this.src);
    return m?.[0];
  }

  private str(): string {
    const pos = this.pos();
    const raw = this.match(/"(?:[^"\\\n]|\\.)*"/y);
    if (raw === undefined) this.fail("string not terminated");
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch {
      this.fail("invalid escape in string", pos);
    }
    this.advance(raw.length);
    return v as string;
  }

  value(): Node {
    const c = this.skip();
    const pos = this.pos();
    if (c === "{") {
      this.advance(1);
      const items: Item[] = [];
      if (this.skip() === "}") this.advance(1);
      else {
        for (;;) {
          if (this.skip() !== '"') this.fail("expected a property name in double quotes");
          const keyPos = this.pos();
          const name = this.str();
          this.expect(":");
          items.push({ keys: [{ name, pos: keyPos }], val: this.value() });
          if (this.skip() === ",") this.advance(1);
          else break;
        }
        this.expect("}");
      }
      return { kind: "object", items, pos };
    }
    if (c === "[") {
      this.advance(1);
      const items: Node[] = [];
      if (this.skip() === "]") this.advance(1);
      else {
        for (;;) {
          items.push(this.value());
          if (this.skip() === ",") this.advance(1);
          else break;
        }
        this.expect("]");
      }
      return { kind: "list", items, pos };
    }
    if (c === '"') {
      const start = this.i;
      const value = this.str();
      return { kind: "literal", type: "string", value, text: this.src.slice(start, this.i), pos };
    }
    const word = this.match(/(?:true|false|null)\b/y);
    if (word !== undefined) {
      this.advance(word.length);
      if (word === "null") return { kind: "literal", type: "string", value: "", text: "", pos };
      return { kind: "literal", type: "bool", value: word === "true", text: word, pos };
    }
    const num = this.match(/-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y);
    if (num !== undefined && num !== "") {
      this.advance(num.length);
      const float = /[.eE]/.test(num);
      // An integer -0 is 0, as Go's ParseInt reads it.
      const value = float ? Number(num) : Number(num) + 0;
      if (!float && !Number.isSafeInteger(value)) this.fail(`number ${num} is out of range`, pos);
      return { kind: "literal", type: float ? "float" : "number", value, text: num, pos };
    }
    this.fail(c === "" ? "expected a value, got end of file" : `expected a value, got '${c}'`);
  }
}
