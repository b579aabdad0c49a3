/**
 * The functions of Nomad's jobspec2 (functions.go) as berth implements them, with the results cty's
 * stdlib and go-cty-funcs document; an unknown function is an error naming it; filesystem functions
 * read relative to the jobspec's directory only when allowed.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { HclError, type Value } from "../../../src/api/specs/hcl2/ast.js";
import { evaluate } from "../../../src/api/specs/hcl2/evaluate.js";
import { jobspecFunctions } from "../../../src/api/specs/hcl2/functions.js";
import { parseExpression } from "../../../src/api/specs/hcl2/template.js";

function call(src: string, baseDir?: string): Value {
  return evaluate(parseExpression(src), { roots: new Map(), functions: jobspecFunctions(baseDir) });
}

function fails(src: string, detail: RegExp, summary = /Error in function call/): void {
  assert.throws(
    () => call(src),
    (err: unknown) => {
      assert.ok(err instanceof HclError, String(err));
      assert.match(err.summary, summary);
      assert.match(err.detail, detail);
      return true;
    },
  );
}

test("string functions", () => {
  const cases: [string, Value][] = [
    ['upper("abc")', "ABC"],
    ['lower("ABC")', "abc"],
    ['title("hello big world")', "Hello Big World"],
    ['format("%s-%03d-%.2f-%t-%q-%x-%v", "a", 7, 1.5, true, "q", 255, [1])', 'a-007-1.50-true-"q"-ff-[1]'],
    ['format("%[2]s %[1]s %%", "a", "b")', "b a %"],
    ['formatlist("%s=%d", ["a", "b"], [1, 2])', ["a=1", "b=2"]],
    ['join(",", ["a", "b"], ["c"])', "a,b,c"],
    ['split(",", "a,b,,c")', ["a", "b", "", "c"]],
    ['replace("a-b-c", "-", "_")', "a_b_c"],
    ['regex_replace("v1.2.3", "([0-9]+)\\\\.([0-9]+)", "$2.$1")', "v2.1.3"],
    ['trimspace("  x \\n")', "x"],
    ['trim("?!hi!?", "!?")', "hi"],
    ['trimprefix("nomad-job", "nomad-")', "job"],
    ['trimsuffix("job.hcl", ".hcl")', "job"],
    ['chomp("line\\n\\n")', "line"],
    ['indent(2, "a\\nb")', "a\n  b"],
    ['substr("hello", 1, 3)', "ell"],
    ['substr("hello", -3, -1)', "llo"],
    ['strlen("héllo")', 5],
    ['strrev("abc")', "cba"],
  ];
  for (const [src, want] of cases) assert.deepEqual(call(src), want, src);
});

test("numeric functions", () => {
  const cases: [string, Value][] = [
    ["abs(-3)", 3],
    ["ceil(1.2)", 2],
    ["floor(1.8)", 1],
    ["max(3, 9, 1)", 9],
    ["min(3, 9, 1)", 1],
    ["max([4, 5]...)", 5],
    ["pow(2, 10)", 1024],
    ["log(8, 2)", 3],
    ["signum(-7)", -1],
    ['parseint("ff", 16)', 255],
    ['parseint("-101", 2)', -5],
  ];
  for (const [src, want] of cases) assert.deepEqual(call(src), want, src);
  fails('parseint("12", 99)', /base must be/);
});

test("collection functions", () => {
  const cases: [string, Value][] = [
    ['length("abc")', 3],
    ["length([1, 2])", 2],
    ["length({a = 1})", 1],
    ["concat([1], [2, 3])", [1, 2, 3]],
    ['contains(["a", "b"], "b")', true],
    ['distinct(["a", "b", "a"])', ["a", "b"]],
    ['compact(["a", "", "b"])', ["a", "b"]],
    ["flatten([[1, [2]], 3])", [1, 2, 3]],
    ['element(["a", "b"], 3)', "b"],
    ['index(["a", "b"], "b")', 1],
    ["slice([1, 2, 3, 4], 1, 3)", [2, 3]],
    ["chunklist([1, 2, 3], 2)", [[1, 2], [3]]],
    ['coalesce("", "x", "y")', "x"],
    ["coalescelist([], [1])", [1]],
    ["keys({b = 1, a = 2})", ["a", "b"]],
    ["values({b = 1, a = 2})", [2, 1]],
    ['lookup({a = 1}, "b", 0)', 0],
    ['lookup({a = 1}, "a")', 1],
    ["merge({a = 1, b = 1}, {b = 2}, null)", { a: 1, b: 2 }],
    ['zipmap(["a", "b"], [1, 2])', { a: 1, b: 2 }],
    ["range(3)", [0, 1, 2]],
    ["range(1, 7, 2)", [1, 3, 5]],
    ["range(3, 0)", [3, 2, 1]],
    ["reverse([1, 2])", [2, 1]],
    ['sort(["b", "a", "c"])', ["a", "b", "c"]],
    ["setunion([1, 2], [2, 3])", [1, 2, 3]],
    ["setintersection([1, 2], [2, 3])", [2]],
    [
      'setproduct(["a"], [1, 2])',
      [
        ["a", 1],
        ["a", 2],
      ],
    ],
  ];
  for (const [src, want] of cases) assert.deepEqual(call(src), want, src);
  fails('lookup({a = 1}, "b")', /no attribute "b"/);
  fails("element([], 0)", /empty list/);
});

test("encoding, hashing, uuid, time and network functions", () => {
  const cases: [string, Value][] = [
    ['base64encode("berth")', "YmVydGg="],
    ['base64decode("YmVydGg=")', "berth"],
    ["jsonencode({a = [1, true, null]})", '{"a":[1,true,null]}'],
    ['jsondecode("{\\"a\\": [1]}")', { a: [1] }],
    ['urlencode("a b&c")', "a+b%26c"],
    ['csvdecode("a,b\\n1,2\\n")', [{ a: "1", b: "2" }]],
    ['md5("x")', "9dd4e461268c8034f5c8564e155c67a6"],
    ['sha256("x")', "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"],
    ['uuidv5("dns", "www.example.com")', "2ed6657d-e927-568b-95e1-2665a8aea6a2"],
    ['timeadd("2024-01-01T00:00:00Z", "90m")', "2024-01-01T01:30:00Z"],
    ['formatdate("DD MMM YYYY hh:mm", "2024-03-05T07:08:00Z")', "05 Mar 2024 07:08"],
    ['cidrhost("10.12.0.0/16", 5)', "10.12.0.5"],
    ['cidrnetmask("172.16.0.0/12")', "255.240.0.0"],
    ['cidrsubnet("10.1.0.0/16", 8, 2)', "10.1.2.0/24"],
    ['cidrsubnet("fd00::/56", 8, 1)', "fd00:0:0:1::/64"],
    ['cidrsubnets("10.1.0.0/16", 4, 4, 8)', ["10.1.0.0/20", "10.1.16.0/20", "10.1.32.0/24"]],
  ];
  for (const [src, want] of cases) assert.deepEqual(call(src), want, src);
  assert.match(
    call("uuidv4()") as string,
    /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
  );
  fails('base64decode("!!")', /failed to decode base64/);
});

test("try, can and convert see their arguments unevaluated", () => {
  assert.equal(call('try(jsondecode("nope"), "fallback")'), "fallback");
  assert.equal(call('can(jsondecode("nope"))'), false);
  assert.equal(call('can(jsondecode("[1]"))'), true);
  assert.deepEqual(call('convert(["1", "2"], list(number))'), [1, 2]);
  fails('try(jsondecode("a"), jsondecode("b"))', /no expression succeeded/);
});

test("an unknown function is an error naming it; a Nomad function berth lacks says so", () => {
  fails('timestamp2("x")', /There is no function named "timestamp2"/, /Call to unknown function/);
  fails('yamldecode("a: 1")', /berth does not implement yamldecode/);
  fails("upper()", /1 argument required, 0 given/);
});

test("filesystem functions read relative to the jobspec's directory, only when allowed", () => {
  const dir = mkdtempSync(join(tmpdir(), "berth-hcl2-"));
  try {
    writeFileSync(join(dir, "motd.txt"), "hello\n");
    assert.equal(call('file("motd.txt")', dir), "hello\n");
    assert.equal(call('filebase64("motd.txt")', dir), "aGVsbG8K");
    assert.equal(call('fileexists("motd.txt")', dir), true);
    assert.equal(call('fileexists("nope.txt")', dir), false);
    assert.equal(call('basename("/a/b.txt")', dir), "b.txt");
    assert.throws(() => call('file("nope.txt")', dir), /no file exists at "nope.txt"/);
    fails('file("motd.txt")', /filesystem functions disabled/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
