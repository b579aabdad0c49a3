/**
 * Issue 10: mount destinations `/../etc` or `/` and a plugin `mount_dir` of `/../../etc` were
 * accepted and failed only when the task started. Through the real HTTP API of an in-process
 * server: each is a 400 with ERR_VALIDATION naming the field, and nothing is stored.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startServer } from "./fake_agent.js";

function jobWith(task: Record<string, unknown>) {
  return {
    Job: {
      ID: "paths",
      TaskGroups: [
        {
          Name: "g",
          Volumes: { data: { Type: "host", Source: "data" } },
          Tasks: [{ Name: "t", Driver: "exec", Config: { command: "/bin/true" }, ...task }],
        },
      ],
    },
  };
}

test("HTTP: bad task paths are refused with a 400 naming the field, and nothing is stored", async (t) => {
  const base = await startServer(t);
  const cases: [Record<string, unknown>, string][] = [
    [
      { VolumeMounts: [{ Volume: "data", Destination: "/../etc" }] },
      "Job.TaskGroups[0].Tasks[0].VolumeMounts[0].Destination",
    ],
    [
      { VolumeMounts: [{ Volume: "data", Destination: "/" }] },
      "Job.TaskGroups[0].Tasks[0].VolumeMounts[0].Destination",
    ],
    [
      { VolumeMounts: [{ Volume: "data", Destination: "/d\u0000x" }] },
      "Job.TaskGroups[0].Tasks[0].VolumeMounts[0].Destination",
    ],
    [
      { CSIPluginConfig: { ID: "p", Type: "node", MountDir: "/../../etc" } },
      "Job.TaskGroups[0].Tasks[0].CSIPluginConfig.MountDir",
    ],
    [
      {
        CSIPluginConfig: {
          ID: "p",
          Type: "node",
          MountDir: "/csi",
          StagePublishBaseDir: "/local/../../../etc",
        },
      },
      "Job.TaskGroups[0].Tasks[0].CSIPluginConfig.StagePublishBaseDir",
    ],
  ];
  const indexBefore = (await fetch(`${base}/v1/jobs`)).headers.get("x-nomad-index");
  for (const [task, field] of cases) {
    const res = await fetch(`${base}/v1/jobs`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(jobWith(task)),
    });
    const text = await res.text();
    assert.equal(res.status, 400, text);
    assert.equal(res.headers.get("x-berth-error-code"), "ERR_VALIDATION");
    assert.ok(text.includes(field), text);
    assert.ok(!text.includes("\u0000"), "the NUL is escaped in the message");
  }
  assert.equal((await fetch(`${base}/v1/job/paths`)).status, 404, "nothing was stored");
  assert.equal((await fetch(`${base}/v1/jobs`)).headers.get("x-nomad-index"), indexBefore);
  // The same job with sound paths registers.
  const ok = await fetch(`${base}/v1/jobs`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(jobWith({ VolumeMounts: [{ Volume: "data", Destination: "/srv/data" }] })),
  });
  assert.equal(ok.status, 200, await ok.text());
});
