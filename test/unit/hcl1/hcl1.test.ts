/**
 * berth's HCL 1 reader against hashicorp/hcl v1 itself (js-hcl-parser is a gopherjs build of it,
 * a devDependency used only here): generated documents must decode to the same generic value, and
 * broken ones must be refused with `file:line:col: message`.
 */
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Hcl1Error, decodeItems, parseHcl1 } from "../../../src/hcl1/index.js";

const hcl = createRequire(import.meta.url)("js-hcl-parser") as { parse(text: string): string };

/** hashicorp/hcl v1's generic decode of `text`, or its error text. */
function reference(text: string): unknown {
  const out = hcl.parse(text);
  return out.startsWith("{") ? JSON.parse(out) : { error: out };
}

const ours = (text: string): unknown => decodeItems("f.hcl", parseHcl1("f.hcl", text));

const key = fc.constantFrom("a", "b_c", "d-e", "f.g", "zone", '"quoted/key"');
const scalar = fc.oneof(
  fc.stringMatching(/^[a-z0-9 ._/-]{0,8}$/).map((s) => JSON.stringify(s)),
  fc.integer({ min: -1000, max: 100000 }).map(String),
  fc.constantFrom("true", "false", "2.5", "-0", "0x1f", "017", "1e3", "-7.25"),
  fc.constantFrom('"tab\\there"', '"\\u00e9"', "<<EOF\nline\nEOF\n", "<<-EOT\n    x\n      y\n    EOT\n"),
);
const list = fc.array(scalar, { maxLength: 3 }).map((xs) => `[${xs.join(", ")}]`);

/** A body: each key once, as an attribute or as one or more blocks (labelled or not). */
const body: fc.Memo<string> = fc.memo((depth) =>
  fc
    .uniqueArray(key, { maxLength: depth > 1 ? 4 : 3 })
    .chain((keys) =>
      fc.tuple(
        ...keys.map((k) =>
          depth > 1
            ? fc.oneof(
                fc.oneof(scalar, list).map((v) => `${k} = ${v}`),
                fc
                  .tuple(
                    fc.array(body(depth - 1), { minLength: 1, maxLength: 2 }),
                    fc.constantFrom("", ' "lab"'),
                  )
                  .map(([bs, label]) => bs.map((b) => `${k}${label} {${b}}`).join("\n")),
              )
            : fc.oneof(scalar, list).map((v) => `${k} = ${v}`),
        ),
        fc.constantFrom("\n", ", ", "\n# comment\n", " /* c */\n", "\n// c\n"),
      ),
    )
    .map(([...parts]) => {
      const sep = parts.pop() as string;
      // A heredoc ends with its own newline; commas only separate one-line items.
      const items = parts as string[];
      if (sep.includes(",") && !items.some((p) => p.includes("<<"))) return `\n${items.join(sep)}\n`;
      return `\n${items.map((p) => (p.includes("<<") ? `${p}\n` : p)).join(sep.includes(",") ? "\n" : sep)}\n`;
    }),
);

describe("HCL 1 reader", () => {
  it("decodes generated documents exactly as hashicorp/hcl v1 does", () => {
    fc.assert(
      fc.property(body(3), (text) => {
        assert.deepEqual(ours(text), reference(text), text);
      }),
      { numRuns: 300 },
    );
  });

  it("refuses broken documents with file:line:col, where hcl v1 errs or silently stops", () => {
    const broken = [
      "x = ",
      "y {",
      'z = "open',
      "w = [1 2]",
      'a "b" = 1',
      "}",
      "= 1",
      "h = <<EOF\nno end",
      "q = @",
    ];
    fc.assert(
      fc.property(body(2), fc.constantFrom(...broken), (text, tail) => {
        const doc = `${text}${tail}`;
        assert.throws(
          () => ours(doc),
          (e: unknown) => e instanceof Hcl1Error && /^f\.hcl:\d+:\d+: \S/.test(e.message),
          doc,
        );
      }),
      { numRuns: 100 },
    );
    // hcl v1 returns {} for a dangling `key =`; berth names the place instead.
    assert.deepEqual(reference("a = "), {});
    assert.throws(() => ours("a = 1\nb = "), /^Hcl1Error|f\.hcl:2:5: expected a value, got end of file/);
  });

  it("reads Nomad's idioms: one-line blocks, quoted keys, labels, heredocs, JSON form", () => {
    assert.deepEqual(ours('topology { segments { "a.b/zone" = "x", rack = "R1" } }'), {
      topology: [{ segments: [{ "a.b/zone": "x", rack: "R1" }] }],
    });
    assert.deepEqual(ours('volume "a" "b" { x = 1 }\nvolume "c" {}'), {
      volume: [{ a: [{ b: [{ x: 1 }] }] }, { c: [{}] }],
    });
    assert.deepEqual(ours("s = <<-EOF\n  one\n    two\n  EOF\n"), { s: "one\n  two\n" });
    const json = '{"capability": [{"access_mode": "a"}, {"access_mode": "b"}], "secrets": {"k": null}}';
    assert.deepEqual(ours(json), reference(json));
    assert.throws(() => ours('{"a": [1,}'), /^.*f\.hcl:1:10: expected a value/);
  });
});
