/**
 * Type constraints of `variable` blocks and cty's conversions to them (src/api/specs/hcl2/types.ts):
 * the values each constraint accepts, converts and refuses, with cty's wording for the refusal.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Value } from "../../../src/api/specs/hcl2/ast.js";
import { HclError } from "../../../src/api/specs/hcl2/ast.js";
import { parseExpression } from "../../../src/api/specs/hcl2/template.js";
import { convert, typeFromExpr, typeOfValue, typeText } from "../../../src/api/specs/hcl2/types.js";

const conv = (v: Value, type: string): Value => convert(v, typeFromExpr(parseExpression(type)));

test("primitive types convert between string, number and bool as cty does", () => {
  assert.equal(conv("42", "number"), 42);
  assert.equal(conv("-1.5", "number"), -1.5);
  assert.equal(conv(7, "string"), "7");
  assert.equal(conv(true, "string"), "true");
  assert.equal(conv("false", "bool"), false);
  assert.equal(conv(null, "string"), null, "null converts to any type");
  assert.deepEqual(conv({ a: [1] }, "any"), { a: [1] });
  assert.throws(() => conv("4x", "number"), /a number is required/);
  assert.throws(() => conv("yes", "bool"), /a bool is required/);
  assert.throws(() => conv(1, "bool"), /bool required/);
  assert.throws(() => conv([1], "string"), /string required/);
});

test("collection and structural types convert their elements and name where a conversion failed", () => {
  assert.deepEqual(conv([1, "2"], "list(number)"), [1, 2]);
  assert.deepEqual(conv(["a", "b", "a"], "set(string)"), ["a", "b"]);
  assert.deepEqual(conv({ b: 1, a: true }, "map(string)"), { a: "true", b: "1" });
  assert.deepEqual(conv({ id: 5, ro: "true" }, "object({ id = string, ro = bool })"), { id: "5", ro: true });
  assert.deepEqual(conv(["1", 2], "tuple([number, string])"), [1, "2"]);
  assert.deepEqual(conv([{ n: "1" }], "list(object({ n = number }))"), [{ n: 1 }]);
  assert.throws(() => conv([1, "x"], "list(number)"), /^Error: element 1: a number is required$/);
  assert.throws(() => conv({ id: "x" }, "object({ id = string, ro = bool })"), /attribute "ro" is required/);
  assert.throws(
    () => conv({ id: "x", extra: 1 }, "object({ id = string })"),
    /unsupported attribute "extra"/,
  );
  assert.throws(
    () => conv([{ n: "x" }], "list(object({ n = number }))"),
    /element 0, attribute "n": a number is required/,
  );
  assert.throws(() => conv("a", "list(string)"), /list of string required/);
  assert.throws(() => conv([1, 2], "tuple([number])"), /tuple required with 1 elements, got 2/);
});

test("a variable without a type takes its default's type; bad constraints are refused", () => {
  assert.equal(
    typeText(typeOfValue({ a: [1, "x"], b: true })),
    "object({a=tuple([number, string]), b=bool})",
  );
  for (const bad of ["strin", "list(string, number)", "map()", "object([string])", '"string"']) {
    assert.throws(
      () => typeFromExpr(parseExpression(bad)),
      (err: unknown) => err instanceof HclError && err.summary === "Invalid type specification",
      bad,
    );
  }
});
