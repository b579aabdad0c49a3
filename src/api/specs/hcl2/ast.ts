/**
 * The syntax tree of HCL2's expression and template language (hclsyntax), as berth's own parser
 * (parser.ts, template.ts) builds it. `at` is the offset of the node in the text it was parsed from,
 * used only to name the line of an error.
 */

/** A value of the language: cty's string, number, bool, null, and collections as JSON shapes. */
export type Value = string | number | boolean | null | Value[] | { [k: string]: Value };

export type Node =
  | { k: "lit"; v: Value; at: number }
  | { k: "tmpl"; parts: TmplPart[]; at: number }
  | { k: "var"; name: string; at: number; src: string }
  | { k: "attr"; obj: Node; name: string; at: number; src: string }
  | { k: "index"; obj: Node; key: Node; at: number; src: string }
  | { k: "splat"; src: Node; each: Node; at: number }
  | { k: "anon"; at: number }
  | { k: "call"; name: string; args: Node[]; expand: boolean; at: number }
  | { k: "tuple"; items: Node[]; at: number }
  | { k: "object"; items: { key: Node; value: Node }[]; at: number }
  | { k: "unary"; op: "-" | "!"; x: Node; at: number }
  | { k: "binary"; op: string; l: Node; r: Node; at: number }
  | { k: "cond"; c: Node; t: Node; f: Node; at: number }
  | { k: "paren"; x: Node; at: number }
  | ForNode;

export interface ForNode {
  k: "for";
  keyVar?: string;
  valVar: string;
  coll: Node;
  key?: Node;
  value: Node;
  cond?: Node;
  group: boolean;
  at: number;
}

/** One piece of a template: literal text, an interpolation, or an `%{ if }` / `%{ for }` directive. */
export type TmplPart =
  | { k: "text"; s: string }
  | { k: "interp"; x: Node; at: number }
  | { k: "if"; c: Node; then: TmplPart[]; else: TmplPart[]; at: number }
  | { k: "tfor"; keyVar?: string; valVar: string; coll: Node; body: TmplPart[]; at: number };

/** An error in the language, at an offset of the text being parsed or evaluated. */
export class HclError extends Error {
  override readonly name = "HclError";
  constructor(
    /** HCL's diagnostic summary, e.g. "Unsupported attribute". */
    readonly summary: string,
    /** The detail sentence(s); never a variable's value. */
    readonly detail: string,
    readonly at: number = -1,
  ) {
    super(`${summary}; ${detail}`);
  }
}
