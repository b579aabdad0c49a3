/**
 * Task paths (volume_mount destination, csi_plugin mount_dir / stage_publish_base_dir) are refused
 * at submit with the field named (issue 10), never accepted to fail when the task starts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BerthError } from "../../../src/structs/errors.js";
import { checkTaskPath, checkTemplateDest, hasControlChar } from "../../../src/structs/job_paths_validate.js";
import { validateJob } from "../../../src/structs/job_validate.js";

function refusedAt(fn: () => unknown, field: string, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof BerthError, String(err));
    assert.equal(err.code, "ERR_VALIDATION");
    assert.equal(err.field, field);
    assert.match(err.message, message);
    // Control characters in the value are escaped in the message, never echoed raw.
    assert.equal(hasControlChar(err.message), false, JSON.stringify(err.message));
    return true;
  });
}

const BAD: [string, RegExp][] = [
  ["/", /must not be '\/'/],
  ["//", /must not be '\/'|empty segments/],
  ["/../etc", /'\.\.'/],
  ["/../../etc", /'\.\.'/],
  ["/data/../../etc", /'\.\.'/],
  ["/data/..", /'\.\.'/],
  ["/./data", /'\.' segments/],
  ["/data//x", /empty segments/],
  ["data", /absolute/],
  ["../etc", /absolute/],
  ["", /required/],
  ["/da\u0000ta", /control characters/],
  ["/x\u001b]0;pwned\u0007", /control characters/],
  ["/with space", /may only contain/],
  ["/semi;colon", /may only contain/],
  ["/" + "a".repeat(5000), /at most 4095 bytes/],
];

test("checkTaskPath: traversal, '/', relative, NUL and odd characters are refused", () => {
  for (const [value, why] of BAD) refusedAt(() => checkTaskPath("F", value), "F", why);
});

test("checkTaskPath: ordinary and interpolated paths pass unchanged", () => {
  for (const ok of [
    "/data",
    "/csi/",
    "/local/csi",
    "/srv/${meta.rack}",
    "/d/${NOMAD_ALLOC_ID}-x",
    "/a.b/c..d",
  ]) {
    assert.equal(checkTaskPath("F", ok), ok);
  }
});

test("checkTaskPath: Nomad's task directories (${NOMAD_TASK_DIR}/…) are checked as /local, /alloc, /secrets", () => {
  for (const ok of [
    "${NOMAD_TASK_DIR}/data",
    "${NOMAD_ALLOC_DIR}/web-nfs",
    "${NOMAD_SECRETS_DIR}/certs",
    "${NOMAD_TASK_DIR}",
  ]) {
    assert.equal(checkTaskPath("F", ok), ok, "returned as written: the client interpolates it");
  }
  refusedAt(() => checkTaskPath("F", "${NOMAD_TASK_DIR}/../../etc"), "F", /'\.\.'/);
  refusedAt(() => checkTaskPath("F", "${NOMAD_TASK_DIR}//x"), "F", /empty segments/);
  // Only a leading task directory stands for an absolute path; anything else is still relative.
  refusedAt(() => checkTaskPath("F", "${NOMAD_ALLOC_ID}/x"), "F", /absolute/);
  refusedAt(() => checkTaskPath("F", "x/${NOMAD_TASK_DIR}"), "F", /absolute/);
});

test("checkTemplateDest: relative to the task dir, may reach the alloc dir, never above it", () => {
  for (const ok of ["local/app.conf", "${NOMAD_SECRETS_DIR}/token", "../alloc/shared.env", "/local/abs"]) {
    assert.equal(checkTemplateDest("F", ok), ok);
  }
  for (const bad of ["../../etc/passwd", "local/../../../x", "../.."]) {
    refusedAt(() => checkTemplateDest("F", bad), "F", /destination escapes allocation directory/);
  }
});

const group = (task: Record<string, unknown>) => ({
  ID: "j",
  TaskGroups: [
    {
      Name: "g",
      Volumes: { data: { Type: "host", Source: "pg" } },
      Tasks: [{ Name: "t", Driver: "exec", ...task }],
    },
  ],
});

test("job: a bad mount destination is refused naming the field", () => {
  for (const d of ["/", "/../etc"]) {
    refusedAt(
      () =>
        validateJob(
          group({
            VolumeMounts: [
              { Volume: "data", Destination: "/ok" },
              { Volume: "data", Destination: d },
            ],
          }),
        ),
      "Job.TaskGroups[0].Tasks[0].VolumeMounts[1].Destination",
      /must not/,
    );
  }
});

test("job: a bad csi_plugin mount_dir or stage_publish_base_dir is refused naming the field", () => {
  const plugin = (p: Record<string, unknown>) => group({ CSIPluginConfig: { ID: "p", Type: "node", ...p } });
  refusedAt(
    () => validateJob(plugin({ MountDir: "/../../etc" })),
    "Job.TaskGroups[0].Tasks[0].CSIPluginConfig.MountDir",
    /'\.\.'/,
  );
  refusedAt(
    () => validateJob(plugin({ MountDir: "/" })),
    "Job.TaskGroups[0].Tasks[0].CSIPluginConfig.MountDir",
    /must not be '\/'/,
  );
  refusedAt(
    () => validateJob(plugin({ MountDir: "/csi", StagePublishBaseDir: "/local/../../etc" })),
    "Job.TaskGroups[0].Tasks[0].CSIPluginConfig.StagePublishBaseDir",
    /'\.\.'/,
  );
  refusedAt(
    () => validateJob(plugin({ MountDir: "/csi", StagePublishBaseDir: "local/csi" })),
    "Job.TaskGroups[0].Tasks[0].CSIPluginConfig.StagePublishBaseDir",
    /absolute/,
  );
  // Left out: Nomad's defaults (api TaskCSIPluginConfig.Canonicalize), /csi and /local/csi.
  const ok = validateJob(plugin({ MountDir: "", StagePublishBaseDir: "" })).TaskGroups[0]!.Tasks[0]!;
  assert.equal(ok.CSIPluginConfig!.MountDir, "/csi");
  assert.equal(ok.CSIPluginConfig!.StagePublishBaseDir, "/local/csi");
});
