/**
 * The store's check at open (src/server/state/quarantine/quarantine.ts): records it wrote itself all load;
 * records poisoned behind its back (by hand, an older berth, a bug) are moved to the quarantine
 * with an error naming the field, gone from the live tables and their derived rows, and the plugin
 * records they fed are rebuilt — all on a real SQLite file edited with better-sqlite3.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import Database from "better-sqlite3";
import type { Logger } from "../../../src/internal/log.js";
import { nullLogger } from "../../../src/internal/log.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { migrate } from "../../../src/server/state/engine/schema.js";
import { parseJobSpec } from "../../../src/api/specs/index.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { readFileSync } from "node:fs";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { makeNode } from "../../builders/node.js";
import { csiJob, plainJob, pluginJob } from "../../builders/job.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { makeVolume } from "../../builders/volume.js";
import { tempDir } from "../../helpers/temp_dir.js";
import { intentOf } from "../../../src/structs/volume_intent.js";

const SECRET = "hunter2-quarantine";

function recordingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = {
    lines,
    debug: () => undefined,
    info: (m: string, f?: object) => lines.push(`INFO ${m} ${JSON.stringify(f)}`),
    warn: (m: string, f?: object) => lines.push(`WARN ${m} ${JSON.stringify(f)}`),
    error: (m: string, f?: object) => lines.push(`ERROR ${m} ${JSON.stringify(f)}`),
    child: () => log,
  };
  return log;
}

/** A store with nodes running plugin p1, a system plugin job, a CSI job placed with a claim, evals. */
async function populate(dir: string): Promise<void> {
  const s = new SqliteStateStore(dir);
  const sched = new Scheduler(s, nullLogger);
  const plugins = { p1: nodePluginInfo("p1") };
  await s.txn((tx) => {
    tx.putNode(makeNode("n1", { CSINodePlugins: plugins }));
    tx.putNode(makeNode("n2", { CSINodePlugins: plugins }));
    tx.putVolume(makeVolume("vol1"));
    tx.putVolume(makeVolume("vol2", { Secrets: { password: SECRET } }));
    tx.putJob(pluginJob("plug"));
    tx.putJob(csiJob("web"));
    tx.putJob(plainJob("other"));
  });
  for (const id of ["plug", "web", "other"]) await sched.evaluate("default", id);
  await sched.stop();
  s.close();
}

function edit(dir: string, fn: (db: Database.Database) => void): void {
  const db = new Database(path.join(dir, "state.db"));
  try {
    fn(db);
  } finally {
    db.close();
  }
}

/** Rewrites one stored record's JSON through `change` (which may return any text). */
function poison(
  db: Database.Database,
  table: string,
  where: string,
  change: (rec: Record<string, unknown>) => unknown,
): void {
  const row = db.prepare(`SELECT rowid, json FROM ${table} WHERE ${where}`).get() as {
    rowid: number;
    json: string;
  };
  assert.ok(row, `${table} ${where} exists`);
  const next = change(JSON.parse(row.json) as Record<string, unknown>);
  db.prepare(`UPDATE ${table} SET json = ? WHERE rowid = ?`).run(
    typeof next === "string" ? next : JSON.stringify(next),
    row.rowid,
  );
}

test("quarantine: every record the store wrote through its own paths loads; reopening changes nothing", async () => {
  const dir = tempDir("berth-q-");
  await populate(dir);
  const before = new SqliteStateStore(dir);
  const index = before.index();
  assert.ok(before.listAllocs().length >= 3, "allocs were placed");
  assert.ok(before.listEvals().length >= 3, "evals were recorded");
  before.close();
  const log = recordingLog();
  const s = new SqliteStateStore(dir, { log });
  assert.deepEqual(s.quarantined(), []);
  assert.equal(s.index(), index, "a clean open writes nothing");
  assert.match(log.lines.join("\n"), /INFO state store opened .*"quarantined_now":0/);
  s.close();
});

