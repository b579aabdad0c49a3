import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ApiClient,
  ApiError,
  ConnectionError,
  DEFAULT_ADDRESS,
  resolveAddress,
} from "../../../src/api/index.js";
import { deadAddress, startFakeApi, type FakeApi } from "../../fakes/api.js";

let api: FakeApi;
let client: ApiClient;

before(async () => {
  api = await startFakeApi({
    "GET /v1/jobs": { json: [{ ID: "web" }] },
    "PUT /v1/jobs": { json: { EvalID: "e1", EvalCreateIndex: 3, JobModifyIndex: 3, Warnings: "", Index: 3 } },
    "GET /v1/job/web": { json: { ID: "web" } },
    "DELETE /v1/job/web": { json: { EvalID: "e2", EvalCreateIndex: 4, JobModifyIndex: 4, Index: 4 } },
    "GET /v1/job/web/allocations": { json: [{ ID: "a1" }] },
    "GET /v1/allocations": { json: [{ ID: "a1" }] },
    "GET /v1/allocation/a1": { json: { ID: "a1" } },
    "GET /v1/nodes": { json: [{ ID: "n1" }] },
    "GET /v1/node/n1": { json: { ID: "n1" } },
    "GET /v1/volumes": { json: [{ ID: "v1" }] },
    "GET /v1/volume/csi/v1": { json: { ID: "v1" } },
    "PUT /v1/volume/csi/v1": { text: "" },
    "DELETE /v1/volume/csi/v1": { text: "" },
    "PUT /v1/volume/csi/v1/create": { json: { Volumes: [{ ID: "v1", ExternalID: "x" }] } },
    "DELETE /v1/volume/csi/v1/delete": { text: "" },
    "GET /v1/plugins": { json: [{ ID: "p" }] },
    "GET /v1/plugin/csi/p": { json: { ID: "p" } },
    "GET /v1/volume/csi/per%5B0%5D": { json: { ID: "per[0]" } },
    "GET /v1/job/missing": { status: 404, text: "job not found\n" },
    "GET /v1/job/boom": { status: 500, text: "" },
    "GET /v1/job/garbled": { text: "{not json" },
  });
  client = new ApiClient({ address: api.address });
});

after(() => api.close());

const last = () => api.requests.at(-1)!;

describe("ApiClient connection settings", () => {
  it("sends the token as X-Nomad-Token and the namespace and region as query parameters", async () => {
    const c = new ApiClient({ address: api.address, namespace: "prod", token: "s3cret", region: "eu" });
    await c.jobs.list();
    assert.equal(last().url, "/v1/jobs?namespace=prod&region=eu");
    assert.equal(last().headers["x-nomad-token"], "s3cret");
    await client.jobs.list();
    assert.equal(last().url, "/v1/jobs");
    assert.equal(last().headers["x-nomad-token"], undefined);
  });
});

