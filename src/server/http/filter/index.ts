/** Nomad's `?filter=` language (go-bexpr's): parse once per request, evaluate per item. */
export { parseFilter, FilterSyntaxError, type Expr } from "./parse.js";
export { evaluate, FilterEvalError } from "./evaluate.js";
