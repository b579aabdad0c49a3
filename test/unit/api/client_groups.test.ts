/**
 * Every route of the composed API client, one row per call: the request it sends (method, path
 * and query, JSON body, CSI secrets header). The rows were recorded from the ApiClient before it
 * was split into route groups (issue 31), so a group method that drifts from its route fails here.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { ApiClient, type Job } from "../../../src/api/index.js";
import { startFakeApi, type FakeApi } from "../../fakes/api.js";

/** A job only as far as the client reads it (the ID in plan's path); the server checks the rest. */
const job = { ID: "web", Name: "web" } as Job;

type Row = [call: (c: ApiClient) => Promise<unknown>, request: string, body: string, secrets: string];

const ROUTES: Row[] = [
  [
    (c) => c.jobs.list({ prefix: "w", filter: "x==1", perPage: 2, nextToken: "t", reverse: true }),
    "GET /v1/jobs?prefix=w&filter=x%3D%3D1&per_page=2&next_token=t&reverse=true&namespace=ns1",
    "",
    "",
  ],
  [
    (c) => c.jobs.register(job, { checkIndex: 4 }),
    "PUT /v1/jobs?namespace=ns1",
    '{"Job":{"ID":"web","Name":"web"},"EnforceIndex":true,"JobModifyIndex":4}',
    "",
  ],
  [(c) => c.jobs.register(job), "PUT /v1/jobs?namespace=ns1", '{"Job":{"ID":"web","Name":"web"}}', ""],
  [
    (c) => c.jobs.plan(job, { diff: false }),
    "PUT /v1/job/web/plan?namespace=ns1",
    '{"Job":{"ID":"web","Name":"web"},"Diff":false}',
    "",
  ],
  [
    (c) => c.jobs.versions("web", { diffs: true }),
    "GET /v1/job/web/versions?diffs=true&namespace=ns1",
    "",
    "",
  ],
  [
    (c) => c.jobs.parseHcl('job "web" {}', { canonicalize: true }),
    "PUT /v1/jobs/parse?namespace=ns1",
    '{"JobHCL":"job \\"web\\" {}","Variables":"","Canonicalize":true}',
    "",
  ],
  [
    (c) => c.jobs.validate(job),
    "PUT /v1/validate/job?namespace=ns1",
    '{"Job":{"ID":"web","Name":"web"}}',
    "",
  ],
  [(c) => c.jobs.info("w/b"), "GET /v1/job/w%2Fb?namespace=ns1", "", ""],
  [(c) => c.jobs.deregister("web", { purge: true }), "DELETE /v1/job/web?purge=true&namespace=ns1", "", ""],
  [
    (c) =>
      c.jobs.dispatch("web", { meta: { a: "b" }, payload: new Uint8Array([1, 2]), idempotencyToken: "i" }),
    "PUT /v1/job/web/dispatch?namespace=ns1",
    '{"JobID":"web","Meta":{"a":"b"},"Payload":"AQI=","IdempotencyToken":"i"}',
    "",
  ],
  [(c) => c.jobs.periodicForce("web"), "PUT /v1/job/web/periodic/force?namespace=ns1", "", ""],
  [(c) => c.jobs.allocations("web"), "GET /v1/job/web/allocations?namespace=ns1", "", ""],
  [(c) => c.jobs.evaluations("web"), "GET /v1/job/web/evaluations?namespace=ns1", "", ""],
  [(c) => c.jobs.deployments("web"), "GET /v1/job/web/deployments?namespace=ns1", "", ""],
  [(c) => c.jobs.latestDeployment("web"), "GET /v1/job/web/deployment?namespace=ns1", "", ""],
  [
    (c) => c.jobs.revert("web", 3, 2),
    "PUT /v1/job/web/revert?namespace=ns1",
    '{"JobID":"web","JobVersion":3,"EnforcePriorVersion":2}',
    "",
  ],
  [
    (c) => c.jobs.revert("web", 3),
    "PUT /v1/job/web/revert?namespace=ns1",
    '{"JobID":"web","JobVersion":3}',
    "",
  ],
  [
    (c) => c.jobs.scale("web", "g", 3, "m"),
    "PUT /v1/job/web/scale?namespace=ns1",
    '{"Count":3,"Target":{"Job":"web","Group":"g"},"Message":"m"}',
    "",
  ],
  [(c) => c.jobs.scaleStatus("web"), "GET /v1/job/web/scale?namespace=ns1", "", ""],
  [
    (c) => c.evaluations.list({ prefix: "p", job: "j", status: "s" }),
    "GET /v1/evaluations?prefix=p&job=j&status=s&namespace=ns1",
    "",
    "",
  ],
  [(c) => c.evaluations.info("e"), "GET /v1/evaluation/e?namespace=ns1", "", ""],
  [(c) => c.evaluations.allocations("e"), "GET /v1/evaluation/e/allocations?namespace=ns1", "", ""],
  [(c) => c.deployments.list({ prefix: "d" }), "GET /v1/deployments?prefix=d&namespace=ns1", "", ""],
  [(c) => c.deployments.info("d"), "GET /v1/deployment/d?namespace=ns1", "", ""],
  [(c) => c.deployments.allocations("d"), "GET /v1/deployment/allocations/d?namespace=ns1", "", ""],
  [
    (c) => c.deployments.pause("d", true),
    "PUT /v1/deployment/pause/d?namespace=ns1",
    '{"DeploymentID":"d","Pause":true}',
    "",
  ],
  [
    (c) => c.deployments.promote("d", ["g"]),
    "PUT /v1/deployment/promote/d?namespace=ns1",
    '{"DeploymentID":"d","Groups":["g"]}',
    "",
  ],
  [
    (c) => c.deployments.promote("d"),
    "PUT /v1/deployment/promote/d?namespace=ns1",
    '{"DeploymentID":"d","All":true}',
    "",
  ],
  [(c) => c.deployments.fail("d"), "PUT /v1/deployment/fail/d?namespace=ns1", '{"DeploymentID":"d"}', ""],
  [(c) => c.allocations.list({ prefix: "a" }), "GET /v1/allocations?prefix=a&namespace=ns1", "", ""],
  [(c) => c.allocations.info("a"), "GET /v1/allocation/a?namespace=ns1", "", ""],
  [(c) => c.allocations.stop("a"), "PUT /v1/allocation/a/stop?namespace=ns1", "", ""],
  [(c) => c.allocations.stats("a"), "GET /v1/client/allocation/a/stats?namespace=ns1", "", ""],
  [
    (c) => c.allocations.signal("a", "t", "SIGHUP"),
    "PUT /v1/client/allocation/a/signal?namespace=ns1",
    '{"Task":"t","Signal":"SIGHUP"}',
    "",
  ],
  [
    (c) => c.allocations.restart("a", "t", true),
    "PUT /v1/client/allocation/a/restart?namespace=ns1",
    '{"TaskName":"t","AllTasks":true}',
    "",
  ],
  [(c) => c.nodes.list({ prefix: "n" }), "GET /v1/nodes?prefix=n&namespace=ns1", "", ""],
  [(c) => c.nodes.info("n"), "GET /v1/node/n?namespace=ns1", "", ""],
  [(c) => c.nodes.allocations("n"), "GET /v1/node/n/allocations?namespace=ns1", "", ""],
  [
    (c) =>
      c.nodes.updateDrain(
        "n",
        { Deadline: 1, IgnoreSystemJobs: false },
        { markEligible: true, meta: { a: "b" } },
      ),
    "POST /v1/node/n/drain?namespace=ns1",
    '{"DrainSpec":{"Deadline":1,"IgnoreSystemJobs":false},"MarkEligible":true,"Meta":{"a":"b"}}',
    "",
  ],
  [
    (c) => c.nodes.updateDrain("n", null),
    "POST /v1/node/n/drain?namespace=ns1",
    '{"DrainSpec":null,"MarkEligible":false,"Meta":null}',
    "",
  ],
  [
    (c) => c.nodes.toggleEligibility("n", false),
    "POST /v1/node/n/eligibility?namespace=ns1",
    '{"Eligibility":"ineligible"}',
    "",
  ],
  [
    (c) => c.acl.createClientIntroductionToken({ NodeName: "n", NodePool: "p", TTL: 0 }),
    "PUT /v1/acl/identity/client-introduction-token?namespace=ns1",
    '{"NodeName":"n","NodePool":"p","TTL":0}',
    "",
  ],
  [(c) => c.namespaces.list({ prefix: "x" }), "GET /v1/namespaces?prefix=x&namespace=ns1", "", ""],
  [(c) => c.namespaces.info("x"), "GET /v1/namespace/x?namespace=ns1", "", ""],
  [
    (c) => c.namespaces.register({ Name: "x", Description: "d" }),
    "PUT /v1/namespace?namespace=ns1",
    '{"Name":"x","Description":"d"}',
    "",
  ],
  [(c) => c.namespaces.delete("x"), "DELETE /v1/namespace/x?namespace=ns1", "", ""],
  [
    (c) => c.volumes.list({ nodeId: "n", pluginId: "p", prefix: "v", perPage: 3 }),
    "GET /v1/volumes?type=csi&node_id=n&plugin_id=p&prefix=v&per_page=3&namespace=ns1",
    "",
    "",
  ],
  [(c) => c.volumes.info("v[1]"), "GET /v1/volume/csi/v%5B1%5D?claims=true&usage=true&namespace=ns1", "", ""],
  [
    (c) => c.volumes.register({ ID: "v[1]", PluginID: "p", ExternalID: "x" }),
    "PUT /v1/volume/csi/v%5B1%5D?namespace=ns1",
    '{"Volumes":[{"ID":"v[1]","PluginID":"p","ExternalID":"x"}]}',
    "",
  ],
  [
    (c) => c.volumes.deregister("v", { force: true }),
    "DELETE /v1/volume/csi/v?force=true&namespace=ns1",
    "",
    "",
  ],
  [
    (c) => c.volumes.create({ ID: "v[1]", PluginID: "p", ExternalID: "x" }),
    "PUT /v1/volume/csi/v%5B1%5D/create?namespace=ns1",
    '{"Volumes":[{"ID":"v[1]","PluginID":"p","ExternalID":"x"}]}',
    "",
  ],
  [
    (c) => c.volumes.delete("v", { secrets: { a: "1", b: "2" } }),
    "DELETE /v1/volume/csi/v/delete?namespace=ns1",
    "",
    "a=1,b=2",
  ],
  [(c) => c.volumes.detach("v", "n"), "DELETE /v1/volume/csi/v/detach?node=n&namespace=ns1", "", ""],
  [
    (c) => c.volumes.listExternal("p", { perPage: 2, nextToken: "t" }),
    "GET /v1/volumes/external?plugin_id=p&per_page=2&next_token=t&namespace=ns1",
    "",
    "",
  ],
  [
    (c) => c.volumes.listOrphans({ pluginId: "p" }),
    "GET /v1/volumes/orphans?type=csi&plugin_id=p&namespace=ns1",
    "",
    "",
  ],
  [(c) => c.volumes.adoptOrphan("v"), "PUT /v1/volume/csi/v/adopt?namespace=ns1", "", ""],
  [
    (c) => c.volumes.deleteOrphan("v", { secrets: { a: "1", b: "2" } }),
    "DELETE /v1/volume/csi/v/orphan?namespace=ns1",
    "",
    "a=1,b=2",
  ],
  [
    (c) => c.volumes.createSnapshot("v", "s", { secrets: { a: "1", b: "2" }, parameters: { k: "v" } }),
    "PUT /v1/volumes/snapshot?namespace=ns1",
    '{"Snapshots":[{"SourceVolumeID":"v","Name":"s","Secrets":{"a":"1","b":"2"},"Parameters":{"k":"v"}}]}',
    "",
  ],
  [
    (c) => c.volumes.deleteSnapshot("p", "s", { secrets: { a: "1", b: "2" } }),
    "DELETE /v1/volumes/snapshot?plugin_id=p&snapshot_id=s&namespace=ns1",
    "",
    "a=1,b=2",
  ],
  [
    (c) => c.volumes.listSnapshots("p", { secrets: { a: "1", b: "2" }, perPage: 2, nextToken: "t" }),
    "GET /v1/volumes/snapshot?plugin_id=p&per_page=2&next_token=t&namespace=ns1",
    "",
    "a=1,b=2",
  ],
  [(c) => c.plugins.list({ prefix: "p" }), "GET /v1/plugins?type=csi&prefix=p&namespace=ns1", "", ""],
  [(c) => c.plugins.info("p"), "GET /v1/plugin/csi/p?capacity=true&namespace=ns1", "", ""],
  [(c) => c.operator.quarantine(), "GET /v1/operator/quarantine?namespace=ns1", "", ""],
  [
    (c) => c.operator.deleteQuarantined("jobs", "k", "ns"),
    "DELETE /v1/operator/quarantine/jobs/k?namespace=ns1",
    "",
    "",
  ],
  [(c) => c.acl.bootstrap("s"), "PUT /v1/acl/bootstrap?namespace=ns1", '{"BootstrapSecret":"s"}', ""],
  [(c) => c.acl.policies(), "GET /v1/acl/policies?namespace=ns1", "", ""],
  [(c) => c.acl.policy("p"), "GET /v1/acl/policy/p?namespace=ns1", "", ""],
  [
    (c) => c.acl.upsertPolicy({ Name: "p", Description: "d", Rules: "r" }),
    "PUT /v1/acl/policy/p?namespace=ns1",
    '{"Name":"p","Description":"d","Rules":"r"}',
    "",
  ],
  [(c) => c.acl.deletePolicy("p"), "DELETE /v1/acl/policy/p?namespace=ns1", "", ""],
  [(c) => c.acl.tokens(), "GET /v1/acl/tokens?namespace=ns1", "", ""],
  [
    (c) => c.acl.createToken({ Name: "t", Type: "client", Policies: ["p"] }),
    "PUT /v1/acl/token?namespace=ns1",
    '{"Name":"t","Type":"client","Policies":["p"]}',
    "",
  ],
  [
    (c) => c.acl.updateToken({ AccessorID: "a", Name: "t", Type: "client", Policies: [] }),
    "PUT /v1/acl/token/a?namespace=ns1",
    '{"AccessorID":"a","Name":"t","Type":"client","Policies":[]}',
    "",
  ],
  [(c) => c.acl.token("a"), "GET /v1/acl/token/a?namespace=ns1", "", ""],
  [(c) => c.acl.tokenSelf(), "GET /v1/acl/token/self?namespace=ns1", "", ""],
  [(c) => c.acl.deleteToken("a"), "DELETE /v1/acl/token/a?namespace=ns1", "", ""],
  [(c) => c.status.leader(), "GET /v1/status/leader?namespace=ns1", "", ""],
  [(c) => c.status.peers(), "GET /v1/status/peers?namespace=ns1", "", ""],
  [(c) => c.agent.members(), "GET /v1/agent/members?namespace=ns1", "", ""],
];

let api: FakeApi;
let client: ApiClient;

before(async () => {
  api = await startFakeApi({});
  client = new ApiClient({ address: api.address, namespace: "ns1", token: "tok" });
});

after(() => api.close());

describe("ApiClient route groups", () => {
  it("each group method sends its route's request", async () => {
    for (const [call, request, body, secrets] of ROUTES) {
      const before = api.requests.length;
      // The fake answers 404 to every route: only the request matters here.
      await call(client).catch(() => undefined);
      assert.equal(api.requests.length, before + 1, `${request}: one request`);
      const sent = api.requests.at(-1)!;
      assert.equal(`${sent.method} ${sent.url}`, request);
      assert.equal(sent.body, body, `${request}: body`);
      assert.equal(sent.headers["x-nomad-csi-secrets"] ?? "", secrets, `${request}: secrets header`);
      assert.equal(sent.headers["x-nomad-token"], "tok", `${request}: token`);
    }
  });

  it("the groups share one transport: the client's address and settings", () => {
    assert.equal(client.address, api.address);
    assert.equal(client.transport.address, api.address);
  });
});
