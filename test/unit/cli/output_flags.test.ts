/**
 * Nomad's -t and -json on each read command that has them, through a fake API: the template sees
 * what -json prints, -json with -t is refused before any request, and a template error is one line
 * and exit 1.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { prefixListed, startFakeApi, type FakeApi } from "../../fakes/api.js";
import { captureIO } from "../../fakes/command_io.js";
import * as fx from "../../builders/api_records.js";
import type { Command, Parsed } from "../../../src/cli/command.js";
import { aclPolicy } from "../../../src/cli/commands/acl_policy.js";
import { aclBootstrap, aclToken } from "../../../src/cli/commands/acl_token.js";
import { allocStatus } from "../../../src/cli/commands/alloc_status.js";
import { deploymentList, deploymentStatus } from "../../../src/cli/commands/deployment_status.js";
import { evalList, evalStatus } from "../../../src/cli/commands/eval_status.js";
import { nodeIntroCreate } from "../../../src/cli/commands/node_intro_create.js";
import { jobHistory } from "../../../src/cli/commands/job_history.js";
import { jobInspect } from "../../../src/cli/commands/job_inspect.js";
import { jobStatus } from "../../../src/cli/commands/job_status.js";
import { namespaceList, namespaceStatus } from "../../../src/cli/commands/namespace_status.js";
import { nodeStatus } from "../../../src/cli/commands/node_status.js";
import { pluginStatus } from "../../../src/cli/commands/plugin_status.js";
import { serverMembers } from "../../../src/cli/commands/server_members.js";
import { volumeStatus } from "../../../src/cli/commands/volume_status.js";

const EVAL = {
  ID: "e1e1e1e1-0000-4000-8000-000000000001",
  Priority: 50,
  Type: "batch",
  TriggeredBy: "job-register",
  JobID: "writer",
  Namespace: "default",
  Status: "complete",
  CreateTime: 0,
  ModifyTime: 0,
};
const DEPLOYMENT = {
  ID: "d1d1d1d1-0000-4000-8000-000000000001",
  JobID: "writer",
  JobVersion: 2,
  Status: "successful",
  StatusDescription: "Deployment completed successfully",
  TaskGroups: { writer: { DesiredTotal: 1, PlacedAllocs: 1, HealthyAllocs: 1, UnhealthyAllocs: 0 } },
};
const MEMBERS = {
  ServerName: "s1",
  Members: [
    {
      Name: "s1.global",
      Addr: "127.0.0.1",
      Port: 4648,
      Status: "alive",
      ProtocolCur: 2,
      Tags: { port: "4647" },
    },
    {
      Name: "s2.global",
      Addr: "127.0.0.2",
      Port: 4648,
      Status: "alive",
      ProtocolCur: 2,
      Tags: { port: "4647" },
    },
  ],
};

let api: FakeApi;
before(async () => {
  api = await startFakeApi({
    "GET /v1/jobs": prefixListed([fx.jobStub]),
    "GET /v1/job/writer": { json: fx.job },
    "GET /v1/job/writer/allocations": { json: [fx.allocStub] },
    "GET /v1/job/writer/evaluations": { json: [] },
    "GET /v1/job/writer/versions": { json: { Versions: [fx.job, { ...fx.job, Version: 1 }] } },
    [`GET /v1/allocation/${fx.ALLOC_ID}`]: { json: fx.alloc },
    "GET /v1/allocations": { json: [fx.allocStub] },
    "GET /v1/nodes": { json: [fx.nodeStub] },
    [`GET /v1/node/${fx.NODE_ID}`]: { json: fx.node },
    "GET /v1/volumes": { json: [fx.volumeStub] },
    "GET /v1/volume/csi/demo": { json: fx.volume },
    "GET /v1/plugins": { json: [fx.pluginStub] },
    "GET /v1/plugin/csi/hostpath": { json: fx.plugin },
    "GET /v1/evaluations": prefixListed([EVAL]),
    [`GET /v1/evaluation/${EVAL.ID}`]: { json: EVAL },
    "GET /v1/deployments": prefixListed([DEPLOYMENT]),
    [`GET /v1/deployment/${DEPLOYMENT.ID}`]: { json: DEPLOYMENT },
    "GET /v1/namespaces": {
      json: [
        { Name: "default", Description: "Default" },
        { Name: "prod", Description: "" },
      ],
    },
    "GET /v1/acl/policies": { json: [{ Name: "readonly", Description: "reads" }] },
    "GET /v1/acl/tokens": {
      json: [{ AccessorID: "acc-1", Name: "ci", Type: "client", Policies: ["readonly"] }],
    },
    "GET /v1/agent/members": { json: MEMBERS },
    "GET /v1/status/leader": { json: "127.0.0.2:4647" },
    "PUT /v1/acl/token": { json: { AccessorID: "acc-2", SecretID: "sec-2", Name: "new", Type: "client" } },
    "PUT /v1/acl/bootstrap": {
      json: { AccessorID: "acc-0", SecretID: "sec-0", Name: "Bootstrap Token", Type: "management" },
    },
    "PUT /v1/acl/identity/client-introduction-token": { json: { JWT: "h.p.s" } },
  });
});
after(() => api.close());

/** Runs `cmd` with `argv`: its exit code and output lines. */
async function run<P extends Parsed>(cmd: Command<P>, argv: string[]) {
  const io = captureIO(api.address);
  const code = await cmd.run(cmd.parse(argv), io);
  return { code, out: io.out, err: io.err };
}

