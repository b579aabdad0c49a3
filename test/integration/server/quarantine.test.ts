/**
 * A poisoned state file never makes a crash loop (issue 10): records written straight into the
 * SQLite file of a stopped server — a job with Count 1e300, a job whose JSON does not parse (with
 * a secret in it), a volume with an impossible capacity — are quarantined when the server starts
 * again. The server starts, serves and schedules the good records (a volume claim and a placed
 * alloc survive, a new job is placed), lists the quarantined records with their errors through
 * the API and the CLI (never their content), starts cleanly a second time, and drops an entry on
 * DELETE. Real server, real HTTP on loopback, real SQLite file, a node agent's RPC connection.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { ApiClient } from "../../../src/api/index.js";
import { runCli } from "../../../src/cli/dispatch.js";
import type { Logger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http, type AgentPeer } from "./fake_agent.js";

const SECRET = "hunter2-poisoned";

function recordingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (m: string, f?: object) =>
    lines.push(`${level} ${m} ${JSON.stringify(f ?? {})}`);
  const log = {
    lines,
    debug: () => undefined,
    info: at("INFO"),
    warn: at("WARN"),
    error: at("ERROR"),
    child: () => log,
  };
  return log;
}

const capabilities = [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }];

const webJob = {
  ID: "web",
  TaskGroups: [
    {
      Name: "g",
      Volumes: {
        data: {
          Type: "csi",
          Source: "vol1",
          AccessMode: "single-node-writer",
          AttachmentMode: "file-system",
        },
      },
      Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
    },
  ],
};

const plainJob = (id: string) => ({
  ID: id,
  TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }],
});

async function withServer<T>(
  dir: string,
  log: Logger,
  fn: (base: string, server: Server) => Promise<T>,
): Promise<T> {
  const server = new Server({ dataDir: dir, httpAddr: "127.0.0.1:0", log, heartbeatTtlMs: 60_000 });
  await server.start();
  try {
    return await fn(server.httpAddress, server);
  } finally {
    await server.stop();
  }
}

async function nodeAgent(base: string): Promise<AgentPeer> {
  const peer = await connectAgent(base);
  await peer.call("Node.Register", {
    Node: makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }),
  });
  return peer;
}

async function ok(base: string, method: string, route: string, body?: unknown) {
  const res = await http(base, method, route, body);
  assert.equal(res.status, 200, `${method} ${route}: ${res.text}`);
  return res;
}

/** One field of every object of a JSON list answer. */
function field(res: { json: unknown }, name: string): string[] {
  return (res.json as Record<string, string>[]).map((r) => r[name] ?? "");
}

/** The quarantine as the CLI prints it, through the real API client. */
async function cli(base: string, ...args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(["operator", "quarantine", ...args], {
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    env: {},
    io: (connection) => ({
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
      api: new ApiClient(connection),
      readFile: () => Promise.reject(new Error("no files")),
      now: () => Date.now(),
    }),
  });
  return { code, out, err };
}

