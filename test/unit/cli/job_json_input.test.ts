/**
 * `job run|plan|validate -json` (the file is the API's JSON job, its outer Job field taken) and
 * `job plan -json-output` / `-t` (the plan response instead of the text, exit codes unchanged),
 * through a fake API.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startFakeApi, type FakeApi } from "../../fakes/api.js";
import { captureIO } from "../../fakes/command_io.js";
import type { Command, Parsed } from "../../../src/cli/command.js";
import { jobPlan } from "../../../src/cli/commands/job_plan.js";
import { jobRun } from "../../../src/cli/commands/job_run.js";
import { jobValidate } from "../../../src/cli/commands/job_validate.js";

const JOB = {
  ID: "api",
  Name: "api",
  Type: "batch",
  TaskGroups: [
    { Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/true" } }] },
  ],
};
const PLAN = {
  Diff: { Type: "Added", ID: "api", Fields: null, Objects: null, TaskGroups: [] },
  Annotations: {
    DesiredTGUpdates: {
      g: { Ignore: 0, Place: 1, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0 },
    },
  },
  FailedTGAllocs: null,
  JobModifyIndex: 0,
  Warnings: "",
};
const FILES = {
  "wrapped.json": JSON.stringify({ Job: JOB }, null, 4),
  "bare.json": JSON.stringify(JOB),
  "job.hcl": 'job "api" {\n  type = "batch"\n}\n',
  "list.json": "[1]",
};

let api: FakeApi;
before(async () => {
  api = await startFakeApi({
    "PUT /v1/jobs": { json: { EvalID: "", JobModifyIndex: 1, Warnings: "" } },
    "PUT /v1/job/api/plan": { json: PLAN },
    "PUT /v1/validate/job": {
      json: { DriverConfigValidated: true, ValidationErrors: [], Error: "", Warnings: "" },
    },
  });
});
after(() => api.close());

async function run<P extends Parsed>(cmd: Command<P>, argv: string[]) {
  const io = captureIO(api.address, FILES);
  const code = await cmd.run(cmd.parse(argv), io);
  return { code, out: io.out, err: io.err };
}

/** The job the last request sent. */
function sentJob(): unknown {
  return (JSON.parse(api.requests.at(-1)!.body) as { Job: unknown }).Job;
}

describe("-json: the file is the API's JSON job", () => {
  it("job run -json takes the outer Job field, or the object itself", async () => {
    for (const file of ["wrapped.json", "bare.json"]) {
      const r = await run(jobRun, ["-json", "-detach", file]);
      assert.equal(r.code, 0, r.err.join("\n"));
      assert.equal(api.requests.at(-1)!.url, "/v1/jobs");
      assert.deepEqual(sentJob(), JOB);
    }
  });

  it("job validate -json and job plan -json send the same job", async () => {
    assert.deepEqual(await run(jobValidate, ["-json", "wrapped.json"]), {
      code: 0,
      out: ["Job validation successful"],
      err: [],
    });
    assert.deepEqual(sentJob(), JOB);
    const plan = await run(jobPlan, ["-json", "-json-output", "bare.json"]);
    assert.equal(plan.code, 1);
    assert.deepEqual(sentJob(), JOB);
  });

  it("a file that is not JSON is Go's decoding error, not an HCL parse", async () => {
    const before = api.requests.length;
    assert.deepEqual(await run(jobValidate, ["-json", "job.hcl"]), {
      code: 1,
      out: [],
      err: [
        "Error getting job struct: Failed to parse JSON job: invalid character 'j' looking for beginning of value",
      ],
    });
    assert.deepEqual(await run(jobPlan, ["-json", "list.json"]), {
      code: 255,
      out: [],
      err: [
        "Error getting job struct: Failed to parse JSON job: json: cannot unmarshal array into Go value of type api.Job",
      ],
    });
    const r = await run(jobRun, ["-json", "job.hcl"]);
    assert.equal(r.code, 1);
    assert.match(r.err[0]!, /Failed to parse JSON job: invalid character 'j'/);
    assert.equal(api.requests.length, before, "nothing was sent");
  });

  it("-json with -var or -var-file is refused as Nomad refuses it", async () => {
    assert.deepEqual(await run(jobRun, ["-json", "-var", "a=1", "bare.json"]), {
      code: 1,
      out: [],
      err: ["Invalid job options: cannot use variables with JSON files."],
    });
    assert.deepEqual(await run(jobPlan, ["-json", "-var-file", "v.hcl", "bare.json"]), {
      code: 255,
      out: [],
      err: ["Invalid job options: cannot use variables with JSON files."],
    });
  });
});

describe("job plan -json-output and -t", () => {
  it("-json-output prints the plan response as JSON; the exit code still says what would change", async () => {
    const r = await run(jobPlan, ["-json-output", "bare.json"]);
    assert.equal(r.code, 1);
    assert.deepEqual(JSON.parse(r.out.join("\n")), PLAN);
    assert.deepEqual(r.err, []);
  });

  it("-t formats the plan response", async () => {
    const t = "{{.Diff.Type}} {{range $g, $u := .Annotations.DesiredTGUpdates}}{{$g}}+{{$u.Place}}{{end}}";
    assert.deepEqual(await run(jobPlan, ["-t", t, "bare.json"]), { code: 1, out: ["Added g+1"], err: [] });
  });

  it("a template error exits 255, as plan's other errors", async () => {
    const r = await run(jobPlan, ["-t", "{{.Nope}}", "bare.json"]);
    assert.equal(r.code, 255);
    assert.match(r.err[0]!, /^Error formatting the data: template: :1:2: executing "" at <\.Nope>/);
  });

  it("-json-output with -t is refused with Nomad's text before anything is read or sent", async () => {
    const before = api.requests.length;
    assert.deepEqual(await run(jobPlan, ["-json-output", "-t", "{{.}}", "missing.json"]), {
      code: 255,
      out: [],
      err: ["Both -json-output and -t formatting are not allowed"],
    });
    assert.equal(api.requests.length, before);
  });
});
