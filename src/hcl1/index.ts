/**
 * berth's own HCL 1 (hashicorp/hcl v1) reader: the language of Nomad's volume specs (and agent
 * configuration). parseHcl1 gives the items with positions; decodeItems the generic value hcl v1
 * decodes into `map[string]interface{}`. See the README's design notes for why it is berth's own.
 */
export { Hcl1Error, describeNode, elem, filter, itemPos } from "./ast.js";
export { SpecError } from "./spec_error.js";
export type { Item, Key, List, Literal, Node, ObjectNode, Pos } from "./ast.js";
export { decodeItems, type Value } from "./decode.js";
export { parseHcl1 } from "./parser.js";
