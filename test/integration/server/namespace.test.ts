/**
 * Namespaces as objects on an in-process server over real HTTP on loopback, with a fake node
 * agent (real agent RPC connection) that runs plugin p1 (node and controller side, no attach):
 * - the routes: apply, read, update, list by prefix, delete; blocking on the namespaces table;
 *   answers decode strictly into Nomad's Go api.Namespace;
 * - a job or volume written into a namespace that does not exist is a 400 naming it, and changes
 *   nothing (no record, no eval, no plugin call, no create intent);
 * - a namespace with a live job, live allocs or a volume is not deleted (409, Nomad's texts);
 * - a job in namespace `a` cannot use a volume of namespace `b`: the scheduler does not place it,
 *   and a claim that names `b` for an alloc of `a` is refused.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { decodeGo } from "../../nomadapi/go_decode.js";
import { connectAgent, http, startServer, type AgentPeer, type Call } from "./fake_agent.js";

async function setup(t: { after(fn: () => unknown): void }) {
  const base = await startServer(t);
  const calls: Call[] = [];
  const peer = await connectAgent(base, {
    "ClientCSI.ControllerCreateVolume": async (p) => {
      calls.push({ method: "create", params: p });
      return { ExternalVolumeID: `ext-${p.Name}`, CapacityBytes: 1024, VolumeContext: {}, Topologies: [] };
    },
  });
  t.after(() => peer.close());
  await peer.call("Node.Register", {
    Node: makeNode("n1", {
      CSIControllerPlugins: { p1: controllerInfo("p1", false) },
      CSINodePlugins: { p1: nodePluginInfo("p1") },
    }),
  });
  return { base, peer, calls };
}

const CAPS = [{ AccessMode: "multi-node-multi-writer", AttachmentMode: "file-system" }] as const;

function volume(id: string, namespace: string) {
  return {
    ID: id,
    Namespace: namespace,
    PluginID: "p1",
    ExternalID: `ext-${id}`,
    RequestedCapabilities: CAPS,
  };
}

function job(id: string, namespace: string, source?: string) {
  return {
    Job: {
      ID: id,
      Namespace: namespace,
      TaskGroups: [
        {
          Name: "g",
          ...(source
            ? {
                Volumes: {
                  data: {
                    Type: "csi",
                    Source: source,
                    AccessMode: CAPS[0].AccessMode,
                    AttachmentMode: "file-system",
                  },
                },
              }
            : {}),
          Tasks: [
            {
              Name: "t",
              Driver: "exec",
              ...(source ? { VolumeMounts: [{ Volume: "data", Destination: "/data" }] } : {}),
            },
          ],
        },
      ],
    },
  };
}

async function ok(base: string, method: string, path: string, body?: unknown) {
  const res = await http(base, method, path, body);
  assert.equal(res.status, 200, `${method} ${path}: ${res.text}`);
  return res;
}

async function refused(base: string, method: string, path: string, body: unknown, status: number) {
  const res = await fetch(base + path, {
    method,
    headers: { "Content-Type": "application/json" },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = (await res.text()).trim();
  assert.equal(res.status, status, `${method} ${path}: ${text}`);
  return { text, code: res.headers.get("x-berth-error-code") };
}

test("namespace routes: apply, read, update, list by prefix, delete; blocking queries on the table", async (t) => {
  const { base } = await setup(t);
  const first = await ok(base, "GET", "/v1/namespaces");
  decodeGo(first.json, "[]Namespace");
  assert.deepEqual(
    (first.json as { Name: string; Description: string }[]).map((n) => [n.Name, n.Description]),
    [["default", "Default shared namespace"]],
  );

  const blocked = http(base, "GET", `/v1/namespaces?index=${first.index}&wait=30s`);
  const spec = {
    Name: "prod",
    Description: "Production",
    Meta: { owner: "ops" },
    Capabilities: { EnabledTaskDrivers: ["exec"], DisabledTaskDrivers: null },
  };
  const put = await ok(base, "PUT", "/v1/namespace/prod", spec);
  assert.equal(put.text, "", "a write answers no body, as Nomad's");
  assert.ok(Number(put.index) > Number(first.index));
  const woke = await blocked;
  assert.equal(woke.index, put.index, "the blocking query answered the write");
  assert.deepEqual(
    (woke.json as { Name: string }[]).map((n) => n.Name),
    ["default", "prod"],
  );

  const got = await ok(base, "GET", "/v1/namespace/prod");
  decodeGo(got.json, "Namespace");
  assert.deepEqual(got.json, {
    Name: "prod",
    Description: "Production",
    Quota: "",
    Capabilities: {
      EnabledTaskDrivers: ["exec"],
      DisabledTaskDrivers: [],
      EnabledNetworkModes: [],
      DisabledNetworkModes: [],
    },
    Meta: { owner: "ops" },
    CreateIndex: Number(put.index),
    ModifyIndex: Number(put.index),
  });

  // The ID-less route takes the body's name; an update replaces the record and keeps CreateIndex.
  await ok(base, "POST", "/v1/namespace", { Name: "prod", Description: "changed" });
  const updated = (await ok(base, "GET", "/v1/namespace/prod")).json;
  assert.equal(updated.Description, "changed");
  assert.deepEqual(updated.Meta, {});
  assert.equal(updated.CreateIndex, Number(put.index));
  assert.ok(updated.ModifyIndex > updated.CreateIndex);
  const again = await ok(base, "PUT", "/v1/namespace/prod", { Name: "prod", Description: "changed" });
  assert.equal(Number(again.index), updated.ModifyIndex, "an unchanged apply writes nothing");

  // A blocking read of one namespace answers its next change.
  const seen = (await ok(base, "GET", "/v1/namespace/prod")).index;
  const watch = http(base, "GET", `/v1/namespace/prod?index=${seen}&wait=30s`);
  await ok(base, "PUT", "/v1/namespace/prod", { Name: "prod", Description: "watched" });
  const changed = await watch;
  assert.equal(changed.json.Description, "watched");
  assert.ok(Number(changed.index) > Number(seen));
  await ok(base, "PUT", "/v1/namespace/prod", { Name: "prod", Description: "changed" });

  await ok(base, "PUT", "/v1/namespace/staging", { Name: "staging" });
  assert.deepEqual(
    ((await ok(base, "GET", "/v1/namespaces?prefix=pr")).json as { Name: string }[]).map((n) => n.Name),
    ["prod"],
  );

  // Refusals: Nomad's texts, a 4xx, and nothing written.
  const before = (await ok(base, "GET", "/v1/namespaces")).index;
  assert.deepEqual(await refused(base, "PUT", "/v1/namespace/other", { Name: "prod" }, 400), {
    text: "Namespace name does not match request path",
    code: "ERR_VALIDATION",
  });
  const badName = await refused(base, "PUT", "/v1/namespace/bad_name", { Name: "bad_name" }, 400);
  assert.equal(
    badName.text,
    'Invalid namespace "bad_name": invalid name "bad_name". Must match regex ^[a-zA-Z0-9-]{1,128}$',
  );
  assert.match((await refused(base, "PUT", "/v1/namespace", "{", 400)).text, /^body: invalid JSON/);
  assert.deepEqual(await refused(base, "GET", "/v1/namespace/nope", undefined, 404), {
    text: "Namespace not found",
    code: "ERR_NOT_FOUND",
  });
  assert.equal((await refused(base, "GET", "/v1/namespace", undefined, 400)).text, "Missing Namespace Name");
  assert.deepEqual(await refused(base, "DELETE", "/v1/namespace/default", undefined, 400), {
    text: "can not delete default namespace",
    code: "ERR_VALIDATION",
  });
  assert.equal(
    (await refused(base, "DELETE", "/v1/namespace/nope", undefined, 404)).text,
    'namespace "nope" not found',
  );
  assert.equal((await ok(base, "GET", "/v1/namespaces")).index, before, "no refusal wrote anything");

  const deleted = await ok(base, "DELETE", "/v1/namespace/staging");
  assert.equal(deleted.text, "");
  assert.ok(Number(deleted.index) > Number(before));
  await refused(base, "GET", "/v1/namespace/staging", undefined, 404);
  assert.deepEqual(
    ((await ok(base, "GET", "/v1/namespaces")).json as { Name: string }[]).map((n) => n.Name),
    ["default", "prod"],
  );
});

/** What a refused write must leave as it was: every list across namespaces, with its index. */
async function snapshot(base: string) {
  const out: string[] = [];
  for (const path of [
    "/v1/jobs?namespace=*",
    "/v1/evaluations?namespace=*",
    "/v1/allocations?namespace=*",
    "/v1/volumes?type=csi&namespace=*",
    "/v1/namespaces",
  ]) {
    const res = await ok(base, "GET", path);
    out.push(`${path} ${res.index} ${res.text}`);
  }
  return out;
}

