/**
 * What the check at open (src/server/state/quarantine/quarantine.ts) costs: a state file with N jobs, one
 * running alloc each (its job copy checked too) and one eval each, written through the store, then
 * opened again. Prints the check's own time (the store's summary line) and the whole open, both
 * from a second open too (warm page cache), and the floor: reading and parsing the same records.
 *
 *   node dist/bench/store_open.js [jobs=10000]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import type { Logger } from "../src/internal/log.js";
import { SqliteStateStore } from "../src/server/state/local/sqlite_store.js";
import { validateJob } from "../src/structs/job_validate.js";
import { allocOf } from "../test/builders/alloc.js";
import { makeNode } from "../test/builders/node.js";

const N = Number(process.argv[2] ?? 10_000);

function summaryLog(out: { checkMs?: number; records?: number }): Logger {
  const log: Logger = {
    debug: () => undefined,
    info: (m, f) => {
      if (m.startsWith("state store opened"))
        Object.assign(out, { checkMs: f?.check_ms, records: f?.records });
    },
    warn: (m, f) => log.info(m, f),
    error: () => undefined,
    child: () => log,
  };
  return log;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-bench-open-"));
  try {
    const s = new SqliteStateStore(dir);
    await s.txn((tx) => {
      tx.putNode(makeNode("n1"));
      for (let i = 0; i < N; i++) {
        const job = tx.putJob(
          validateJob({
            ID: `job-${i}`,
            TaskGroups: [
              {
                Name: "g",
                Volumes: {
                  data: {
                    Type: "csi",
                    Source: `vol-${i}`,
                    AccessMode: "single-node-writer",
                    AttachmentMode: "file-system",
                  },
                },
                Tasks: [
                  {
                    Name: "t",
                    Driver: "exec",
                    Env: { A: "1" },
                    VolumeMounts: [{ Volume: "data", Destination: "/data" }],
                  },
                ],
              },
            ],
          }),
        );
        tx.putAlloc(allocOf(job, "n1"));
      }
    });
    s.close();
    for (const round of ["first open", "second open"]) {
      const out: { checkMs?: number; records?: number } = {};
      const t0 = performance.now();
      const again = new SqliteStateStore(dir, { log: summaryLog(out) });
      const openMs = performance.now() - t0;
      const quarantined = again.quarantined().length;
      again.close();
      console.log(
        `${round}: ${out.records} records (${N} jobs, ${N} allocs): check ${out.checkMs} ms, whole open ${Math.round(openMs)} ms, quarantined ${quarantined}`,
      );
    }
    // The floor: reading and parsing every job and alloc once, as any start that reads them does.
    const db = new Database(path.join(dir, "state.db"), { readonly: true });
    const t0 = performance.now();
    let n = 0;
    for (const table of ["jobs", "allocs"]) {
      for (const r of db.prepare(`SELECT json FROM ${table}`).iterate() as Iterable<{ json: string }>) {
        JSON.parse(r.json);
        n++;
      }
    }
    db.close();
    console.log(`read + JSON.parse alone: ${n} records in ${Math.round(performance.now() - t0)} ms`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
