/**
 * Issue 30: a job whose stored record is quarantined at start (quarantine.ts) no longer leaves its
 * alloc running with nothing able to stop it. At the next start the alloc is told to stop, and the
 * job can be stopped and purged through the API (the purge drops the quarantined record). Also
 * the job shapes Nomad refuses answer 400 naming the field and store nothing. Real server, real
 * HTTP on loopback, a real SQLite file poisoned while the server is stopped, a node agent's RPC.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { makeNode } from "../../builders/node.js";
import { connectAgent, http } from "./fake_agent.js";

const job = (id: string) => ({ ID: id, TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] });

async function withServer(dir: string, fn: (base: string) => Promise<void>): Promise<void> {
  const server = new Server({
    dataDir: dir,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
  });
  await server.start();
  try {
    await fn(server.httpAddress);
  } finally {
    await server.stop();
  }
}

async function ok(base: string, method: string, route: string, body?: unknown) {
  const res = await http(base, method, route, body);
  assert.equal(res.status, 200, `${method} ${route}: ${res.text}`);
  return res;
}

/** Polls `check` until it holds (bounded generously: the leader's start-up pass is asynchronous). */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("a quarantined job's alloc is stopped, and the job can be stopped and purged", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-i30-qjob-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  let alloc = "";
  await withServer(dir, async (base) => {
    const peer = await connectAgent(base);
    try {
      await peer.call("Node.Register", { Node: makeNode("n1") });
      // Shapes Nomad refuses: 400 naming the field, nothing stored.
      const empty = await http(base, "PUT", "/v1/jobs", {
        Job: { ID: "empty", TaskGroups: [{ Name: "g" }] },
      });
      assert.equal(empty.status, 400);
      assert.match(empty.text, /Job\.TaskGroups\[0\]\.Tasks: Missing tasks for task group/);
      const dup = job("dup");
      dup.TaskGroups[0]!.Tasks.push({ Name: "t", Driver: "exec" });
      const dupRes = await http(base, "PUT", "/v1/jobs", { Job: dup });
      assert.equal(dupRes.status, 400);
      assert.match(dupRes.text, /Job\.TaskGroups\[0\]\.Tasks\[1\]\.Name: Task 2 redefines 't' from task 1/);
      for (const id of ["empty", "dup"]) assert.equal((await http(base, "GET", `/v1/job/${id}`)).status, 404);

      await ok(base, "PUT", "/v1/jobs", { Job: job("sick") });
      await ok(base, "PUT", "/v1/jobs", { Job: job("well") });
      const allocs = (await ok(base, "GET", "/v1/job/sick/allocations")).json as { ID: string }[];
      assert.equal(allocs.length, 1);
      alloc = allocs[0]!.ID;
    } finally {
      peer.close();
    }
  });

  const db = new Database(path.join(dir, "state.db"));
  try {
    db.prepare("UPDATE jobs SET json = ? WHERE id = 'sick'").run('{"ID":"sick","TaskGroups":');
  } finally {
    db.close();
  }

  await withServer(dir, async (base) => {
    const q = (await ok(base, "GET", "/v1/operator/quarantine")).json as { Table: string; Key: string }[];
    assert.deepEqual(
      q.map((e) => `${e.Table}/${e.Key}`),
      ["jobs/sick"],
    );
    const allocOf = async () =>
      (await ok(base, "GET", `/v1/allocation/${alloc}`)).json as {
        DesiredStatus: string;
        DesiredDescription: string;
      };
    await eventually("the quarantined job's alloc to be told to stop", async () => {
      return (await allocOf()).DesiredStatus === "stop";
    });
    assert.match((await allocOf()).DesiredDescription, /quarantined/);
    // The other job's alloc is untouched.
    const well = (await ok(base, "GET", "/v1/job/well/allocations")).json as { DesiredStatus: string }[];
    assert.deepEqual(
      well.map((a) => a.DesiredStatus),
      ["run"],
    );

    // Stop, then purge: both answer 200; the purge drops the quarantined record.
    await ok(base, "DELETE", "/v1/job/sick");
    assert.equal((await ok(base, "GET", "/v1/operator/quarantine")).json.length, 1);
    const purged = await ok(base, "DELETE", "/v1/job/sick?purge=true");
    assert.equal(purged.json.EvalID, "");
    assert.equal((await ok(base, "GET", "/v1/operator/quarantine")).json.length, 0);
    assert.equal((await http(base, "DELETE", "/v1/job/sick?purge=true")).status, 404);
  });
});
