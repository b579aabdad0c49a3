/**
 * Register warnings: one Nomad-style line per stanza berth keeps but does not act on, joined as
 * Nomad joins them (helper.MergeMultierrorWarnings); nothing for a job that sets none.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { validateJob } from "../../../src/structs/job_validate.js";
import { formatWarnings, jobWarningList } from "../../../src/structs/job_warnings.js";

const task = (over: Record<string, unknown> = {}) => ({ Name: "t", Driver: "exec", ...over });

test("a job with no kept stanza has no warnings", () => {
  const job = validateJob({ ID: "j", TaskGroups: [{ Name: "g", Tasks: [task()] }] });
  assert.deepEqual(jobWarningList(job), []);
  assert.equal(formatWarnings(jobWarningList(job)), "");
});

test("each kept stanza is named, with its group, task and name", () => {
  const job = validateJob({
    ID: "j",
    // Launched by berth (issue 29): no warning.
    Type: "batch",
    Periodic: { Specs: ["@daily"] },
    TaskGroups: [
      {
        Name: "web",
        Networks: [{ DynamicPorts: [{ Label: "http" }] }],
        Services: [{ Name: "api" }, { Name: "admin" }],
        EphemeralDisk: { SizeMB: 300 },
        Tasks: [
          task({
            Vault: { Role: "r" },
            Artifacts: [{ GetterSource: "https://x" }],
            Resources: { CPU: 100, Devices: [{ Name: "nvidia/gpu" }] },
          }),
        ],
      },
    ],
  });
  assert.deepEqual(jobWarningList(job), [
    'Task group "web" service "api": berth does not register services; the stanza is kept and ignored',
    'Task group "web" service "admin": berth does not register services; the stanza is kept and ignored',
    'Task group "web" network: berth does not set up group networks or allocate ports; the stanza is kept and ignored',
    'Task group "web" ephemeral_disk: berth does not size or migrate ephemeral disks; the stanza is kept and ignored',
    'Task "t" in group "web" vault: berth does not fetch Vault tokens; the stanza is kept and ignored',
    'Task "t" in group "web" artifact: berth does not download artifacts; the stanza is kept and ignored',
    'Task "t" in group "web" resources device "nvidia/gpu": berth does not schedule devices; the stanza is kept and ignored',
  ]);
});

test("warnings are joined as Nomad joins register warnings", () => {
  assert.equal(formatWarnings([]), "");
  assert.equal(formatWarnings(["a"]), "1 warning:\n\n* a");
  assert.equal(formatWarnings(["a", " b "]), "2 warnings:\n\n* a\n* b");
});
