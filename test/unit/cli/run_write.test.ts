import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { prefixListed, startFakeApi, type FakeApi } from "../../fakes/api.js";
import * as fx from "../../builders/api_records.js";
import { jobRun } from "../../../src/cli/commands/job_run.js";
import { jobStop } from "../../../src/cli/commands/job_stop.js";
import { volumeCreate } from "../../../src/cli/commands/volume_create.js";
import { volumeDelete } from "../../../src/cli/commands/volume_delete.js";
import { volumeDeregister } from "../../../src/cli/commands/volume_deregister.js";
import { volumeRegister } from "../../../src/cli/commands/volume_register.js";
import { captureIO } from "../../fakes/command_io.js";

let api: FakeApi;
const examples = new URL("../../../../examples/hostpath/", import.meta.url);
const files: Record<string, string> = {};

before(async () => {
  for (const f of ["job.hcl", "volume.hcl", "plugin.hcl"])
    files[f] = await readFile(new URL(f, examples), "utf8");
  files["bad.hcl"] = 'job "x" {\n group "g" {\n count = "many"\n }\n}';
  files["reg.hcl"] = 'id = "old"\ntype = "csi"\nplugin_id = "hostpath"\nexternal_id = "ext-9"\n';
  files["warn.json"] = JSON.stringify({ Job: { ID: "warn" } });
  api = await startFakeApi({
    "PUT /v1/jobs": (req) => {
      const id = (JSON.parse(req.body) as { Job: { ID: string } }).Job.ID;
      if (id === "warn") return { json: { EvalID: "ev-2", Warnings: "group has no tasks", Index: 8 } };
      return { json: { EvalID: "ev-1", EvalCreateIndex: 7, JobModifyIndex: 7, Warnings: "", Index: 7 } };
    },
    "GET /v1/jobs": prefixListed([
      { ...fx.jobStub, ID: "writer" },
      { ...fx.jobStub, ID: "web-1" },
      { ...fx.jobStub, ID: "web-2" },
    ]),
    "DELETE /v1/job/writer": { json: { EvalID: "ev-3", EvalCreateIndex: 9, JobModifyIndex: 9, Index: 9 } },
    "PUT /v1/volume/csi/demo/create": (req) => {
      const [vol] = (JSON.parse(req.body) as { Volumes: { ID: string }[] }).Volumes;
      return { json: { Volumes: [{ ...vol, ExternalID: "hp-42" }] } };
    },
    "PUT /v1/volume/csi/old": { text: "" },
    "DELETE /v1/volume/csi/demo": { text: "" },
    "DELETE /v1/volume/csi/busy": { status: 400, text: "volume in use: busy" },
    "DELETE /v1/volume/csi/orphaned": {
      json: {
        Index: 12,
        Warnings: ['volume "orphaned" (external ID "ext-1") may still be attached on node B'],
      },
    },
    "DELETE /v1/volume/csi/demo/delete": { text: "" },
  });
});

after(() => api.close());

const io = () => captureIO(api.address, files);
const last = () => api.requests.at(-1)!;

describe("job run", () => {
  it("registers the parsed jobspec and prints the evaluation", async () => {
    const o = io();
    assert.equal(await jobRun.run(jobRun.parse(["-detach", "job.hcl"]), o), 0);
    assert.deepEqual(o.out, ["Job registration successful", "Evaluation ID: ev-1"]);
    assert.equal(last().method, "PUT");
    assert.equal(last().url, "/v1/jobs");
    const sent = JSON.parse(last().body) as { Job: { ID: string; TaskGroups: { Volumes: object }[] } };
    assert.equal(sent.Job.ID, "writer");
    assert.deepEqual(Object.keys(sent.Job.TaskGroups[0]!.Volumes), ["data"]);
  });

  it("prints the server's warnings first", async () => {
    const o = io();
    assert.equal(await jobRun.run(jobRun.parse(["-detach", "warn.json"]), o), 0);
    assert.deepEqual(o.out, [
      "Job Warnings:",
      "group has no tasks",
      "",
      "Job registration successful",
      "Evaluation ID: ev-2",
    ]);
  });

  it("a jobspec error names the file and sends nothing", async () => {
    const o = io();
    const before = api.requests.length;
    assert.equal(await jobRun.run(jobRun.parse(["bad.hcl"]), o), 1);
    assert.deepEqual(o.err, [
      'Error parsing job file bad.hcl: bad.hcl: job "x" group "g": count must be a number, got string "many"',
    ]);
    assert.equal(api.requests.length, before);
  });

  it("a missing file is an error", async () => {
    const o = io();
    assert.equal(await jobRun.run(jobRun.parse(["nope.hcl"]), o), 1);
    assert.match(o.err[0]!, /^Error parsing job file nope\.hcl: ENOENT/);
  });
});