test("a job or volume written into a namespace that does not exist is refused and changes nothing", async (t) => {
  const { base, calls } = await setup(t);
  const before = await snapshot(base);

  const expectJob = { text: 'job "web" is in nonexistent namespace "ghost"', code: "ERR_VALIDATION" };
  assert.deepEqual(await refused(base, "PUT", "/v1/jobs", job("web", "ghost"), 400), expectJob);
  // Nomad's Go client sends "Namespace": "": the request's ?namespace= fills it.
  assert.deepEqual(await refused(base, "PUT", "/v1/jobs?namespace=ghost", job("web", ""), 400), expectJob);
  assert.deepEqual(
    await refused(
      base,
      "PUT",
      "/v1/volume/csi/v1?namespace=ghost",
      { Volumes: [volume("v1", "ghost")] },
      400,
    ),
    {
      text: "volume v1 is in nonexistent namespace ghost",
      code: "ERR_VALIDATION",
    },
  );
  // The plan and the validation run the same admission check, as Nomad's do.
  assert.deepEqual(
    await refused(base, "PUT", "/v1/job/web/plan?namespace=ghost", job("web", ""), 400),
    expectJob,
  );
  const validated = await ok(base, "PUT", "/v1/validate/job?namespace=ghost", job("web", ""));
  assert.deepEqual(validated.json.ValidationErrors, [expectJob.text]);
  const create = { Volumes: [{ ...volume("v2", "ghost"), ExternalID: "" }] };
  assert.equal(
    (await refused(base, "PUT", "/v1/volume/csi/v2/create?namespace=ghost", create, 400)).text,
    "volume v2 is in nonexistent namespace ghost",
  );
  assert.deepEqual(calls, [], "no plugin call for a refused create");
  assert.deepEqual(await snapshot(base), before, "nothing changed");
  assert.deepEqual((await ok(base, "GET", "/v1/volumes/orphans?type=csi")).json, [], "no create intent left");

  // The same writes succeed once the namespace exists: the refusal was the namespace's.
  await ok(base, "PUT", "/v1/namespace/ghost", { Name: "ghost" });
  await ok(base, "PUT", "/v1/jobs", job("web", "ghost"));
  await ok(base, "PUT", "/v1/volume/csi/v1?namespace=ghost", { Volumes: [volume("v1", "ghost")] });
  await ok(base, "PUT", "/v1/volume/csi/v2/create?namespace=ghost", create);
  assert.equal(calls.length, 1);
  assert.deepEqual(
    ((await ok(base, "GET", "/v1/volumes?type=csi&namespace=ghost")).json as { ID: string }[]).map(
      (v) => v.ID,
    ),
    ["v1", "v2"],
  );
});

