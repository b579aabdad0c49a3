/**
 * Issue 10: "unquoted HCL expressions (`password = var.x` with no variable) are stored as the
 * literal text `${var.x}`, even in `secrets`". Jobspecs now have HCL2's language (issue 11,
 * hcl2/): a reference to an undeclared var.* / local.* is HCL's "Unsupported attribute", naming the
 * file, line and field and never a value. Volume specs have no language: every reference to var.* /
 * local.* and every expression hcl2json leaves unevaluated is refused at parse time. Run-time
 * references pass through in both.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseJobSpec, parseVolumeSpec, SpecError } from "../../../src/api/index.js";

const job = (taskBody: string) => `job "web" {
  group "g" {
    task "t" {
      driver = "raw_exec"
${taskBody}
    }
  }
}
`;

const volume = (secrets: string) => `id        = "v1"
name      = "v1"
type      = "csi"
plugin_id = "p1"
capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
secrets {
${secrets}
}
`;

async function refused(p: Promise<unknown>, where: RegExp, problem: RegExp, secret?: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof SpecError, String(err));
    assert.match(err.message, where);
    assert.match(err.message, problem);
    if (secret) assert.ok(!err.message.includes(secret), `the message echoes the value: ${err.message}`);
    return true;
  });
}

test("a jobspec reference to a missing variable or local is refused with file, line and field", async () => {
  await refused(
    parseJobSpec("web.hcl", job(`      env {\n        PASSWORD = var.x\n      }`)),
    /^web\.hcl:6: job\.web\.group\.g\.task\.t\.env\.PASSWORD: /,
    /Unsupported attribute; This object does not have an attribute named "x"\./,
  );
  await refused(
    parseJobSpec("web.hcl", job(`      config {\n        command = "/bin/\${local.shell}"\n      }`)),
    /^web\.hcl:6: job\.web\.group\.g\.task\.t\.config\.command: /,
    /Unsupported attribute; This object does not have an attribute named "shell"\./,
  );
  await refused(
    parseJobSpec("web.hcl", job(`      config {\n        args = ["a", var.arg]\n      }`)),
    /config\.args\.\[1\]/,
    /"arg"/,
  );
});

test("a volume spec's secrets referring to a missing variable are refused without echoing the value", async () => {
  // HCL 1 (Nomad's volume spec language) has no bare references: a parse error at the value.
  await refused(
    parseVolumeSpec("vol.hcl", volume("  password = var.x")),
    /^vol\.hcl:10:14: /,
    /expected a value, got identifier/,
  );
  // Interpolations are not evaluated in volume specs: refused, naming the field, never the value.
  await refused(
    parseVolumeSpec("vol.hcl", volume('  password = "hunter2-${var.pw}"')),
    /^vol\.hcl:10:14: secrets\.password: /,
    /is not evaluated in a volume spec/,
    "hunter2",
  );
  await refused(
    parseVolumeSpec("vol.hcl", volume('  password = "hunter2-${upper("s3cr3t")}"')),
    /^vol\.hcl:10:14: secrets\.password: /,
    /is not evaluated in a volume spec/,
    "s3cr3t",
  );
});

test("expressions hcl2json leaves unevaluated are evaluated in jobspecs: arithmetic, functions, conditionals, directives", async () => {
  for (const [expr, value] of [
    ["1 + 2", "3"],
    ['upper("a")', "A"],
    ['true ? "a" : "b"', "a"],
    ['"%{ if true }a%{ endif }"', "a"],
  ] as const) {
    const parsed = await parseJobSpec("web.hcl", job(`      env {\n        X = ${expr}\n      }`));
    assert.equal(parsed.TaskGroups[0]!.Tasks[0]!.Env?.X, value, expr);
  }
});

test("HCL's JSON syntax has the HCL form's language; a volume spec in JSON still has none", async () => {
  const text = JSON.stringify({
    job: { web: { group: { g: { task: { t: { driver: "raw_exec", env: { P: "${var.p}" } } } } } } },
  });
  // No variable "p" is declared: Nomad's diagnostic for an unknown attribute of var.
  await refused(
    parseJobSpec("web.json", text),
    /job\.web\.group\.g\.task\.t\.env\.P/,
    /Unsupported attribute; This object does not have an attribute named "p"/,
  );
  await refused(
    parseVolumeSpec(
      "vol.json",
      JSON.stringify({ id: "v1", type: "csi", plugin_id: "p1", secrets: { pw: "${local.pw}" } }),
    ),
    /secrets\.pw/,
    /is not evaluated in a volume spec/,
  );
});

test("run-time references, escapes and plain values pass through unchanged", async () => {
  const parsed = await parseJobSpec(
    "web.hcl",
    job(`      config {
        command = "\${NOMAD_TASK_DIR}/run"
        args    = ["\${attr.kernel.name}", "\${env["HOME"]}", "$\${LITERAL}", "\${meta.rack}", "\${node.unique.id}"]
      }
      env {
        N = 5
      }`),
  );
  const task = parsed.TaskGroups[0]!.Tasks[0]!;
  assert.deepEqual(task.Config, {
    command: "${NOMAD_TASK_DIR}/run",
    // HCL's escape $${ is the literal text ${, as Nomad decodes it (the client interpolates later).
    args: ["${attr.kernel.name}", '${env["HOME"]}', "${LITERAL}", "${meta.rack}", "${node.unique.id}"],
  });
  // A bare unknown name (`BARE = foo`) is refused since issue 30: hcl2_bare_identifiers.test.ts.
  assert.deepEqual(task.Env, { N: "5" });
});