describe("job stop", () => {
  it("deregisters, with -purge when asked", async () => {
    const o = io();
    assert.equal(await jobStop.run(jobStop.parse(["-purge", "writer"]), o), 0);
    assert.deepEqual(o.out, ['Job "writer" stopped and purged', "Evaluation ID: ev-3"]);
    assert.equal(last().url, "/v1/job/writer?purge=true");
    const p = io();
    assert.equal(await jobStop.run(jobStop.parse(["writer"]), p), 0);
    assert.equal(p.out[0], 'Job "writer" stopped');
    assert.equal(last().url, "/v1/job/writer?purge=false");
  });

  it("an unknown job is an error with exit 1", async () => {
    const o = io();
    assert.equal(await jobStop.run(jobStop.parse(["ghost"]), o), 1);
    assert.deepEqual(o.err, ['Error deregistering job: No job(s) with prefix or ID "ghost" found']);
  });

  it("a unique ID prefix names the job; a prefix of several is refused with their table", async () => {
    const o = io();
    assert.equal(await jobStop.run(jobStop.parse(["wri"]), o), 0);
    assert.equal(o.out[0], 'Job "writer" stopped');
    assert.equal(last().url, "/v1/job/writer?purge=false");
    const before = api.requests.length;
    const p = io();
    assert.equal(await jobStop.run(jobStop.parse(["web"]), p), 1);
    assert.match(p.err[0]!, /^Error deregistering job: Prefix "web" matched multiple jobs\n\nID +Type/);
    assert.match(p.err[0]!, /\nweb-1 +batch/);
    assert.match(p.err[0]!, /\nweb-2 +batch/);
    assert.ok(
      api.requests.slice(before).every((r) => r.method === "GET"),
      "nothing was deregistered",
    );
  });
});

describe("volume create / register", () => {
  it("create sends {Volumes: [vol]} and prints what the plugin created", async () => {
    const o = io();
    assert.equal(await volumeCreate.run(volumeCreate.parse(["volume.hcl"]), o), 0);
    assert.deepEqual(o.out, ["Created external volume hp-42 with ID demo"]);
    assert.equal(last().url, "/v1/volume/csi/demo/create");
    const body = JSON.parse(last().body) as { Volumes: { RequestedCapacityMin: number }[] };
    assert.equal(body.Volumes.length, 1);
    assert.equal(body.Volumes[0]!.RequestedCapacityMin, 10 * 2 ** 20);
  });

  it("register sends the spec to PUT /v1/volume/csi/:id", async () => {
    const o = io();
    assert.equal(await volumeRegister.run(volumeRegister.parse(["reg.hcl"]), o), 0);
    assert.deepEqual(o.out, ['Volume "old" registered']);
    assert.equal(last().method, "PUT");
    assert.deepEqual(JSON.parse(last().body), {
      Volumes: [{ ID: "old", PluginID: "hostpath", ExternalID: "ext-9" }],
    });
  });

  it("a jobspec given as a volume spec is rejected by name", async () => {
    const o = io();
    assert.equal(await volumeCreate.run(volumeCreate.parse(["job.hcl"]), o), 1);
    assert.deepEqual(o.err, [
      'Error parsing volume file job.hcl: job.hcl: type is missing: a volume spec names its type, type = "csi"',
    ]);
  });
});

describe("volume deregister / delete", () => {
  it("deregister passes -force", async () => {
    const o = io();
    assert.equal(await volumeDeregister.run(volumeDeregister.parse(["-force", "demo"]), o), 0);
    assert.deepEqual(o.out, ['Successfully deregistered volume "demo"!']);
    assert.equal(last().url, "/v1/volume/csi/demo?force=true");
  });

  it("forced deregister prints what the server says may be left attached", async () => {
    const o = io();
    assert.equal(await volumeDeregister.run(volumeDeregister.parse(["-force", "orphaned"]), o), 0);
    assert.deepEqual(o.err, [
      'Warning: volume "orphaned" (external ID "ext-1") may still be attached on node B',
    ]);
    assert.deepEqual(o.out, ['Successfully deregistered volume "orphaned"!']);
  });

  it("deregister reports the server's refusal", async () => {
    const o = io();
    assert.equal(await volumeDeregister.run(volumeDeregister.parse(["busy"]), o), 1);
    assert.deepEqual(o.err, [
      "Error deregistering volume: Unexpected response code: 400 (volume in use: busy)",
    ]);
  });

  it("delete sends secrets in the X-Nomad-CSI-Secrets header only", async () => {
    const o = io();
    assert.equal(
      await volumeDelete.run(volumeDelete.parse(["-secret", "a=1", "-secret", "b=2", "demo"]), o),
      0,
    );
    assert.deepEqual(o.out, ['Successfully deleted volume "demo"!']);
    assert.equal(last().url, "/v1/volume/csi/demo/delete");
    assert.equal(last().headers["x-nomad-csi-secrets"], "a=1,b=2");
    assert.equal(last().body, "");
  });
});
