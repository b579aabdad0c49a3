/**
 * The one place the agent config reaches berth's HCL 1 reader (hashicorp/hcl v1, the language of
 * Nomad's agent configuration). When that reader moves, only this line changes.
 */
export { Hcl1Error, decodeItems, parseHcl1, type Item, type Node, type Value } from "../hcl1/index.js";
