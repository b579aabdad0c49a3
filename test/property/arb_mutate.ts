/**
 * Mutations of a valid-ish JSON body: at a chosen place in the value, a wrong type, a huge or odd
 * number, an odd string, a deep nest, a missing or an extra field, a duplicated array element;
 * and, on the wire, truncated JSON, an empty or non-JSON body and a wrong content type. The place
 * is picked by index over every path of the value, so a mutation can reach any field.
 */
import fc from "fast-check";

/** A JSON value nested `depth` levels deep (arrays or objects), built without recursion. */
export function deepNest(depth: number, kind: "array" | "object"): string {
  return kind === "array"
    ? "[".repeat(depth) + "]".repeat(depth)
    : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

/** Odd strings: control and terminal escapes, NUL, traversal, template syntax, a lone surrogate, 10 KB. */
export const oddString = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "\u001b[2J\u001b[31mred\u001b[0m",
    "\r\n\t",
    "../../etc/passwd",
    "/",
    "/../etc",
    "..",
    "${var.x}",
    "%00",
    "\ud800",
    "NaN",
    "Infinity",
    "-1",
    "1e300",
    "9007199254740993",
    "true",
    "null",
    "x".repeat(10 * 1024),
    "é".repeat(300),
  ),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 12 }),
);

/** Numbers at and past every edge: huge, 2^53 + 1, 2^63, negative, fractional, tiny. */
export const oddNumber = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      1e300,
      -1e300,
      2 ** 53 + 1,
      2 ** 53,
      2 ** 63,
      2 ** 64,
      -(2 ** 63),
      -1,
      -0,
      0.5,
      1.5,
      1e-300,
      10_001,
      101,
      2 ** 31,
      Number.MAX_VALUE,
    ),
  },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
);

/** Values of the wrong kind for almost any field. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: oddNumber },
  { weight: 3, arbitrary: oddString },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { "": "" }, [[]]) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

export type Mutation =
  | { kind: "set"; at: number; value: unknown }
  | { kind: "num"; at: number; value: number }
  | { kind: "str"; at: number; value: string }
  | { kind: "delete"; at: number }
  | { kind: "extra"; at: number; key: string; value: unknown }
  | { kind: "dup"; at: number }
  | { kind: "wrap"; at: number }
  | { kind: "deep"; at: number; depth: number; nest: "array" | "object" };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("set" as const), at: fc.nat(), value: oddValue }) },
  // Aimed at the fields that are numbers (counts, priorities, capacities, durations, deadlines) and
  // strings (IDs, names, modes, paths) in the valid body.
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("num" as const), at: fc.nat(), value: oddNumber }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("str" as const), at: fc.nat(), value: oddString }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("delete" as const), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("extra" as const),
      at: fc.nat(),
      key: fc.constantFrom("Extra", "__proto__", "constructor", "ID", ""),
      value: oddValue,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("dup" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("wrap" as const), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("deep" as const),
      at: fc.nat(),
      depth: fc.constantFrom(100, 1000, 5000, 20_000),
      nest: fc.constantFrom("array" as const, "object" as const),
    }),
  },
);

type Path = (string | number)[];

function paths(v: unknown, here: Path = [], out: Path[] = []): Path[] {
  out.push(here);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...here, i], out));
  else if (v !== null && typeof v === "object")
    for (const [k, x] of Object.entries(v)) paths(x, [...here, k], out);
  return out;
}

function valueAt(root: unknown, p: Path): unknown {
  let cur = root;
  for (const k of p) cur = (cur as Record<string | number, unknown>)[k];
  return cur;
}

function parentOf(root: unknown, p: Path): unknown {
  let cur = root;
  for (const k of p.slice(0, -1)) cur = (cur as Record<string | number, unknown>)[k];
  return cur;
}

/** A marker for a raw JSON text spliced into the serialised body (deep nests are too deep for stringify). */
const RAW = "\u0001raw:";

/** Applies mutations to a copy of `body`; returns the JSON text to send. */
export function applyMutations(body: unknown, muts: Mutation[]): string {
  const root: { v: unknown } = { v: structuredClone(body) };
  const raws: string[] = [];
  for (const m of muts) {
    const want = m.kind === "num" ? "number" : m.kind === "str" ? "string" : undefined;
    const all = paths(root.v)
      .map((p) => ["v", ...p])
      .filter((p) => want === undefined || typeof valueAt(root, p) === want);
    if (all.length === 0) continue;
    const p = all[m.at % all.length] ?? ["v"];
    const parent = parentOf(root, p) as Record<string | number, unknown> | unknown[];
    const key = p[p.length - 1] as string | number;
    const cur = (parent as Record<string | number, unknown>)[key];
    switch (m.kind) {
      // The values are copied in: fc.constantFrom hands out the same [] / {} every time, and a later
      // mutation inside one would change the arbitrary itself (and could make a value contain itself).
      case "set":
      case "num":
      case "str":
        (parent as Record<string | number, unknown>)[key] = structuredClone(m.value);
        break;
      case "delete":
        if (Array.isArray(parent) && typeof key === "number") parent.splice(key, 1);
        else if (key !== "v") delete (parent as Record<string, unknown>)[key];
        else root.v = undefined;
        break;
      case "extra":
        if (cur !== null && typeof cur === "object" && !Array.isArray(cur))
          Object.defineProperty(cur, m.key, {
            value: structuredClone(m.value),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else if (Array.isArray(cur)) cur.push(structuredClone(m.value));
        break;
      case "dup":
        if (Array.isArray(cur) && cur.length > 0) cur.push(structuredClone(cur[0]));
        else if (Array.isArray(parent) && typeof key === "number")
          parent.splice(key, 0, structuredClone(cur));
        break;
      case "wrap":
        (parent as Record<string | number, unknown>)[key] = [cur];
        break;
      case "deep":
        raws.push(deepNest(m.depth, m.nest));
        (parent as Record<string | number, unknown>)[key] = `${RAW}${raws.length - 1}`;
        break;
    }
  }
  let text = JSON.stringify(root.v) ?? "";
  raws.forEach((raw, i) => {
    text = text.replace(JSON.stringify(`${RAW}${i}`), raw);
  });
  return text;
}

/** How the text goes on the wire: as is, or broken on the way. */
export type Wire =
  | { kind: "json" }
  | { kind: "truncate"; at: number }
  | { kind: "empty" }
  | { kind: "garbage"; text: string }
  | { kind: "content-type"; type: string };

export const wire: fc.Arbitrary<Wire> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ kind: "json" as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: "empty" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("garbage" as const),
      text: fc.constantFrom(
        "null",
        "[]",
        "0",
        '"x"',
        "{",
        "}",
        "\ufeff{}",
        "{'a':1}",
        "a=b&c=d",
        "\u0000",
        "{}{}",
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("content-type" as const),
      type: fc.constantFrom(
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "",
      ),
    }),
  },
);

/** The body text and headers for `text` sent the `w` way. */
export function onWire(text: string, w: Wire): { body: string; headers: Record<string, string> } {
  const json = { "Content-Type": "application/json" };
  switch (w.kind) {
    case "json":
      return { body: text, headers: json };
    case "truncate":
      return { body: text.slice(0, text.length === 0 ? 0 : w.at % text.length), headers: json };
    case "empty":
      return { body: "", headers: json };
    case "garbage":
      return { body: w.text, headers: json };
    case "content-type":
      return { body: text, headers: w.type === "" ? {} : { "Content-Type": w.type } };
  }
}
