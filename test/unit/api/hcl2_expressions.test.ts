/**
 * HCL2 expressions and templates as berth's parser and evaluator (src/api/specs/hcl2/) compute
 * them, one layer at a time: operators and precedence, conditionals, templates with directives and
 * strip markers, for expressions, splats, indexing, and references to roots other than var/local
 * kept as `${…}` text for the client (Nomad's UnknownVariable). Expected values follow HCL's spec.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Value } from "../../../src/api/specs/hcl2/ast.js";
import { HclError } from "../../../src/api/specs/hcl2/ast.js";
import { evaluate, type Scope } from "../../../src/api/specs/hcl2/evaluate.js";
import { jobspecFunctions } from "../../../src/api/specs/hcl2/functions.js";
import { parseExpression, parseTemplate } from "../../../src/api/specs/hcl2/template.js";

const VARS: Record<string, Value> = {
  n: 3,
  s: "web",
  list: ["a", "b", "c"],
  m: { b: 2, a: 1 },
  objs: [
    { name: "x", port: 80 },
    { name: "y", port: 443 },
  ],
  flag: true,
};

function scope(): Scope {
  return { roots: new Map([["var", () => VARS]]), functions: jobspecFunctions(undefined) };
}

/** The value of a template (a whole string as hcl2json hands it over). */
const tmpl = (src: string): Value => evaluate(parseTemplate(src), scope());
/** The value of one expression. */
const expr = (src: string): Value => evaluate(parseExpression(src), scope());

function fails(f: () => unknown, summary: RegExp, detail?: RegExp): void {
  assert.throws(f, (err: unknown) => {
    assert.ok(err instanceof HclError, String(err));
    assert.match(err.summary, summary);
    if (detail) assert.match(err.detail, detail);
    return true;
  });
}

test("arithmetic, comparison and logic follow HCL's precedence", () => {
  assert.equal(expr("1 + 2 * 3"), 7);
  assert.equal(expr("(1 + 2) * 3"), 9);
  assert.equal(expr("10 - 4 - 3"), 3);
  assert.equal(expr("7 % 4 + 8 / 2"), 7);
  assert.equal(expr("-var.n + 1"), -2);
  assert.equal(expr("1 + 2 == 3 && !false"), true);
  assert.equal(expr("var.n > 2 || false ? 1 : 2"), 1);
  // HCL evaluates both operands of && and ||: there is no short-circuit.
  fails(() => expr("true || 1 / 0 > 0"), /Error in function call/, /divide by zero/);
  assert.equal(expr('"5" + 1'), 6, "a numeric string converts to a number");
  assert.equal(expr('1 == "1"'), false, "equality does not convert types");
  assert.equal(expr("[1, 2] == [1, 2]"), true);
  fails(() => expr('"x" + 1'), /Invalid value/, /not a number/);
  fails(() => expr("1 / 0"), /Error in function call/, /divide by zero/);
});

test("conditionals need a bool; both branches are written as expressions", () => {
  assert.equal(expr('var.flag ? "on" : "off"'), "on");
  assert.equal(expr('var.n > 5 ? "big" : var.n > 1 ? "mid" : "small"'), "mid");
  fails(() => expr("null ? 1 : 2"), /Null condition/);
  fails(() => expr('"maybe" ? 1 : 2'), /Invalid value/, /bool is required/);
});

test("templates interpolate, unwrap a lone interpolation, and honour escapes and directives", () => {
  assert.equal(tmpl("${var.n}"), 3, "a template that is one interpolation keeps the value's type");
  assert.equal(tmpl("n=${var.n}"), "n=3");
  assert.equal(tmpl("$${var.n} %%{ if }"), "${var.n} %{ if }");
  assert.equal(tmpl("%{ if var.flag }yes%{ else }no%{ endif }"), "yes");
  assert.equal(tmpl("%{ if !var.flag }yes%{ endif }"), "");
  assert.equal(tmpl("%{ for i, x in var.list }${i}${x},%{ endfor }"), "0a,1b,2c,");
  assert.equal(tmpl("%{ for k, v in var.m }${k}=${v} %{ endfor }"), "a=1 b=2 ", "maps iterate in key order");
  assert.equal(tmpl("a   ${~ var.s ~}   b"), "awebb", "~ strips the whitespace beside it");
  // Outside quotes a literal token ends with its line, and a `~` trims only the token beside it
  // (hclsyntax's scanner and parseTemplateParts): the next line's indentation stays.
  assert.equal(tmpl("%{ for x in var.list ~}\n  ${x}\n%{~ endfor }"), "  a  b  c");
  assert.equal(tmpl("%{ for x in var.list ~}${x}%{~ endfor }"), "abc");
  assert.equal(tmpl(" ${~ var.n ~} "), "3", "an emptied literal still makes a string, as in HCL");
  assert.equal(tmpl('${"in \\"quotes\\" \\u00e9"}'), 'in "quotes" é');
  assert.equal(tmpl('${"nested ${var.s}"}'), "nested web");
  fails(() => tmpl("x${var.list}"), /Invalid template interpolation value/, /string required/);
  fails(() => tmpl("x${null}"), /Invalid template interpolation value/, /null/);
  fails(() => tmpl("%{ if true }never closed"), /Unterminated template directive/);
});