/** One command line: its name, how to run it, the one line -t should print. */
const c = <P extends Parsed>(name: string, cmd: Command<P>, argv: string[], expected: string) => ({
  name,
  go: () => run(cmd, argv),
  expected,
});

const CASES = [
  c("job status (list)", jobStatus, ["-t", "{{range .}}{{.ID}}:{{.Status}}{{end}}"], "writer:running"),
  c("job status <job>", jobStatus, ["-t", "{{.ID}} v{{.Version}}", "writer"], "writer v2"),
  c("job inspect", jobInspect, ["-t", "{{.ID}} {{(index .TaskGroups 0).Name}}", "writer"], "writer writer"),
  c("job history", jobHistory, ["-t", "{{range .}}{{.Version}} {{end}}", "writer"], "2 1 "),
  c("job history -version", jobHistory, ["-version", "1", "-t", "{{.Version}}", "writer"], "1"),
  c(
    "alloc status",
    allocStatus,
    ["-t", "{{.ID}} on {{.NodeID}}", fx.ALLOC_ID],
    `${fx.ALLOC_ID} on ${fx.NODE_ID}`,
  ),
  c("eval list", evalList, ["-t", "{{range .}}{{.TriggeredBy}}{{end}}"], "job-register"),
  c("eval status", evalStatus, ["-t", "{{.JobID}}/{{.Status}}", EVAL.ID], "writer/complete"),
  c("deployment list", deploymentList, ["-t", "{{range .}}{{.Status}}{{end}}"], "successful"),
  c(
    "deployment status",
    deploymentStatus,
    ["-t", "{{range $g, $s := .TaskGroups}}{{$g}}={{$s.HealthyAllocs}}{{end}}", DEPLOYMENT.ID],
    "writer=1",
  ),
  c("node status (list)", nodeStatus, ["-t", "{{range .}}{{.ID}}{{end}}"], fx.NODE_ID),
  c("node status <node>", nodeStatus, ["-t", "{{.Name}}", fx.NODE_ID], fx.node.Name),
  c("volume status", volumeStatus, ["-t", "{{.ID}} {{.PluginID}}", "demo"], `demo ${fx.volume.PluginID}`),
  c("plugin status", pluginStatus, ["-t", "{{range .}}{{.ID}}{{end}}"], fx.pluginStub.ID),
  c("namespace list", namespaceList, ["-t", '{{range .}}{{.Name}}{{print ","}}{{end}}'], "default,prod,"),
  c("namespace status", namespaceStatus, ["-t", "{{.Description}}", "def"], "Default"),
  c(
    "server members",
    serverMembers,
    ["-t", "{{range .}}{{.Name}}={{.Tags.Leader}} {{end}}"],
    "s1.global=false s2.global=true ",
  ),
];

