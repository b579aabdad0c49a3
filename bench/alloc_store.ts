/**
 * The SQLite store's alloc costs (sqlite_alloc_jobs.ts: allocs stored without their job): one job
 * of N per_alloc CSI allocs written in one txn, each updated as a node's status report does (read,
 * change, put), and read back by job; the stored bytes per alloc; and, measured in the same run, what
 * parsing the same allocs with their job embedded (how they were stored before) costs against the
 * store's read. Nothing here asserts; it measures.
 *
 *   node dist/bench/alloc_store.js [allocs=1000]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { SqliteStateStore } from "../src/server/state/local/sqlite_store.js";
import { alloc, volumeJob } from "../test/conformance/builders.js";

const N = Number(process.argv[2] ?? 1000);
const READS = 20;

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-alloc-store-"));
  try {
    const s = new SqliteStateStore(dir);
    const job = await s.txn((tx) => tx.putJob(volumeJob("web", { count: N, perAlloc: true })));
    const ids = Array.from({ length: N }, (_, i) => `a${String(i).padStart(6, "0")}`);
    let t = performance.now();
    await s.txn((tx) => ids.forEach((id, i) => tx.putAlloc(alloc(id, job, `n${i % 100}`, i))));
    const insertUs = ((performance.now() - t) * 1000) / N;
    t = performance.now();
    await s.txn((tx) => {
      for (const id of ids) tx.putAlloc({ ...tx.getAlloc(id)!, ClientStatus: "running" });
    });
    const updateUs = ((performance.now() - t) * 1000) / N;
    s.allocsByJob("default", "web");
    t = performance.now();
    for (let k = 0; k < READS; k++) s.allocsByJob("default", "web");
    const readMs = (performance.now() - t) / READS;
    const embedded = s.allocsByJob("default", "web").map((a) => JSON.stringify(a));
    t = performance.now();
    for (let k = 0; k < READS; k++) for (const text of embedded) JSON.parse(text);
    const parseEmbeddedMs = (performance.now() - t) / READS;
    s.close();

    const db = new Database(path.join(dir, "state.db"), { readonly: true });
    const { rowBytes, copyBytes } = db
      .prepare(
        "SELECT (SELECT SUM(length(json)) FROM allocs) AS rowBytes, (SELECT SUM(length(json)) FROM alloc_jobs) AS copyBytes",
      )
      .get() as { rowBytes: number; copyBytes: number };
    db.close();
    const embeddedBytes = embedded.reduce((n, text) => n + text.length, 0);

    console.log(`one job of ${N} per_alloc CSI allocs in the SQLite store:`);
    console.log(`  write (new alloc, in one txn):       ${insertUs.toFixed(1)} µs per alloc`);
    console.log(`  status update (read, change, put):   ${updateUs.toFixed(1)} µs per alloc`);
    console.log(
      `  read the job's allocs:               ${readMs.toFixed(1)} ms; parsing the same with their job ` +
        `embedded: ${parseEmbeddedMs.toFixed(1)} ms (${(parseEmbeddedMs / readMs).toFixed(1)}× the read)`,
    );
    console.log(
      `  stored: ${(rowBytes / N).toFixed(0)} B per alloc row + ${copyBytes} B of job copies; ` +
        `embedded: ${(embeddedBytes / N).toFixed(0)} B per alloc`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