test("quarantine: poisoned records of every table are moved out with their errors; derived rows follow", async () => {
  const dir = tempDir("berth-q-");
  await populate(dir);
  let index = 0;
  edit(dir, (db) => {
    index = (db.prepare("SELECT value FROM meta WHERE key = 'index'").get() as { value: number }).value;
    poison(db, "jobs", "id = 'web'", (j) => ({
      ...j,
      TaskGroups: [{ ...(j.TaskGroups as object[])[0], Count: 1e300 }],
    }));
    poison(db, "jobs", "id = 'plug'", () => `{"ID":"plug","Secrets":"${SECRET}",`);
    poison(db, "volumes", "id = 'vol2'", (v) => ({ ...v, Capacity: 1e300 }));
    poison(db, "nodes", "id = 'n2'", (n) => ({ ...n, CSINodePlugins: undefined }));
    // An alloc's job copy is stored apart from it (sqlite_alloc_jobs.ts) and checked with it.
    poison(db, "alloc_jobs", "key = (SELECT job_key FROM allocs WHERE job_id = 'other')", (j) => ({
      ...j,
      TaskGroups: "g",
    }));
    // A job copy that only breaks a rule (not what is read of it) loads: its alloc is running work.
    poison(db, "alloc_jobs", "key = (SELECT job_key FROM allocs WHERE job_id = 'web')", (j) => ({
      ...j,
      Priority: 1e9,
    }));
    poison(db, "evals", "job_id = 'other'", (e) => ({ ...e, Status: 42 }));
    poison(db, "plugins", "id = 'p1'", () => "not json");
  });
  const log = recordingLog();
  const s = new SqliteStateStore(dir, { log });

  const got = s.quarantined();
  const errorOf = (table: string, key?: string) =>
    got.find((q) => q.table === table && (key === undefined || q.key === key))?.error ?? "";
  const otherAlloc = got.find((q) => q.table === "allocs")?.key;
  const otherEval = got.find((q) => q.table === "evals")?.key;
  assert.deepEqual(got.map((q) => `${q.table}/${q.namespace}/${q.key}`).sort(), [
    `allocs//${otherAlloc}`,
    `evals//${otherEval}`,
    "jobs/default/plug",
    "jobs/default/web",
    "nodes//n2",
    "plugins//p1",
    "volumes/default/vol2",
  ]);
  // Each error names the field and the problem, as the API's 400s do.
  assert.equal(errorOf("jobs", "web"), "Job.TaskGroups[0].Count: must be at most 10000");
  assert.match(errorOf("jobs", "plug"), /^stored JSON does not parse \(at position \d+\)$/);
  assert.match(errorOf("volumes"), /^Volume\.Capacity: must be at most \d+/);
  assert.equal(errorOf("nodes"), "Node.CSINodePlugins: must be an object");
  assert.equal(errorOf("allocs"), "Allocation.Job.TaskGroups: must be an array");
  assert.equal(s.allocsByJob("default", "web")[0]?.Job.Priority, 1e9);
  assert.equal(errorOf("evals"), "Evaluation.Status: must be a string");
  assert.equal(errorOf("plugins"), "stored JSON does not parse");
  // Gone from the live tables...
  assert.deepEqual(
    s.listJobs().map((j) => j.ID),
    ["other"],
  );
  assert.deepEqual(
    s.listNodes().map((n) => n.ID),
    ["n1"],
  );
  assert.deepEqual(
    s.listVolumes().map((v) => v.ID),
    ["vol1"],
  );
  assert.equal(s.getAlloc(otherAlloc!), undefined);
  assert.equal(s.getEval(otherEval!), undefined);
  // ...and from what was derived from them: p1 is rebuilt from what is left (n1's instance, no job).
  const p1 = s.getPlugin("p1");
  assert.ok(p1, "the plugin is rebuilt from its sources");
  assert.deepEqual(Object.keys(p1.Nodes), ["n1"]);
  assert.deepEqual(p1.NodeJobs, {});
  assert.equal(p1.NodesHealthy, 1);
  // One write: the index moved, and with it every table the pass changed.
  assert.equal(s.index(), index + 1);
  for (const table of ["jobs", "nodes", "allocs", "volumes", "evals", "plugins"] as const) {
    assert.equal(s.tableIndex(table), index + 1, table);
  }
  // One error line per record, a summary, and never the stored JSON (the secret in it).
  const text = log.lines.join("\n");
  assert.equal(log.lines.filter((l) => l.startsWith("ERROR stored record cannot be loaded")).length, 7);
  assert.match(text, /WARN state store opened with quarantined records .*"quarantined_now":7/);
  assert.ok(!text.includes(SECRET), "no secret in the log");
  assert.ok(!JSON.stringify(s.quarantined()).includes(SECRET), "no secret in the list");
  // The store works on: writes through the writer touch the rebuilt plugin without tripping.
  await s.txn((tx) => tx.putJob(pluginJob("plug2")));
  assert.deepEqual(Object.keys(s.getPlugin("p1")!.NodeJobs.default ?? {}), ["plug2"]);
  s.close();

  const again = new SqliteStateStore(dir, { log: recordingLog() });
  assert.equal(again.quarantined().length, 7, "entries are kept across opens");
  const idx = again.index();
  assert.equal(await again.dropQuarantined("jobs", "default", "web"), true);
  assert.equal(await again.dropQuarantined("jobs", "default", "web"), false);
  assert.equal(again.quarantined().length, 6);
  assert.equal(again.index(), idx, "the second open is clean");
  again.close();
});