describe("ApiClient routes", () => {
  it("jobs: list, register, get, deregister, allocations", async () => {
    assert.deepEqual(await client.jobs.list(), [{ ID: "web" }]);
    assert.equal(last().url, "/v1/jobs");

    const job = { ID: "web" } as Parameters<ApiClient["jobs"]["register"]>[0];
    assert.equal((await client.jobs.register(job)).EvalID, "e1");
    assert.equal(last().method, "PUT");
    assert.deepEqual(JSON.parse(last().body), { Job: { ID: "web" } });
    assert.equal(last().headers["content-type"], "application/json");

    assert.equal((await client.jobs.info("web")).ID, "web");
    assert.equal((await client.jobs.deregister("web", { purge: true })).EvalID, "e2");
    assert.equal(last().url, "/v1/job/web?purge=true");
    await client.jobs.deregister("web");
    assert.equal(last().url, "/v1/job/web?purge=false");
    assert.deepEqual(await client.jobs.allocations("web"), [{ ID: "a1" }]);
  });

  it("allocations and nodes", async () => {
    assert.deepEqual(await client.allocations.list(), [{ ID: "a1" }]);
    assert.equal((await client.allocations.info("a1")).ID, "a1");
    assert.deepEqual(await client.nodes.list(), [{ ID: "n1" }]);
    assert.equal((await client.nodes.info("n1")).ID, "n1");
  });

  it("volumes: list and get with ?type=csi, register, deregister, create, delete", async () => {
    assert.deepEqual(await client.volumes.list(), [{ ID: "v1" }]);
    assert.equal(last().url, "/v1/volumes?type=csi");
    assert.equal((await client.volumes.info("v1")).ID, "v1");

    await client.volumes.register({ ID: "v1", PluginID: "p", ExternalID: "x" });
    assert.equal(last().method, "PUT");
    assert.equal(last().url, "/v1/volume/csi/v1");
    assert.deepEqual(JSON.parse(last().body), { Volumes: [{ ID: "v1", PluginID: "p", ExternalID: "x" }] });

    await client.volumes.deregister("v1", { force: true });
    assert.equal(last().method, "DELETE");
    assert.equal(last().url, "/v1/volume/csi/v1?force=true");
    await client.volumes.deregister("v1");
    assert.equal(last().url, "/v1/volume/csi/v1?force=false");

    assert.deepEqual(await client.volumes.create({ ID: "v1", PluginID: "p" }), [
      { ID: "v1", ExternalID: "x" },
    ]);
    assert.equal(last().url, "/v1/volume/csi/v1/create");
    assert.deepEqual(JSON.parse(last().body), { Volumes: [{ ID: "v1", PluginID: "p" }] });

    await client.volumes.delete("v1", { secrets: { token: "t", user: "u" } });
    assert.equal(last().method, "DELETE");
    assert.equal(last().url, "/v1/volume/csi/v1/delete");
    assert.equal(last().headers["x-nomad-csi-secrets"], "token=t,user=u");
    await client.volumes.delete("v1");
    assert.equal(last().headers["x-nomad-csi-secrets"], undefined);
  });

  it("escapes IDs in paths (per_alloc volumes are named like src[0])", async () => {
    assert.equal((await client.volumes.info("per[0]")).ID, "per[0]");
    assert.equal(last().url, "/v1/volume/csi/per%5B0%5D?claims=true&usage=true");
  });

  it("plugins: list with ?type=csi, get", async () => {
    assert.deepEqual(await client.plugins.list(), [{ ID: "p" }]);
    assert.equal(last().url, "/v1/plugins?type=csi");
    assert.equal((await client.plugins.info("p")).ID, "p");
  });

  it("sends ?namespace= when the client has one", async () => {
    await new ApiClient({ address: api.address, namespace: "prod" }).volumes.list();
    assert.equal(last().url, "/v1/volumes?type=csi&namespace=prod");
  });
});

describe("ApiClient errors", () => {
  it("a 4xx/5xx answer is an ApiError with the status and the server's text", async () => {
    await assert.rejects(client.jobs.info("missing"), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.status, 404);
      assert.equal(err.message, "job not found");
      return true;
    });
    await assert.rejects(client.jobs.info("boom"), {
      name: "ApiError",
      status: 500,
      message: "Internal Server Error",
    });
  });

  it("an answer that is not JSON is an error, not a crash", async () => {
    await assert.rejects(client.jobs.info("garbled"), /invalid JSON in answer to GET \/v1\/job\/garbled/);
  });

  it("connection refused says which address could not be reached", async () => {
    const addr = await deadAddress();
    await assert.rejects(new ApiClient({ address: addr }).jobs.list(), (err: unknown) => {
      assert.ok(err instanceof ConnectionError);
      assert.match(err.message, new RegExp(`^cannot reach berth at ${addr}: .*ECONNREFUSED`));
      return true;
    });
  });
});

describe("resolveAddress", () => {
  it("prefers the flag, then BERTH_ADDR, then the default", () => {
    assert.equal(resolveAddress("http://a:1", { BERTH_ADDR: "http://b:2" }), "http://a:1");
    assert.equal(resolveAddress(undefined, { BERTH_ADDR: "http://b:2" }), "http://b:2");
    assert.equal(resolveAddress(undefined, {}), DEFAULT_ADDRESS);
    assert.equal(DEFAULT_ADDRESS, "http://127.0.0.1:4646");
  });

  it("adds http:// to a bare host:port and drops a trailing slash", () => {
    assert.equal(resolveAddress("10.0.0.1:4646", {}), "http://10.0.0.1:4646");
    assert.equal(resolveAddress("https://x:4646/", {}), "https://x:4646");
  });
});
