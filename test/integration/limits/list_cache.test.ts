/**
 * Cached list answers (in-process Server on loopback, real HTTP, in-memory SQLite, a fake node on
 * the agent RPC): the bytes of GET /v1/allocations and /v1/jobs are reused only while their table
 * is unchanged — a write is visible in the very next read, namespaces never share an answer, a
 * blocking query still waits for the change and answers it — and the answers equal what the routes
 * answered before the cache (each stub field from the stored record).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeNode } from "../../builders/node.js";
import { connectAgent, http, startServer } from "../server/fake_agent.js";

const job = (id: string, count: number, ns?: string) => ({
  Job: {
    ID: id,
    ...(ns ? { Namespace: ns } : {}),
    Type: "service",
    TaskGroups: [
      { Name: "g", Count: count, Tasks: [{ Name: "t", Driver: "exec", Config: { command: "/bin/true" } }] },
    ],
  },
});

const ids = (list: unknown) => (list as { ID: string }[]).map((j) => j.ID);

test("list answers follow every write and stay apart by namespace", async (t) => {
  const base = await startServer(t);
  const peer = await connectAgent(base);
  t.after(() => peer.close());
  await peer.call("Node.Register", { Node: makeNode("n1") });

  assert.equal((await http(base, "PUT", "/v1/jobs", job("a", 2))).status, 200);
  const first = await http(base, "GET", "/v1/allocations");
  const again = await http(base, "GET", "/v1/allocations");
  assert.equal(first.json.length, 2);
  assert.equal(again.text, first.text, "nothing changed: the same answer");
  assert.equal(again.index, first.index);

  // The next read after a write shows it, with the new index.
  assert.equal((await http(base, "PUT", "/v1/jobs", job("b", 1))).status, 200);
  const after = await http(base, "GET", "/v1/allocations");
  assert.equal(after.json.length, 3);
  assert.ok(Number(after.index) > Number(first.index));
  assert.deepEqual(ids((await http(base, "GET", "/v1/jobs")).json).sort(), ["a", "b"]);
  const stub = (after.json as Record<string, unknown>[]).find((a) => a.JobID === "b")!;
  const full = await http(base, "GET", `/v1/allocation/${String(stub.ID)}`);
  for (const k of [
    "ID",
    "Name",
    "Namespace",
    "NodeID",
    "JobID",
    "TaskGroup",
    "DesiredStatus",
    "ClientStatus",
  ]) {
    assert.deepEqual(stub[k], full.json[k], k);
  }

  // Another namespace is its own answer, and "*" is all of them.
  assert.equal((await http(base, "PUT", "/v1/namespace/other", { Name: "other" })).status, 200);
  assert.equal((await http(base, "PUT", "/v1/jobs", job("c", 1, "other"))).status, 200);
  assert.equal((await http(base, "GET", "/v1/allocations?namespace=other")).json.length, 1);
  assert.equal((await http(base, "GET", "/v1/allocations")).json.length, 3, "default namespace only");
  assert.equal((await http(base, "GET", "/v1/allocations?namespace=*")).json.length, 4);
  assert.deepEqual(ids((await http(base, "GET", "/v1/jobs?namespace=other")).json), ["c"]);

  // A blocking query at the current index waits for the next write and answers it, not the cache.
  const now = (await http(base, "GET", "/v1/allocations?namespace=*")).index;
  const blocked = http(base, "GET", `/v1/allocations?namespace=*&index=${now}&wait=30s`);
  assert.equal((await http(base, "PUT", "/v1/jobs", job("d", 1))).status, 200);
  const woke = await blocked;
  assert.ok(Number(woke.index) > Number(now));
  assert.equal(woke.json.length, 5);
});
