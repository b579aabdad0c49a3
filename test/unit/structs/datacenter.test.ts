/** Datacenter patterns as Nomad matches them (go-glob: `*` only), and the `["*"]` default. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { datacenterMatches, inAnyDatacenter } from "../../../src/structs/datacenter.js";
import { validateJob } from "../../../src/structs/job_validate.js";

test("datacenter globs: `*` is any run of characters, nothing else is special", () => {
  const cases: [string, string, boolean][] = [
    ["*", "dc1", true],
    ["*", "", true],
    ["dc1", "dc1", true],
    ["dc1", "dc10", false],
    ["dc*", "dc1", true],
    ["dc*", "dc", true],
    ["dc*", "xdc1", false],
    ["*-east", "us-east", true],
    ["*-east", "us-east-2", false],
    ["us-*-2", "us-east-2", true],
    ["us-*-2", "us-2", false],
    ["a*b*c", "abc", true],
    ["a*b*c", "aXbYc", true],
    ["a*b*c", "acb", false],
    ["ab*ba", "aba", false],
    ["dc?", "dc1", false],
    ["dc[12]", "dc1", false],
    ["dc[12]", "dc[12]", true],
  ];
  for (const [pattern, dc, want] of cases)
    assert.equal(datacenterMatches(pattern, dc), want, `${pattern} ~ ${dc}`);
  assert.equal(inAnyDatacenter(["west", "dc*"], "dc7"), true);
  assert.equal(inAnyDatacenter(["west", "east"], "dc7"), false);
});

test('datacenters: none or an empty list is Nomad\'s ["*"]; an empty name is refused', () => {
  const job = (dcs?: unknown) =>
    validateJob({
      ID: "j",
      ...(dcs === undefined ? {} : { Datacenters: dcs }),
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }],
    });
  assert.deepEqual(job().Datacenters, ["*"]);
  assert.deepEqual(job([]).Datacenters, ["*"]);
  assert.deepEqual(job(["dc*", "west"]).Datacenters, ["dc*", "west"]);
  assert.throws(() => job(["dc1", ""]), /Job\.Datacenters\[1\]: Job datacenter must be non-empty string/);
});
