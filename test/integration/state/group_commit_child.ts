/**
 * The child process of group_commit_crash.test.ts: writes to a SQLite state store and prints
 * "ack <volume>" on stdout (synchronously) for each txn once its promise has resolved, i.e. once
 * the store acknowledged it. It never exits by itself: the test kills it.
 *
 *   node group_commit_child.js <dataDir> mid-batch   two batches of ten; the 6th txn of the second
 *                                                     SIGKILLs the process inside the open batch
 *   node group_commit_child.js <dataDir> load        16 writers in a loop, until killed
 */
import fs from "node:fs";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { makeVolume } from "../../builders/volume.js";

const [dir, mode] = process.argv.slice(2);
// The suite's runner (`node --test dist/test/`) loads every file, this one too, with no arguments:
// there is nothing to do then.
if (dir === undefined) process.exit(0);
if (mode !== "mid-batch" && mode !== "load") throw new Error("usage: <dataDir> mid-batch|load");
// No time bound on a batch: on a loaded machine ten sealed volume writes may take more than the
// default's few milliseconds, and the first test counts its batches.
const store = new SqliteStateStore(dir, { groupCommit: { maxBatchMs: 60_000 } });
const ack = (id: string) => fs.writeSync(1, `ack ${id}\n`);

if (mode === "mid-batch") {
  await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      store.txn((tx) => tx.putVolume(makeVolume(`a${i}`))).then(() => ack(`a${i}`)),
    ),
  );
  fs.writeSync(1, `batches ${store.groupCommitStats().batches}\n`);
  for (let i = 0; i < 10; i++) {
    void store
      .txn((tx) => {
        tx.putVolume(makeVolume(`b${i}`));
        // Dies here, its batch's transaction open, b0..b5 written inside it, nothing committed.
        if (i === 5) process.kill(process.pid, "SIGKILL");
      })
      .then(() => ack(`b${i}`));
  }
} else {
  let n = 0;
  await Promise.all(
    Array.from({ length: 16 }, async (_, w) => {
      for (;;) {
        const id = `w${w}-${n++}`;
        await store.txn((tx) => tx.putVolume(makeVolume(id)));
        ack(id);
      }
    }),
  );
}