test("quarantine: broken derived rows (a plugin use, an instance) are derived again from their job and node", async () => {
  const dir = tempDir("berth-q-");
  await populate(dir);
  const plugBefore = (() => {
    const s = new SqliteStateStore(dir);
    const p = s.getPlugin("p1");
    s.close();
    return p;
  })();
  edit(dir, (db) => {
    db.prepare("UPDATE plugin_jobs SET json = '{}' WHERE job_id = 'plug'").run();
    db.prepare(`UPDATE plugin_instances SET node = '"x"' WHERE node_id = 'n2'`).run();
  });
  const log = recordingLog();
  const s = new SqliteStateStore(dir, { log });
  assert.deepEqual(s.quarantined(), []);
  assert.deepEqual(s.getPlugin("p1"), plugBefore, "the plugin is unchanged: its sources were intact");
  assert.match(log.lines.join("\n"), /"rederived":2/);
  // The re-derived rows work for the writer: the job's and the node's next changes update the plugin.
  await s.txn((tx) => {
    tx.deleteJob("default", "plug");
    tx.deleteNode("n2");
  });
  assert.deepEqual(s.getPlugin("p1")?.NodeJobs, {});
  assert.deepEqual(Object.keys(s.getPlugin("p1")?.Nodes ?? {}), ["n1"]);
  s.close();
});

test("quarantine: if the check itself fails, nothing of it is written and the store opens anyway", async () => {
  const dir = tempDir("berth-q-");
  await populate(dir);
  edit(dir, (db) => {
    // The pass's own write fails (as a full disk or a bug would make it).
    db.exec("CREATE TRIGGER no_delete BEFORE DELETE ON jobs BEGIN SELECT RAISE(ABORT, 'refused'); END");
    poison(db, "jobs", "id = 'other'", (j) => ({ ...j, Priority: 1e9 }));
  });
  const log = recordingLog();
  const s = new SqliteStateStore(dir, { log });
  assert.match(log.lines.join("\n"), /ERROR checking the stored records failed; starting without the check/);
  assert.equal(s.getJob("default", "other")?.Priority, 1e9, "the pass rolled back whole");
  assert.deepEqual(s.quarantined(), []);
  s.close();
});

test("quarantine: a file from an older schema with an unreadable record migrates, then quarantines it", () => {
  const dir = tempDir("berth-q-");
  edit(dir, (db) => {
    migrate(db, 1);
    db.prepare("INSERT INTO jobs (namespace, id, json) VALUES ('default', 'bad', '{oops')").run();
    db.prepare(
      "INSERT INTO allocs (id, namespace, node_id, job_id, json) VALUES ('a1', 'default', 'n1', 'bad', '[')",
    ).run();
    db.prepare("INSERT INTO plugins (id, json) VALUES ('p9', 'nope')").run();
  });
  const s = new SqliteStateStore(dir);
  assert.deepEqual(
    s.quarantined().map((q) => [q.table, q.key]),
    [
      ["jobs", "bad"],
      ["allocs", "a1"],
      ["plugins", "p9"],
    ].sort(),
  );
  assert.deepEqual(s.listJobs(), []);
  assert.deepEqual(s.listPlugins(), []);
  s.close();
});

