/**
 * Heredocs and `~` strip markers as Nomad's HCL 2 gives them. hcl2json is HashiCorp's own HCL
 * parser: a heredoc that is a whole attribute value comes back with HCL's trimming and flushing
 * already applied, so it is the reference; the same heredoc inside an expression comes back as
 * source text, which berth's own parser (hcl2/template.ts) must read to the same string. Expected
 * texts follow hclsyntax: a literal token ends with its line and a `~` trims only the token beside
 * it; `<<-` removes the indentation the line-starting tokens share, after the trimming.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeHcl } from "../../../src/api/specs/hcl.js";
import { evaluate } from "../../../src/api/specs/hcl2/evaluate.js";
import { jobspecFunctions } from "../../../src/api/specs/hcl2/functions.js";
import { parseTemplate } from "../../../src/api/specs/hcl2/template.js";

/** Heredocs (each `<<EOT`/`<<-EOT` … closing line) with what HCL makes of them. */
const CASES: [name: string, heredoc: string, expected: string][] = [
  ["if_strip", "<<EOT\n%{ if true ~}\n    indented\n%{ endif ~}\nrest\nEOT", "    indented\nrest\n"],
  [
    "yaml_list",
    '<<EOT\nitems:\n%{ for x in ["a", "b"] ~}\n  - ${x}\n%{ endfor ~}\nEOT',
    "items:\n  - a\n  - b\n",
  ],
  [
    "flush_for",
    '<<-EOT\n  %{ for x in ["p", "q"] ~}\n  item ${x}\n  %{ endfor ~}\n  tail\n  EOT',
    "  item p\n  item q\n  tail\n",
  ],
  ["strip_both", "<<EOT\n  %{~ if true ~}\n  yes\n  %{~ endif ~}\nEOT", "  yes\n"],
  ["else_strip", "<<EOT\n%{ if 1 > 2 ~}\nhas\n%{~ else ~}\nnone\n%{ endif ~}\nend\nEOT", "none\nend\n"],
  ["interp_strip", "<<EOT\na ${~ 1 ~} b\n  ${2 ~}\n   c\nEOT", "a1b\n  2   c\n"],
  ["flush_none", "<<-EOT\n    %{~ if true ~}\n      x\n    %{~ endif ~}\n    y\n    EOT", "      x\n    y\n"],
  ["blank_lines", "<<EOT\n%{ if true ~}\n\n\n  after\n%{ endif }\nEOT", "\n\n  after\n\n"],
  [
    "escapes",
    "<<EOT\ncost 100% $5 %%{ raw } $${raw}\n%{ if true ~}\n  $${esc}\n%{ endif ~}\nEOT",
    "cost 100% $5 %{ raw } ${raw}\n  ${esc}\n",
  ],
  [
    "nested",
    '<<EOT\n%{ for x in ["a", "b"] ~}\n%{ if x == "a" ~}\nA\n%{~ else ~}\nother\n%{ endif ~}\n%{ endfor ~}\nEOT',
    "Aother\n",
  ],
  ["flush_plain", "<<-EOT\n    Foo\n      Bar\n    Baz\n  EOT", "Foo\n  Bar\nBaz\n"],
];

test("heredocs inside expressions read as HCL reads them whole", async () => {
  const text = CASES.map(([name, h]) => `${name}_direct = ${h}\n${name}_expr = format("%s", ${h}\n)\n`).join(
    "",
  );
  const got = (await decodeHcl("h.hcl", text, {})) as Record<string, string>;
  for (const [name, , expected] of CASES) {
    assert.equal(got[`${name}_direct`], expected, `${name}: HCL's own reading`);
    assert.equal(got[`${name}_expr`], expected, `${name}: berth's reading of the same heredoc`);
  }
});

test("CRLF lines, quoted templates inside expressions, and an unclosed heredoc", async () => {
  const crlf = "w = <<EOT\r\n%{ if true ~}\r\n  x\r\n%{ endif ~}\r\ny\r\nEOT\r\n";
  const w = crlf.replace("w = <<EOT", 'v = format("%s", <<EOT') + ")\r\n";
  const got = (await decodeHcl("c.hcl", crlf + w, {})) as Record<string, string>;
  assert.equal(got.w, "  x\r\ny\r\n");
  assert.equal(got.v, got.w);
  const q = (await decodeHcl("q.hcl", 'q = upper("%{ if true ~}  x %{~ endif }")\n', {})) as Record<
    string,
    string
  >;
  assert.equal(q.q, "X", "in quotes a `~` trims the whole run of whitespace");
  await assert.rejects(
    decodeHcl("u.hcl", 'u = format("%s", <<EOT\nno end\n)\n', {}),
    /Unterminated template string/,
  );
});

test("bare templates (HCL's JSON syntax, hcl2json's output) trim by line too", () => {
  const fns = jobspecFunctions(undefined);
  const tmpl = (s: string) => evaluate(parseTemplate(s), { roots: new Map(), functions: fns });
  assert.equal(tmpl('%{ for x in ["a", "b"] ~}\n  - ${x}\n%{ endfor ~}\n'), "  - a\n  - b\n");
  assert.equal(tmpl("line\n\n  %{~ if true }x%{ endif }"), "line\n\nx", "only the token before the ~");
});