describe("-t on the read commands", () => {
  for (const { name, go, expected } of CASES) {
    it(name, async () => {
      assert.deepEqual(await go(), { code: 0, out: [expected], err: [] });
    });
  }

  it("acl policy list and acl token list", async () => {
    assert.deepEqual(await run(aclPolicy, ["list", "-t", "{{range .}}{{.Name}}{{end}}"]), {
      code: 0,
      out: ["readonly"],
      err: [],
    });
    assert.deepEqual(await run(aclToken, ["list", "-t", "{{range .}}{{.Name}}:{{.Type}}{{end}}"]), {
      code: 0,
      out: ["ci:client"],
      err: [],
    });
  });

  it("the commands that create a token: acl token create, acl bootstrap, node intro create", async () => {
    assert.deepEqual(await run(aclToken, ["create", "-name", "new", "-t", "{{.SecretID}}"]), {
      code: 0,
      out: ["sec-2"],
      err: [],
    });
    assert.deepEqual(await run(aclBootstrap, ["-t", "{{.Type}}"]), { code: 0, out: ["management"], err: [] });
    assert.deepEqual(await run(nodeIntroCreate, ["create", "-t", "{{.JWT}}"]), {
      code: 0,
      out: ["h.p.s"],
      err: [],
    });
  });

  it("-json prints what -t sees: job inspect's is the job alone, server members' the tagged list", async () => {
    const inspect = await run(jobInspect, ["-json", "writer"]);
    assert.equal(inspect.code, 0);
    assert.equal((JSON.parse(inspect.out.join("\n")) as { ID: string }).ID, "writer");
    const members = await run(serverMembers, ["-json"]);
    const list = JSON.parse(members.out.join("\n")) as { Tags: Record<string, string> }[];
    assert.deepEqual(
      list.map((m) => m.Tags.Leader),
      ["false", "true"],
    );
  });

  it("-json with -t is Nomad's refusal, exit 1, before any request", async () => {
    for (const { name, go } of [
      c("job status", jobStatus, ["-json", "-t", "{{.}}"], ""),
      c("job inspect", jobInspect, ["-json", "-t", "{{.}}", "writer"], ""),
      c("namespace list", namespaceList, ["-json", "-t", "{{.}}"], ""),
      c("deployment list", deploymentList, ["-json", "-t", "{{.}}"], ""),
      c("job history", jobHistory, ["-json", "-t", "{{.}}", "writer"], ""),
      c("acl token list", aclToken, ["list", "-json", "-t", "{{.}}"], ""),
    ]) {
      const before = api.requests.length;
      assert.deepEqual(await go(), {
        code: 1,
        out: [],
        err: ["Both json and template formatting are not allowed"],
      });
      assert.equal(api.requests.length, before, `${name} made a request`);
    }
  });

  it("a template error is one line, exit 1", async () => {
    assert.deepEqual(await run(jobStatus, ["-t", "{{.ID}", "writer"]), {
      code: 1,
      out: [],
      err: ['Error formatting the data: template: :1: unexpected "}" in operand'],
    });
    assert.deepEqual(await run(allocStatus, ["-t", "{{.Nope}}", fx.ALLOC_ID]), {
      code: 1,
      out: [],
      err: [
        `Error formatting the data: template: :1:2: executing "" at <.Nope>: can't evaluate field Nope in type struct`,
      ],
    });
  });

  it("an empty -t is no template, as in Nomad: the text", async () => {
    const r = await run(jobStatus, ["-t", ""]);
    assert.equal(r.code, 0);
    assert.match(r.out[0]!, /^ID\s+Type\s+Priority/);
  });
});
