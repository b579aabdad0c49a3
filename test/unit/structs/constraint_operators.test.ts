/**
 * Every constraint operator against Nomad's checkConstraint truth table (present and missing
 * attributes), the version and semver languages (hashicorp/go-version semantics), the parse
 * cache, and the register-time refusals of Nomad's Constraint.Validate.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ConstraintCache, constraintMet } from "../../../src/structs/constraint.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { BerthError } from "../../../src/structs/errors.js";
import { parseVersion, parseVersionConstraint } from "../../../src/structs/version_constraint.js";
import { makeNode } from "../../builders/node.js";

const node = makeNode("n1", {
  Name: "web-1",
  Attributes: {
    "kernel.name": "linux",
    "kernel.version": "6.1.0-18-amd64",
    "cpu.numcores": "8",
    "cpu.frequency": "2600",
    "nomad.version": "1.7.3",
    "os.version": "12.4",
    "driver.docker.version": "24.0.7-beta.1",
    weight: "2.5",
    tags: "ssd, gpu ,fast",
  },
  Meta: { rack: "r1" },
});

const met = (LTarget: string, Operand: string, RTarget = "", cache = new ConstraintCache()) =>
  constraintMet({ LTarget, Operand, RTarget }, node, cache);

test("operators: equality family (=, ==, is; !=, not) with present and missing attributes", () => {
  for (const op of ["=", "==", "is"]) {
    assert.equal(met("${attr.kernel.name}", op, "linux"), true, op);
    assert.equal(met("${attr.kernel.name}", op, "darwin"), false, op);
    assert.equal(met("${attr.missing}", op, "linux"), false, `${op} on a missing attribute`);
    assert.equal(met("${attr.missing}", op, "${meta.missing}"), false, `${op}: both missing`);
  }
  for (const op of ["!=", "not"]) {
    assert.equal(met("${attr.kernel.name}", op, "darwin"), true, op);
    assert.equal(met("${attr.kernel.name}", op, "linux"), false, op);
    assert.equal(met("${attr.missing}", op, "linux"), true, `${op}: missing differs from a value`);
    assert.equal(met("${attr.missing}", op, "${meta.missing}"), false, `${op}: both missing are equal`);
  }
  assert.equal(met("${node.pool}", "=", "default"), true, "every berth node is in Nomad's default pool");
  assert.equal(met("web-1", "=", "${node.unique.name}"), true, "a literal on the left");
});

test("operators: ordering compares as integers, then floats, then lexically", () => {
  assert.equal(met("${attr.cpu.numcores}", ">=", "4"), true);
  assert.equal(met("${attr.cpu.numcores}", ">", "10"), false, "8 > 10 as numbers, not '8' > '10'");
  assert.equal(met("${attr.cpu.numcores}", "<", "10"), true);
  assert.equal(met("${attr.cpu.numcores}", "<=", "8"), true);
  assert.equal(met("${attr.weight}", ">", "2.25"), true, "floats");
  assert.equal(met("${attr.weight}", "<", "10"), true, "float vs integer compares as floats");
  assert.equal(met("${attr.kernel.name}", ">", "darwin"), true, "lexical");
  assert.equal(met("${attr.kernel.name}", "<", "abc"), false, "lexical");
  for (const op of ["<", "<=", ">", ">="]) assert.equal(met("${attr.missing}", op, "1"), false, op);
});

test("operators: is_set / is_not_set", () => {
  assert.equal(met("${meta.rack}", "is_set"), true);
  assert.equal(met("${meta.zone}", "is_set"), false);
  assert.equal(met("${meta.rack}", "is_not_set"), false);
  assert.equal(met("${meta.zone}", "is_not_set"), true, "the one operator a missing attribute meets");
});

test("operators: regexp is an unanchored search; a missing attribute never matches", () => {
  assert.equal(met("${attr.kernel.version}", "regexp", "^6\\.1\\."), true);
  assert.equal(met("${attr.kernel.version}", "regexp", "amd"), true, "unanchored, as Go's MatchString");
  assert.equal(met("${attr.kernel.version}", "regexp", "^5"), false);
  assert.equal(met("${attr.missing}", "regexp", ".*"), false);
});

test("operators: set_contains(_all) needs every value, set_contains_any one; spaces trimmed", () => {
  for (const op of ["set_contains", "set_contains_all"]) {
    assert.equal(met("${attr.tags}", op, "gpu,ssd"), true, op);
    assert.equal(met("${attr.tags}", op, "gpu, nvme"), false, op);
    assert.equal(met("${attr.missing}", op, "gpu"), false, op);
  }
  assert.equal(met("${attr.tags}", "set_contains_any", "nvme, fast"), true);
  assert.equal(met("${attr.tags}", "set_contains_any", "nvme,hdd"), false);
  assert.equal(met("${attr.missing}", "set_contains_any", "gpu"), false);
});

test("operators: version (go-version) ranges, pessimistic and prerelease rules", () => {
  assert.equal(met("${attr.nomad.version}", "version", ">= 1.2, < 2"), true);
  assert.equal(met("${attr.nomad.version}", "version", ">= 1.8"), false);
  assert.equal(met("${attr.nomad.version}", "version", "~> 1.7"), true, "~> 1.7 is >= 1.7, < 2");
  assert.equal(met("${attr.nomad.version}", "version", "~> 1.6.0"), false, "~> 1.6.0 is < 1.7");
  assert.equal(met("${attr.nomad.version}", "version", "1.7.3"), true, "no operator is =");
  assert.equal(met("${attr.os.version}", "version", "> 12"), true, "two segments are padded");
  // A prerelease only meets a range whose bound is a prerelease of the same version.
  assert.equal(met("${attr.driver.docker.version}", "version", ">= 20"), false);
  assert.equal(met("${attr.driver.docker.version}", "version", ">= 24.0.7-alpha"), true);
  assert.equal(met("${attr.kernel.name}", "version", ">= 1"), false, "not a version");
  assert.equal(met("${attr.missing}", "version", ">= 1"), false);
});

test("operators: semver compares prereleases as semver, without go-version's prerelease filter", () => {
  assert.equal(met("${attr.driver.docker.version}", "semver", ">= 20"), true);
  assert.equal(met("${attr.driver.docker.version}", "semver", "< 24.0.7"), true, "a prerelease sorts first");
  assert.equal(met("${attr.driver.docker.version}", "semver", "> 24.0.7-beta.0"), true);
  assert.equal(met("${attr.driver.docker.version}", "semver", "> 24.0.7-beta.2"), false);
  assert.throws(() => parseVersionConstraint("~> 1.2", "semver"), /Malformed constraint/);
  assert.throws(() => parseVersionConstraint(">= 1.2beta", "semver"), /Malformed constraint/);
  assert.doesNotThrow(() => parseVersionConstraint(">= 1.2beta", "version"), "go-version allows 1.2beta");
});

test("versions: parsing and ordering as go-version", () => {
  const v = (s: string) => parseVersion(s);
  assert.deepEqual(v("v1.2"), { segments: [1, 2, 0], written: 2, pre: "", meta: "" });
  assert.deepEqual(v("1.2.3-rc.1+build.5"), {
    segments: [1, 2, 3],
    written: 3,
    pre: "rc.1",
    meta: "build.5",
  });
  assert.equal(v("1.x"), null);
  assert.equal(v(""), null);
  const c = (a: string, r: string) => parseVersionConstraint(r, "version")(v(a)!);
  assert.equal(c("1.2.3-rc.10", "> 1.2.3-rc.9"), true, "numeric prerelease parts compare as numbers");
  assert.equal(c("1.2.3-beta", "> 1.2.3-alpha"), true);
  assert.equal(c("1.2.3-rc.1", "< 1.2.3-rc.1.1"), true, "a longer prerelease is greater");
  assert.equal(c("1.2.3+a", "= 1.2.3+b"), true, "metadata is ignored");
  assert.equal(c("1.2.0.0", "= 1.2"), true, "trailing zero segments");
});

test("operators: right-hand sides are parsed once per cache, not per node", () => {
  const cache = new ConstraintCache();
  for (let i = 0; i < 5; i++) {
    met("${attr.kernel.version}", "regexp", "^6", cache);
    met("${attr.nomad.version}", "version", ">= 1", cache);
    met("${attr.nomad.version}", "semver", ">= 1", cache);
  }
  assert.equal(cache.regexps.size, 1);
  assert.equal(cache.versions.size, 2);
  const re = cache.regexp("^6");
  met("${attr.kernel.version}", "regexp", "^6", cache);
  assert.equal(cache.regexp("^6"), re, "the same compiled object is reused");
});

const jobWith = (c: unknown, where: "job" | "group" | "task" = "job") => ({
  ID: "j",
  ...(where === "job" ? { Constraints: [c] } : {}),
  TaskGroups: [
    {
      Name: "g",
      ...(where === "group" ? { Constraints: [c] } : {}),
      Tasks: [{ Name: "t", Driver: "exec", ...(where === "task" ? { Constraints: [c] } : {}) }],
    },
  ],
});
const refused = (c: unknown, field: string, words: RegExp, where: "job" | "group" | "task" = "job") =>
  assert.throws(
    () => validateJob(jobWith(c, where)),
    (e: BerthError) => e.code === "ERR_VALIDATION" && e.message.includes(field) && words.test(e.message),
  );

test("validation: Nomad's Constraint.Validate rules, each naming the field", () => {
  const base = "Job.Constraints[0]";
  refused({ LTarget: "${attr.a}", Operand: "regexp", RTarget: "(" }, `${base}.RTarget`, /failed to compile/);
  refused(
    { LTarget: "${attr.a}", Operand: "version", RTarget: ">= x" },
    `${base}.RTarget`,
    /version constraint is invalid/,
  );
  refused(
    { LTarget: "${attr.a}", Operand: "semver", RTarget: "~> 1" },
    `${base}.RTarget`,
    /semver constraint is invalid/,
  );
  refused({ LTarget: "${attr.a}", Operand: "=", RTarget: "" }, `${base}.RTarget`, /requires an RTarget/);
  refused({ LTarget: "${attr.a}", Operand: "set_contains_any" }, `${base}.RTarget`, /require an RTarget/);
  refused(
    { LTarget: "${attr.a}", Operand: "is_set", RTarget: "x" },
    `${base}.RTarget`,
    /does not support an RTarget/,
  );
  refused(
    { LTarget: "${meta.r}", Operand: "distinct_property", RTarget: "x" },
    `${base}.RTarget`,
    /not a count/,
  );
  refused(
    { LTarget: "${meta.r}", Operand: "distinct_property", RTarget: "0" },
    `${base}.RTarget`,
    /1 or greater/,
  );
  refused({ Operand: "=", RTarget: "x" }, `${base}.LTarget`, /no attribute provided/);
  refused(
    { LTarget: "${device.model}", Operand: "=", RTarget: "x" },
    `${base}.LTarget`,
    /unsupported attribute/,
  );
  refused(
    { Operand: "distinct_hosts" },
    "Job.TaskGroups[0].Tasks[0].Constraints[0].Operand",
    /not allowed at task level/,
    "task",
  );
  const ok = [
    { LTarget: "", Operand: "distinct_hosts", RTarget: "" },
    { LTarget: "${meta.rack}", Operand: "distinct_property", RTarget: "2" },
    { LTarget: "${attr.kernel.version}", Operand: "regexp", RTarget: "^6" },
    { LTarget: "${attr.nomad.version}", Operand: "version", RTarget: ">= 1.2, < 2" },
    { LTarget: "${meta.zone}", Operand: "is_not_set", RTarget: "" },
  ];
  for (const c of ok) assert.deepEqual(validateJob(jobWith(c, "group")).TaskGroups[0]!.Constraints, [c]);
});