test("a namespace is not deleted while a live job, live allocs or a volume are in it", async (t) => {
  const { base } = await setup(t);
  await ok(base, "PUT", "/v1/namespace/a", { Name: "a" });
  await ok(base, "PUT", "/v1/jobs", job("web", "a"));
  assert.equal((await ok(base, "GET", "/v1/job/web/allocations?namespace=a")).json.length, 1, "placed on n1");

  // (The deployment watcher writes evals meanwhile: only the namespaces table is compared here.)
  const before = (await ok(base, "GET", "/v1/namespaces")).text;
  const beforeIndex = (await ok(base, "GET", "/v1/namespaces")).index;
  assert.deepEqual(await refused(base, "DELETE", "/v1/namespace/a", undefined, 409), {
    text:
      'namespace "a" has non-terminal jobs in regions: [global]; ' +
      'namespace "a" has non-terminal allocations in regions: [global]',
    code: "ERR_CONFLICT",
  });
  const after = await ok(base, "GET", "/v1/namespaces");
  assert.deepEqual([after.text, after.index], [before, beforeIndex], "a refused delete changes nothing");

  // The job purged (its alloc stopped before it ran) and a volume registered: the volume holds it.
  await ok(base, "PUT", "/v1/volume/csi/v1?namespace=a", { Volumes: [volume("v1", "a")] });
  await ok(base, "DELETE", "/v1/job/web?namespace=a&purge=true");
  assert.equal(
    (await refused(base, "DELETE", "/v1/namespace/a", undefined, 409)).text,
    'namespace "a" has volumes associated with it in regions: [global]',
  );
  await ok(base, "GET", "/v1/namespace/a");

  await ok(base, "DELETE", "/v1/volume/csi/v1?namespace=a");
  await ok(base, "DELETE", "/v1/namespace/a");
  await refused(base, "GET", "/v1/namespace/a", undefined, 404);
  assert.equal(
    (await refused(base, "PUT", "/v1/jobs", job("web", "a"), 400)).text,
    'job "web" is in nonexistent namespace "a"',
  );
});