test("for expressions build tuples and objects, filter with if, and group with ...", () => {
  assert.deepEqual(expr("[for x in var.list : upper(x)]"), ["A", "B", "C"]);
  assert.deepEqual(expr('[for i, x in var.list : "${i}:${x}" if i != 1]'), ["0:a", "2:c"]);
  assert.deepEqual(expr("{for k, v in var.m : v => k}"), { "1": "a", "2": "b" });
  assert.deepEqual(expr("{for o in var.objs : o.name => o.port}"), { x: 80, y: 443 });
  assert.deepEqual(expr('{for x in ["a", "b", "a"] : x => x...}'), { a: ["a", "a"], b: ["b"] });
  fails(() => expr('{for x in ["a", "a"] : x => 1}'), /Duplicate object key/);
  fails(() => expr("[for x in 5 : x]"), /Iteration over non-iterable value/);
});

test("splats, indexing and attribute access", () => {
  assert.deepEqual(expr("var.objs[*].name"), ["x", "y"]);
  assert.deepEqual(expr("var.objs.*.port"), [80, 443]);
  assert.deepEqual(expr("null[*]"), []);
  assert.deepEqual(expr("{a = 1}[*].a"), [1], "a splat over a single value wraps it in a list");
  assert.equal(expr("var.list[1]"), "b");
  assert.equal(expr('var.list["2"]'), "c");
  assert.equal(expr("var.list.0"), "a", "legacy index syntax");
  assert.equal(expr('var.m["b"]'), 2);
  assert.equal(expr("var.objs[1].port"), 443);
  assert.deepEqual(expr('{ a = 1, "b c" = [1, 2], (var.s) = true }'), { a: 1, "b c": [1, 2], web: true });
  fails(() => expr("var.list[3]"), /Invalid index/);
  fails(() => expr("var.missing"), /Unsupported attribute/, /named "missing"/);
  fails(() => expr("var.constructor"), /Unsupported attribute/, /named "constructor"/);
  fails(() => expr("var.n.x"), /Unsupported attribute/, /number/);
});

test("references to roots other than var and local are kept as ${…} for the client", () => {
  assert.equal(tmpl("${NOMAD_TASK_DIR}"), "${NOMAD_TASK_DIR}");
  assert.equal(tmpl("${var.s}/${NOMAD_TASK_DIR}/x"), "web/${NOMAD_TASK_DIR}/x");
  assert.equal(tmpl("${node.unique.name}"), "${node.unique.name}");
  assert.equal(tmpl("${attr.kernel.name}-${meta.rack}"), "${attr.kernel.name}-${meta.rack}");
  assert.equal(tmpl('${env["HOME"]}'), '${env["HOME"]}');
  assert.equal(tmpl("${NOMAD_ALLOC_INDEX}"), "${NOMAD_ALLOC_INDEX}");
  assert.equal(expr('upper("x-${NOMAD_JOB_NAME}")'), "X-${NOMAD_JOB_NAME}");
  // A for iterator shadows nothing outside its expression, and is not a run-time reference inside.
  assert.deepEqual(expr("[for node in var.list : node]"), ["a", "b", "c"]);
});

test("identifiers may contain dashes, as in HCL; comments inside expressions are skipped", () => {
  assert.equal(tmpl("${my-var}"), "${my-var}");
  assert.deepEqual(expr("[\n  1, # one\n  2, // two\n  /* three */ 3\n]"), [1, 2, 3]);
});

test("parse errors carry the offset of the problem, for the line in the spec", () => {
  assert.throws(
    () => parseTemplate("line one\n${1 +}"),
    (err: unknown) => err instanceof HclError && err.summary === "Invalid expression" && err.at === 14,
  );
  fails(() => parseExpression("1 2"), /Extra characters after expression/);
  fails(() => parseExpression('"open'), /Unterminated template string/);
  fails(() => parseTemplate("%{ while x }%{ endwhile }"), /Invalid template directive/);
});
