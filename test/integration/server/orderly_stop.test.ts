/**
 * An orderly server stop: the store is closed only after every pass in flight has finished, so a
 * stop during a scheduler pass (here: the retry of many blocked jobs) completes without a
 * "database connection is not open" error, and nothing starts a pass afterwards.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Logger } from "../../../src/internal/log.js";
import { Scheduler } from "../../../src/server/scheduler/scheduler.js";
import { Server } from "../../../src/server/server.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { BerthError } from "../../../src/structs/errors.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import { makeNode } from "../../builders/node.js";
import { connectAgent, http } from "./fake_agent.js";

const JOBS = 60;

function recordingLog(): Logger & { errors: string[] } {
  const errors: string[] = [];
  const log = {
    errors,
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (msg: string, fields: Record<string, unknown> = {}) =>
      errors.push(
        `${msg} ${JSON.stringify(fields, (_k, v: unknown) => (v instanceof Error ? v.message : v))}`,
      ),
    child: () => log,
  };
  return log;
}

/** A job no node can take (it needs a driver nobody has), so it stays blocked. */
function blockedJob(id: string) {
  return validateJob({
    ID: id,
    Type: "service",
    TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "no-such-driver" }] }],
  });
}

function tempDir(t: { after(fn: () => unknown): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-stop-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("scheduler.stop() waits for the blocked-job retry in flight; the store closes after it", async (t) => {
  const store = new SqliteStateStore(tempDir(t));
  const log = recordingLog();
  const scheduler = new Scheduler(store, log);
  for (let i = 0; i < JOBS; i++) {
    const job = blockedJob(`job-${i}`);
    await store.txn((tx) => tx.putJob(job));
    await scheduler.evaluate(job.Namespace, job.ID);
  }
  assert.ok(scheduler.isBlocked("default", "job-0"));

  const retry = scheduler.retryBlocked();
  await scheduler.stop();
  store.close();
  await retry;

  assert.deepEqual(log.errors, [], "no pass met a closed store");
  await assert.rejects(
    scheduler.evaluate("default", "job-0"),
    (e: unknown) => e instanceof BerthError && e.code === "ERR_ABORTED",
    "no pass starts after stop",
  );
});

test("Server.stop() with passes and requests in flight stops cleanly: no database error", async (t) => {
  const log = recordingLog();
  const server = new Server({ dataDir: tempDir(t), httpAddr: "127.0.0.1:0", log, heartbeatTtlMs: 60_000 });
  await server.start();
  const base = server.httpAddress;
  for (let i = 0; i < JOBS; i++) {
    const res = await http(base, "PUT", "/v1/jobs", { Job: blockedJob(`job-${i}`) });
    assert.equal(res.status, 200, res.text);
  }
  const peer = await connectAgent(base);
  // Registering a node retries every blocked job in the background, and each registration below
  // runs a pass; stop once the first has answered, while the others are still running.
  await peer.call("Node.Register", { Node: makeNode("n1") });
  const more = Array.from({ length: JOBS }, (_, i) =>
    fetch(`${base}/v1/jobs`, {
      method: "PUT",
      body: JSON.stringify({ Job: blockedJob(`more-${i}`) }),
    }).then(
      (r) => r.status,
      () => "cut",
    ),
  );
  await Promise.race(more);
  await server.stop();
  peer.close();
  await Promise.all(more);
  assert.deepEqual(log.errors, [], "no route, loop or pass met a closed store");
});