interface AllocStub {
  ID: string;
  NodeID: string;
}

test("a job in namespace a cannot claim a volume of namespace b", async (t) => {
  const { base, peer } = await setup(t);
  for (const ns of ["a", "b"]) await ok(base, "PUT", `/v1/namespace/${ns}`, { Name: ns });
  await ok(base, "PUT", "/v1/volume/csi/shared?namespace=b", { Volumes: [volume("shared", "b")] });

  // The scheduler looks the source up in the job's own namespace: nothing to place it with.
  await ok(base, "PUT", "/v1/jobs", job("thief", "a", "shared"));
  assert.deepEqual((await ok(base, "GET", "/v1/job/thief/allocations?namespace=a")).json, []);
  // The same spec in b is placed: the volume itself is usable.
  await ok(base, "PUT", "/v1/jobs", job("owner", "b", "shared"));
  const [owner] = (await ok(base, "GET", "/v1/job/owner/allocations?namespace=b")).json as AllocStub[];
  assert.ok(owner, "the job of b is placed");

  // A node naming namespace b in a claim for an alloc of a is refused; b's own alloc claims.
  await ok(base, "PUT", "/v1/jobs", job("plain", "a"));
  const [plain] = (await ok(base, "GET", "/v1/job/plain/allocations?namespace=a")).json as AllocStub[];
  const claim = (p: AgentPeer, allocId: string) =>
    p.call("CSIVolume.Claim", {
      VolumeID: "shared",
      Namespace: "b",
      AllocationID: allocId,
      NodeID: "n1",
      Mode: "write",
      AccessMode: CAPS[0].AccessMode,
      AttachmentMode: "file-system",
    });
  await assert.rejects(claim(peer, plain!.ID), (err: { code?: string; message?: string }) => {
    assert.equal(err.code, "ERR_PERMISSION_DENIED");
    assert.match(err.message ?? "", /in namespace "a" cannot claim volume "shared" of namespace "b"/);
    return true;
  });
  const held = (await ok(base, "GET", "/v1/volume/csi/shared?namespace=b&claims=true")).json;
  assert.deepEqual(Object.keys(held.WriteAllocs ?? {}), [], "no claim recorded");

  await claim(peer, owner.ID);
  const after = (await ok(base, "GET", "/v1/volume/csi/shared?namespace=b&claims=true")).json;
  assert.deepEqual(Object.keys(after.WriteAllocs), [owner.ID]);
});