/** Jobs of many shapes the API accepts: what the validator stores must pass it again, unchanged. */
const JOB_SHAPES: unknown[] = [
  {
    ID: "batchy",
    Type: "batch",
    Priority: 70,
    Datacenters: ["dc1", "dc2"],
    Reschedule: {
      Attempts: 3,
      Interval: 3_600e9,
      Delay: 10e9,
      DelayFunction: "exponential",
      MaxDelay: 600e9,
    },
    Constraints: [{ LTarget: "${node.class}", RTarget: "fast", Operand: "=" }],
    TaskGroups: [
      {
        Name: "g",
        Count: 3,
        RestartPolicy: { Attempts: 1, Interval: 600e9, Delay: 20e9, Mode: "delay" },
        ReschedulePolicy: { Attempts: 5, Unlimited: false },
        Volumes: {
          data: {
            Type: "csi",
            Source: "vol",
            PerAlloc: true,
            AccessMode: "multi-node-multi-writer",
            AttachmentMode: "file-system",
            MountOptions: { FSType: "ext4", MountFlags: ["noatime"] },
          },
          scratch: { Type: "host", Source: "scratch", ReadOnly: true },
        },
        Tasks: [
          {
            Name: "t",
            Driver: "docker",
            Config: {
              image: "busybox",
              args: ["-c", "sleep 1"],
              labels: { a: "1" },
              mount: [{ type: "bind", source: "s", target: "/t" }],
            },
            Env: { A: "1" },
            KillTimeout: 10e9,
            RestartPolicy: { Attempts: 0, Mode: "fail" },
            VolumeMounts: [
              { Volume: "data", Destination: "/data", PropagationMode: "host-to-task" },
              { Volume: "scratch", Destination: "/scratch", ReadOnly: true },
            ],
            Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "==" }],
          },
        ],
      },
    ],
  },
  {
    ID: "plugin-monolith",
    Type: "system",
    TaskGroups: [
      {
        Name: "p",
        Tasks: [
          {
            Name: "plugin",
            Driver: "exec",
            CSIPluginConfig: {
              ID: "hp",
              Type: "monolith",
              MountDir: "/csi",
              StagePublishBaseDir: "/local/csi",
              HealthTimeout: 60e9,
            },
          },
        ],
      },
    ],
  },
  {
    ID: "stopped",
    Stop: true,
    TaskGroups: [{ Name: "g", Count: 0, Tasks: [{ Name: "t", Driver: "exec" }] }],
  },
];

test("quarantine: jobs of every shape the API accepts (and the examples) load again after a restart", async () => {
  const specs = [...JOB_SHAPES];
  for (const f of ["examples/hostpath/plugin.hcl", "examples/hostpath/job.hcl"]) {
    specs.push(await parseJobSpec(f, readFileSync(f, "utf8")));
  }
  const dir = tempDir("berth-q-");
  const s = new SqliteStateStore(dir);
  for (const spec of specs) {
    const job = validateJob(spec);
    assert.deepEqual(validateJob(job), job, `validating ${job.ID} again changes nothing`);
    // As JobEndpoint.register stores it.
    await s.txn((tx) => tx.putJob({ ...job, Status: "running", Version: 2, SubmitTime: Date.now() * 1e6 }));
  }
  s.close();
  const again = new SqliteStateStore(dir);
  assert.deepEqual(again.quarantined(), []);
  assert.equal(again.listJobs().length, specs.length);
  again.close();
});

test("quarantine: a create intent that cannot be loaded is moved out; a good one stays", async () => {
  const dir = tempDir("berth-q-");
  await populate(dir);
  const vol = makeVolume("vol9", { Name: "vol9", ExternalID: "" });
  edit(dir, (db) => {
    const put = db.prepare("INSERT INTO volume_intents (namespace, id, json) VALUES (?, ?, ?)");
    // As the create path writes them (CreateTime in Unix nanoseconds, past 2^53).
    put.run("default", "vol9", JSON.stringify(intentOf(vol, Date.now())));
    const bad = intentOf({ ...vol, ID: "vol8", Name: "vol8", Capacity: 1e300 }, Date.now());
    put.run("default", "vol8", JSON.stringify(bad));
  });
  const s = new SqliteStateStore(dir, { log: recordingLog() });
  const got = s.quarantined();
  assert.deepEqual(
    got.map((q) => `${q.table}/${q.namespace}/${q.key}`),
    ["intents/default/vol8"],
  );
  assert.match(got[0]!.error, /^Volume\.Capacity: must be at most \d+/);
  assert.deepEqual(
    s.listVolumeIntents().map((i) => i.ID),
    ["vol9"],
  );
  s.close();
});
