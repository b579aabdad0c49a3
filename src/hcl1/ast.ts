/**
 * The syntax tree of an HCL 1 document (hashicorp/hcl v1, the language of Nomad's volume specs),
 * with the position of every node, so the decoders above it can name the line of a bad value.
 * HCL's JSON form parses to the same tree (json.ts).
 */
import { SpecError } from "./spec_error.js";

/** 1-based line and column (columns count characters). */
export interface Pos {
  line: number;
  col: number;
}

export type LiteralType = "string" | "heredoc" | "number" | "float" | "bool";

/** A scalar. `text` is the token as written (Nomad reads sizes from it, not from the value). */
export interface Literal {
  kind: "literal";
  type: LiteralType;
  value: string | number | boolean;
  text: string;
  pos: Pos;
}

export interface List {
  kind: "list";
  items: Node[];
  pos: Pos;
}

/** `{ … }`: a block's body or an object value. */
export interface ObjectNode {
  kind: "object";
  items: Item[];
  pos: Pos;
}

export type Node = Literal | List | ObjectNode;

export interface Key {
  name: string;
  pos: Pos;
}

/**
 * One `key = value` or `key "label" … { … }`. `keys` holds the name then the labels; a decoder that
 * selects items by name strips it (see `filter`), as hcl's ObjectList.Filter does.
 */
export interface Item {
  keys: Key[];
  val: Node;
}

/** A parse or decode error; the message reads `file:line:col: problem`. */
export class Hcl1Error extends SpecError {
  constructor(
    readonly file: string,
    readonly pos: Pos,
    readonly problem: string,
  ) {
    super(`${file}:${pos.line}:${pos.col}: ${problem}`);
  }
}

/** The position of an item: its first key, or its value when the keys have been stripped. */
export function itemPos(item: Item): Pos {
  return item.keys[0]?.pos ?? item.val.pos;
}

/**
 * The items whose first key is `name`, with that key removed (hcl's ObjectList.Filter): a block
 * `capability { … }` comes back with no keys, a labelled `volume "a" { … }` with the key `a`.
 */
export function filter(items: Item[], name: string): Item[] {
  return items.filter((i) => i.keys[0]?.name === name).map((i) => ({ keys: i.keys.slice(1), val: i.val }));
}

/** The items that have no keys left (hcl's ObjectList.Elem): the plain blocks and assignments. */
export function elem(items: Item[]): Item[] {
  return items.filter((i) => i.keys.length === 0);
}

/** A short description of a node for error messages. */
export function describeNode(n: Node): string {
  if (n.kind === "object") return "a block";
  if (n.kind === "list") return "a list";
  return n.type === "heredoc" ? "a heredoc string" : `${n.type} ${n.text.split("\n")[0]}`;
}