test("poisoned records in the state file are quarantined: the server starts, serves and schedules the rest", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-quarantine-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  // 1. A server with a node, a claimed volume and a placed job, then stopped.
  let webAlloc = "";
  await withServer(dir, recordingLog(), async (base) => {
    const peer = await nodeAgent(base);
    try {
      for (const id of ["vol1", "big"]) {
        await ok(base, "PUT", `/v1/volume/csi/${id}`, {
          Volumes: [
            {
              ID: id,
              PluginID: "p1",
              ExternalID: `ext-${id}`,
              RequestedCapabilities: capabilities,
              Secrets: { password: SECRET },
            },
          ],
        });
      }
      await ok(base, "PUT", "/v1/jobs", { Job: webJob });
      await ok(base, "PUT", "/v1/jobs", { Job: plainJob("batch1") });
      webAlloc = (await ok(base, "GET", "/v1/job/web/allocations")).json[0].ID as string;
      await peer.call("CSIVolume.Claim", {
        VolumeID: "vol1",
        Namespace: "default",
        AllocationID: webAlloc,
        NodeID: "n1",
        Mode: "write",
        AccessMode: "single-node-writer",
        AttachmentMode: "file-system",
      });
    } finally {
      peer.close();
    }
  });

  // 2. Poison written straight into the file, as an older berth, a hand or a bug could.
  const db = new Database(path.join(dir, "state.db"));
  try {
    const web = JSON.parse(
      (db.prepare("SELECT json FROM jobs WHERE id = 'web'").get() as { json: string }).json,
    );
    const poison = {
      ...web,
      ID: "poison",
      Name: "poison",
      TaskGroups: [{ ...web.TaskGroups[0], Count: 1e300 }],
    };
    const put = db.prepare("INSERT INTO jobs (namespace, id, json) VALUES ('default', ?, ?)");
    put.run("poison", JSON.stringify(poison));
    put.run("garbled", `{"ID":"garbled","Secrets":{"password":"${SECRET}"`);
    const big = JSON.parse(
      (db.prepare("SELECT json FROM volumes WHERE id = 'big'").get() as { json: string }).json,
    );
    db.prepare("UPDATE volumes SET json = ? WHERE id = 'big'").run(
      JSON.stringify({ ...big, Capacity: 1e300 }),
    );
  } finally {
    db.close();
  }

  // 3. The server starts without them and says so, once per record, without their content.
  const log = recordingLog();
  await withServer(dir, log, async (base) => {
    const jobs = await ok(base, "GET", "/v1/jobs");
    assert.deepEqual(field(jobs, "ID").sort(), ["batch1", "web"]);
    assert.equal((await http(base, "GET", "/v1/job/poison")).status, 404);
    assert.deepEqual(field(await ok(base, "GET", "/v1/volumes?type=csi"), "ID"), ["vol1"]);

    const q = await ok(base, "GET", "/v1/operator/quarantine");
    const entries = q.json as {
      Table: string;
      Namespace: string;
      Key: string;
      Error: string;
      QuarantineTime: number;
    }[];
    assert.deepEqual(entries.map((e) => `${e.Table}/${e.Namespace}/${e.Key}`).sort(), [
      "jobs/default/garbled",
      "jobs/default/poison",
      "volumes/default/big",
    ]);
    const errorOf = (key: string) => entries.find((e) => e.Key === key)?.Error ?? "";
    assert.equal(errorOf("poison"), "Job.TaskGroups[0].Count: must be at most 10000");
    assert.match(errorOf("garbled"), /^stored JSON does not parse/);
    assert.match(errorOf("big"), /^Volume\.Capacity: must be at most/);
    assert.ok(entries.every((e) => e.QuarantineTime > 0));
    assert.ok(!q.text.includes(SECRET), "no secret in the API");
    const errors = log.lines.filter((l) => l.startsWith("ERROR stored record cannot be loaded"));
    assert.equal(errors.length, 3, log.lines.join("\n"));
    assert.match(
      log.lines.join("\n"),
      /WARN state store opened with quarantined records .*"quarantined_now":3/,
    );
    assert.ok(!log.lines.join("\n").includes(SECRET), "no secret in the log");

    // The good records are intact: the claim, the placed alloc; and scheduling goes on.
    const vol = await ok(base, "GET", "/v1/volume/csi/vol1?claims=true");
    assert.deepEqual(Object.keys(vol.json.WriteAllocs), [webAlloc]);
    assert.deepEqual(field(await ok(base, "GET", "/v1/job/web/allocations"), "ID"), [webAlloc]);
    const peer = await nodeAgent(base);
    try {
      await ok(base, "PUT", "/v1/jobs", { Job: plainJob("fresh") });
      const fresh = await ok(base, "GET", "/v1/job/fresh/allocations");
      assert.equal(fresh.json.length, 1);
      assert.equal(fresh.json[0].NodeID, "n1");
    } finally {
      peer.close();
    }

    const listed = await cli(base, "list", `-address=${base}`);
    assert.equal(listed.code, 0, listed.err.join("\n"));
    assert.match(listed.out[0] ?? "", /^Table\s+Namespace\s+Key\s+Quarantined\s+Error$/);
    assert.ok(listed.out.some((l) => /^jobs\s+default\s+poison\s+.*Count: must be at most 10000$/.test(l)));
    assert.ok(!listed.out.join("\n").includes(SECRET));
  });

  // 4. A second start is clean (nothing new quarantined, the entries kept); DELETE drops one.
  const log2 = recordingLog();
  await withServer(dir, log2, async (base) => {
    assert.equal(log2.lines.filter((l) => l.startsWith("ERROR")).length, 0, log2.lines.join("\n"));
    assert.match(
      log2.lines.join("\n"),
      /INFO state store opened .*"quarantined_now":0,"quarantined_total":3/,
    );
    assert.equal((await ok(base, "GET", "/v1/operator/quarantine")).json.length, 3);

    await ok(base, "DELETE", "/v1/operator/quarantine/jobs/poison?namespace=default");
    const again = await http(base, "DELETE", "/v1/operator/quarantine/jobs/poison");
    assert.equal(again.status, 404);
    assert.equal(again.text.trim(), 'quarantined jobs record "default/poison" not found');
    const badTable = await http(base, "DELETE", "/v1/operator/quarantine/tables/poison");
    assert.equal(badTable.status, 400);
    assert.match(badTable.text, /^table: unknown table "tables"/);
    const wrongNs = await http(base, "DELETE", "/v1/operator/quarantine/volumes/big?namespace=other");
    assert.equal(wrongNs.status, 404);

    const deleted = await cli(base, "delete", `-address=${base}`, "volumes", "big");
    assert.equal(deleted.code, 0, deleted.err.join("\n"));
    assert.deepEqual(field(await ok(base, "GET", "/v1/operator/quarantine"), "Key"), ["garbled"]);
    const missing = await cli(base, "delete", `-address=${base}`, "volumes", "big");
    assert.equal(missing.code, 1);
    assert.match(missing.err[0] ?? "", /404/);
  });
});
