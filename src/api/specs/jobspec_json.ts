/**
 * HCL's JSON syntax, brought to the shape hcl2json gives the native syntax, where the two differ
 * beyond blocks being objects or lists (which the evaluator and Body read either way): a few
 * arguments are not templates in JSON but expressions written as strings, as HCL's JSON decoder
 * reads them (hcl's json package: a string where a traversal or a type is expected is parsed as
 * one). hcl2json hands those over wrapped in `${…}`, the form hcl2/ reads:
 * - a variable's `type` (`"list(string)"`, Nomad's `typeexpr`);
 * - a `dynamic` block's `iterator` (`"vm"`, the dynblock extension's traversal).
 * Everything else is left as written.
 */

type Obj = Record<string, unknown>;

const isObj = (x: unknown): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x);

/** The argument `key` of a block body, wrapped as hcl2json would hand it over. */
function wrapArg(body: unknown, key: string): unknown {
  if (!isObj(body)) return body;
  const v = body[key];
  return typeof v === "string" && !v.startsWith("${") ? { ...body, [key]: `\${${v}}` } : body;
}

/** Applies `f` to each body of labelled blocks written `{label: body | [body]}` or a list of those. */
function eachLabelled(v: unknown, f: (body: unknown) => unknown): unknown {
  const one = (o: unknown) =>
    isObj(o)
      ? Object.fromEntries(Object.entries(o).map(([k, b]) => [k, Array.isArray(b) ? b.map(f) : f(b)]))
      : o;
  return Array.isArray(v) ? v.map(one) : one(v);
}

/** Every `dynamic` block's iterator, anywhere in the body. */
function dynamicIterators(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dynamicIterators);
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    out[k] =
      k === "dynamic"
        ? eachLabelled(x, (spec) => dynamicIterators(wrapArg(spec, "iterator")))
        : dynamicIterators(x);
  }
  return out;
}

/** A decoded JSON-syntax jobspec in the shape the HCL form decodes to (see above). */
export function fromJsonSyntax(decoded: Obj): Obj {
  const body = dynamicIterators(decoded) as Obj;
  if (decoded.variable !== undefined)
    body.variable = eachLabelled(decoded.variable, (b) => wrapArg(b, "type"));
  return body;
}
