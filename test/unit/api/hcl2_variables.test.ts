/**
 * Jobspec variables and locals through parseJobSpec, as Nomad's jobspec2 decodes them: defaults,
 * `NOMAD_VAR_*` < `-var-file` (HCL or JSON, later wins) < `-var`; types and their conversion of
 * `-var` strings; validation rules; Nomad's error texts with file and line; sensitive values never
 * in an error. The fixture (test/fixtures/jobs/variables.nomad.hcl) is written in Nomad's idioms.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parseJobSpec, SpecError } from "../../../src/api/index.js";
import type { HclInputs } from "../../../src/api/specs/index.js";
import type { Job } from "../../../src/api/types.js";

const FIXTURES = join(import.meta.dirname, "../../../../test/fixtures/jobs");
const FILE = join(FIXTURES, "variables.nomad.hcl");
const TEXT = readFileSync(FILE, "utf8");
const varFile = (name: string) => ({
  file: join(FIXTURES, name),
  text: readFileSync(join(FIXTURES, name), "utf8"),
});

/** The inputs every case needs: the two variables without defaults. */
const BASE: HclInputs = { vars: ["db_password=hunter2-secret"], env: { NOMAD_VAR_image_tag: "15" } };

async function parse(inputs: HclInputs, text = TEXT): Promise<Job> {
  return parseJobSpec(FILE, text, inputs);
}

async function refused(p: Promise<unknown>, ...patterns: RegExp[]): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof SpecError, String(err));
    for (const re of patterns) assert.match(err.message, re);
    assert.ok(!err.message.includes("hunter2"), `the message shows the password: ${err.message}`);
    return true;
  });
}

const task = (job: Job) => job.TaskGroups[0]!.Tasks[0]!;

test("defaults, locals built from variables and a function chain decode into the job's fields", async () => {
  const job = await parse(BASE);
  assert.deepEqual(job.Datacenters, ["dc1"]);
  assert.equal(job.TaskGroups[0]!.Count, 1);
  const vol = job.TaskGroups[0]!.Volumes.data!;
  assert.equal(vol.Source, "pg-data");
  assert.equal(vol.ReadOnly, false);
  assert.deepEqual(task(job).Config, {
    command: "/usr/bin/postgres-15",
    args: ["-c", "log_level=INFO", "--label=team=storage", "--label=tier=backend"],
  });
  assert.deepEqual(task(job).Env, {
    PGDATA: "${NOMAD_ALLOC_DIR}/data",
    PGPASSWORD: "hunter2-secret",
    BANNER: "pg-15 x1 (dc1)",
    GREETING: "dc=dc1",
    HOST: "${node.unique.name}:${attr.unique.hostname}",
    RACK: "${meta.rack}-single",
    REPLICA_IDX: "${NOMAD_ALLOC_INDEX}",
  });
});

test("precedence: -var over -var-file (later files win) over NOMAD_VAR_ over the default", async () => {
  const job = await parse({
    ...BASE,
    varFiles: [varFile("variables.vars.hcl"), varFile("variables.vars.json")],
    vars: [...BASE.vars!, "log_level=debug"],
    env: {
      ...BASE.env,
      NOMAD_VAR_replicas: "4",
      NOMAD_VAR_log_level: "warn",
      NOMAD_VAR_undeclared: "ignored",
    },
  });
  // image_tag: env 15, then the HCL file's 16.2.
  assert.equal(task(job).Config.command, "/usr/bin/postgres-16.2");
  // replicas: env 4, HCL file 2, JSON file 3 (the later file wins).
  assert.equal(job.TaskGroups[0]!.Count, 3);
  assert.deepEqual(job.Datacenters, ["eu-1", "eu-2"]);
  // labels: the file's map replaces the default map whole; log_level: -var over env.
  assert.deepEqual(task(job).Config.args, ["-c", "log_level=DEBUG", "--label=team=dba"]);
  assert.equal(task(job).Env.BANNER, "pg-16.2 x3 (eu-1,eu-2)");
  assert.equal(task(job).Env.GREETING, "dc=eu-1 dc=eu-2");
  assert.equal(task(job).Env.RACK, "${meta.rack}-ha");
});

test("-var strings convert to the variable's type: number, bool in objects, lists and maps as HCL", async () => {
  const job = await parse({
    ...BASE,
    vars: [
      ...BASE.vars!,
      "replicas=5",
      'datacenters=["a", "b"]',
      'labels={ x = "1", y = 2 }',
      'volume={ id = "other", read_only = "true" }',
    ],
  });
  assert.equal(job.TaskGroups[0]!.Count, 5);
  assert.deepEqual(job.Datacenters, ["a", "b"]);
  assert.deepEqual(task(job).Config.args, ["-c", "log_level=INFO", "--label=x=1", "--label=y=2"]);
  assert.equal(job.TaskGroups[0]!.Volumes.data!.ReadOnly, true);
  assert.equal(job.TaskGroups[0]!.Volumes.data!.Source, "other");
});

test("a variable with no value is Nomad's Unset variable error naming it and its line", async () => {
  await refused(
    parse({ vars: ["db_password=hunter2-secret"] }),
    /variables\.nomad\.hcl:20: Unset variable "image_tag"; /,
  );
});

