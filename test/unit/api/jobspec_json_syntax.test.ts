/**
 * Jobspecs in HCL's JSON syntax (`{"job": {...}}`, Nomad's jobspec2 reading a JSON jobspec) have the
 * HCL form's language: `variable` (types written as type expressions, defaults, validation),
 * `variables`, `locals` as a list of blocks, strings as templates, `-var`/`-var-file`/`NOMAD_VAR_*`.
 * The fixture test/fixtures/jobs/variables.nomad.json is variables.nomad.hcl written in JSON syntax:
 * both must decode to the same job, whatever the inputs.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parseJobSpec, SpecError } from "../../../src/api/index.js";
import type { HclInputs } from "../../../src/api/specs/index.js";

const FIXTURES = join(import.meta.dirname, "../../../../test/fixtures/jobs");
const read = (name: string) => readFileSync(join(FIXTURES, name), "utf8");
const HCL = { file: join(FIXTURES, "variables.nomad.hcl"), text: read("variables.nomad.hcl") };
const JSON_FILE = { file: join(FIXTURES, "variables.nomad.json"), text: read("variables.nomad.json") };
const BASE: HclInputs = { vars: ["db_password=hunter2-secret"], env: { NOMAD_VAR_image_tag: "15" } };

const both = async (inputs: HclInputs) => [
  await parseJobSpec(HCL.file, HCL.text, inputs),
  await parseJobSpec(JSON_FILE.file, JSON_FILE.text, inputs),
];

async function refused(p: Promise<unknown>, ...patterns: RegExp[]): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof SpecError, String(err));
    for (const re of patterns) assert.match(err.message, re);
    assert.ok(!err.message.includes("hunter2"), `the message shows the password: ${err.message}`);
    return true;
  });
}

test("JSON syntax: the same job as the HCL form, with defaults, locals and functions", async () => {
  const [hcl, json] = await both(BASE);
  assert.deepEqual(json, hcl);
  const task = json!.TaskGroups[0]!.Tasks[0]!;
  assert.deepEqual(task.Config, {
    command: "/usr/bin/postgres-15",
    args: ["-c", "log_level=INFO", "--label=team=storage", "--label=tier=backend"],
  });
  assert.equal(task.Env?.GREETING, "dc=dc1");
  assert.equal(task.Env?.HOST, "${node.unique.name}:${attr.unique.hostname}", "run-time references stay");
});

test("JSON syntax: -var over -var-file over NOMAD_VAR_, converted to the declared types", async () => {
  const varFiles = [{ file: join(FIXTURES, "variables.vars.json"), text: read("variables.vars.json") }];
  const inputs: HclInputs = {
    ...BASE,
    varFiles,
    vars: [...BASE.vars!, "replicas=2", 'labels={ team = "ops" }'],
  };
  const [hcl, json] = await both(inputs);
  assert.deepEqual(json, hcl);
  assert.equal(json!.TaskGroups[0]!.Count, 2, "-var wins over the var file's 3, a number");
  assert.deepEqual(json!.Datacenters, ["eu-1", "eu-2"]);
  assert.deepEqual(json!.TaskGroups[0]!.Tasks[0]!.Config?.args, ["-c", "log_level=INFO", "--label=team=ops"]);
  assert.equal(json!.TaskGroups[0]!.Tasks[0]!.Env?.RACK, "${meta.rack}-ha");
});

test("JSON syntax: Nomad's errors for unset, invalid and undeclared variables, no secret shown", async () => {
  await refused(
    parseJobSpec(JSON_FILE.file, JSON_FILE.text, { vars: ["db_password=hunter2-secret"] }),
    /Unset variable "image_tag"/,
  );
  await refused(
    parseJobSpec(JSON_FILE.file, JSON_FILE.text, { ...BASE, vars: [...BASE.vars!, "replicas=9"] }),
    /Invalid value for cmd variable; Replicas must be between 1 and 5\./,
  );
  await refused(
    parseJobSpec(JSON_FILE.file, JSON_FILE.text, { ...BASE, vars: [...BASE.vars!, "nope=1"] }),
    /Undefined -var variable/,
  );
  const bad = JSON_FILE.text.replace('"${local.data_dir}"', '"${local.missing}"');
  await refused(parseJobSpec(JSON_FILE.file, bad, BASE), /job\.pg\.group\.db\.task\.postgres\.env\.PGDATA/);
});

test("JSON syntax: strings are templates; $${ and %%{ are literal text; other JSON values as written", async () => {
  const text = JSON.stringify({
    variable: [{ n: { type: "number", default: 2 } }],
    job: {
      j: {
        group: {
          g: {
            count: "${var.n + 1}",
            task: {
              t: {
                driver: "exec",
                config: { command: "/bin/sh", args: ["-c", "echo $${HOME} %%{ x }", "${var.n * 2}"] },
                env: { N: "${var.n}", LIT: 7 },
              },
            },
          },
        },
      },
    },
  });
  const hcl = `variable "n" {
  type    = number
  default = 2
}
job "j" {
  group "g" {
    count = var.n + 1
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $\${HOME} %%{ x }", "\${var.n * 2}"]
      }
      env {
        N   = "\${var.n}"
        LIT = 7
      }
    }
  }
}
`;
  const job = await parseJobSpec("j.json", text);
  assert.deepEqual(job, await parseJobSpec("j.hcl", hcl), "the JSON decodes as the same HCL");
  const g = job.TaskGroups[0]!;
  assert.equal(g.Count, 3);
  assert.deepEqual(g.Tasks[0]!.Config?.args, ["-c", "echo ${HOME} %{ x }", 4]);
  assert.deepEqual(g.Tasks[0]!.Env, { N: "2", LIT: "7" });
});

test("JSON syntax: dynamic blocks (labels, iterator as a name) expand as in the HCL form", async () => {
  const content = {
    type: "csi",
    source: "${volume.value.source}",
    access_mode: "single-node-writer",
    attachment_mode: "file-system",
  };
  const text = JSON.stringify({
    variable: {
      volumes: {
        type: "map(object({ source = string, path = string }))",
        default: {
          logs: { source: "logs-vol", path: "/var/log/app" },
          data: { source: "data-vol", path: "/srv/data" },
        },
      },
    },
    job: {
      app: {
        group: {
          g: {
            volume: { scratch: { ...content, source: "scratch-vol" } },
            dynamic: { volume: { for_each: "${var.volumes}", labels: ["${volume.key}"], content } },
            task: {
              t: {
                driver: "exec",
                config: { command: "/bin/app" },
                dynamic: {
                  volume_mount: {
                    for_each: "${var.volumes}",
                    iterator: "vm",
                    content: { volume: "${vm.key}", destination: "${vm.value.path}/${NOMAD_ALLOC_INDEX}" },
                  },
                },
              },
            },
          },
        },
      },
    },
  });
  const hcl = join(FIXTURES, "variables_dynamic.nomad.hcl");
  assert.deepEqual(
    await parseJobSpec("app.json", text),
    await parseJobSpec(hcl, read("variables_dynamic.nomad.hcl")),
  );
});
