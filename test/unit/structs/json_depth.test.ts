/** jsonNestingDepth: the depth check readJson runs before JSON.parse. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { jsonNestingDepth, MAX_JSON_DEPTH } from "../../../src/structs/json_check.js";

test("counts the deepest nesting of arrays and objects", () => {
  assert.equal(jsonNestingDepth("1"), 0);
  assert.equal(jsonNestingDepth("{}"), 1);
  assert.equal(jsonNestingDepth('{"a":[1,{"b":[]}],"c":{}}'), 4);
  assert.equal(jsonNestingDepth("[".repeat(20_000) + "]".repeat(20_000)), 20_000);
});

test("brackets inside strings, escaped quotes included, do not count", () => {
  assert.equal(jsonNestingDepth('{"a":"[[[{{{"}'), 1);
  assert.equal(jsonNestingDepth('{"a":"\\"[[[","b":"\\\\"}'), 1);
  assert.equal(jsonNestingDepth('["\\\\",["x"]]'), 2);
});

test("malformed text is counted as far as it goes (JSON.parse reports the rest)", () => {
  assert.equal(jsonNestingDepth("[[[[" + '"unterminated'), 4);
  assert.ok(MAX_JSON_DEPTH >= 32, "room for real specs");
});