test("values that do not fit the type are refused with Nomad's wording, never the value", async () => {
  await refused(
    parse({ ...BASE, vars: [...BASE.vars!, "replicas=hunter2"] }),
    /<value for var\.replicas from arguments>: Invalid argument value for -var variable; /,
    /not compatible with the variable's type constraint: a number is required/,
  );
  await refused(
    parse({ ...BASE, env: { ...BASE.env, NOMAD_VAR_volume: '{ id = "x" }' } }),
    /<value for var\.volume from env>: Invalid value for variable; .*attribute "read_only" is required/,
  );
  await refused(
    parse({ ...BASE, vars: [...BASE.vars!, 'datacenters=["a",'] }),
    /<value for var\.datacenters from arguments>: Invalid expression; /,
  );
  const badDefault = TEXT.replace('default     = ["dc1"]', "default = { a = 1 }");
  await refused(parse(BASE, badDefault), /:4: Invalid default value for variable; .*list of string required/);
});

test("validation rules check the winning value and report its error_message", async () => {
  await refused(
    parse({ ...BASE, vars: [...BASE.vars!, "replicas=9"] }),
    /Invalid value for cmd variable; Replicas must be between 1 and 5\.\n\nThis was checked by the validation rule at .*variables\.nomad\.hcl:15\./,
  );
  await refused(
    parse({ ...BASE, env: { ...BASE.env, NOMAD_VAR_replicas: "0" } }),
    /Invalid value for env variable; Replicas must be between 1 and 5\./,
  );
  const otherRef = TEXT.replace("var.replicas <= 5", 'var.image_tag != ""');
  await refused(
    parse(BASE, otherRef),
    /Invalid reference in variable validation; The condition for variable "replicas" can only refer to the variable itself, using var\.replicas\./,
  );
  const lowercase = TEXT.replace("Replicas must be", "replicas must be");
  await refused(parse(BASE, lowercase), /Invalid validation error message; /);
});

test("values for undeclared variables: -var and -var-file are errors (strict, Nomad's default) or ignored", async () => {
  await refused(
    parse({ ...BASE, vars: [...BASE.vars!, "nope=1"] }),
    /Undefined -var variable; A "nope" variable was passed in the command line but was not found in known variables\./,
  );
  const stray = { file: "extra.hcl", text: 'nope = "x"\n' };
  await refused(
    parse({ ...BASE, varFiles: [stray] }),
    /^extra\.hcl:1: Undefined variable; A "nope" variable was set/,
  );
  const job = await parse({ ...BASE, vars: [...BASE.vars!, "nope=1"], varFiles: [stray], strict: false });
  assert.equal(job.ID, "pg");
  const decl = { file: "decl.hcl", text: 'variable "x" {\n  default = 1\n}\n' };
  await refused(parse({ ...BASE, varFiles: [decl] }), /Variable declaration in a \.var file; /);
});

test("errors in expressions name the file, the line and the field; a secret in a -var is never shown", async () => {
  const unknownFn = TEXT.replace("upper(var.log_level)", "shout(var.log_level)");
  await refused(
    parse(BASE, unknownFn),
    /variables\.nomad\.hcl:54: locals\.args: Call to unknown function; There is no function named "shout"\./,
  );
  const missing = TEXT.replace("local.data_dir", "local.datadir");
  await refused(
    parse(BASE, missing),
    /variables\.nomad\.hcl:86: job\.pg\.group\.db\.task\.postgres\.env\.PGDATA: Unsupported attribute; .*"datadir"/,
  );
  // The password's value flows into a failing expression: the error shows the expression only.
  const leak = TEXT.replace("PGPASSWORD  = var.db_password", "PGPASSWORD  = var.db_password + 1");
  await refused(parse(BASE, leak), /env\.PGPASSWORD: Invalid value; /);
});

test("a cycle between locals is an error naming the locals", async () => {
  const cyclic = TEXT.replace('service = "pg-${var.image_tag}"', "service = local.banner");
  await refused(parse(BASE, cyclic), /Cycle in locals; local\.(service|banner) depends on itself/);
});

test("volume specs keep refusing variables: they have no variable blocks", async () => {
  const { parseVolumeSpec } = await import("../../../src/api/index.js");
  // Volume specs are HCL 1 (as Nomad's): a bare reference is not a value there.
  await refused(
    parseVolumeSpec("vol.hcl", 'id = "v"\nname = "v"\ntype = "csi"\nplugin_id = "p"\nexternal_id = var.x\n'),
    /^vol\.hcl:5:15: expected a value, got identifier$/,
  );
});

test("dynamic blocks expand over a variable, labelled and with an iterator, beside static blocks", async () => {
  const file = join(FIXTURES, "variables_dynamic.nomad.hcl");
  const job = await parseJobSpec(file, readFileSync(file, "utf8"), {});
  const g = job.TaskGroups[0]!;
  assert.deepEqual(Object.fromEntries(Object.entries(g.Volumes).map(([k, v]) => [k, v.Source])), {
    scratch: "scratch-vol",
    data: "data-vol",
    logs: "logs-vol",
  });
  assert.deepEqual(
    g.Tasks[0]!.VolumeMounts.map((m) => [m.Volume, m.Destination]),
    [
      ["data", "/srv/data/${NOMAD_ALLOC_INDEX}"],
      ["logs", "/var/log/app/${NOMAD_ALLOC_INDEX}"],
    ],
  );
});
