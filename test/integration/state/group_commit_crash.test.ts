/**
 * Group commit across a crash: a child process writing to a real SQLite state file is SIGKILLed in
 * the middle of a batch. Reopened, the file holds every txn the store acknowledged, and whole
 * batches only: every record's index is one the store committed (none above its stored index, none
 * missing below it).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { tempDir } from "../../helpers/temp_dir.js";

const CHILD = fileURLToPath(new URL("./group_commit_child.js", import.meta.url));

/**
 * Runs the child; `killAfterAcks` kills it (SIGKILL) once that many acks were read, otherwise it
 * is expected to kill itself. Resolves with what it printed and how it ended.
 */
function runChild(
  dir: string,
  mode: string,
  killAfterAcks?: number,
): Promise<{ acks: string[]; lines: string[]; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, dir, mode], { stdio: ["ignore", "pipe", "pipe"] });
    const lines: string[] = [];
    let stderr = "";
    let buf = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split("\n");
      buf = parts.pop()!;
      lines.push(...parts);
      if (killAfterAcks !== undefined && lines.length >= killAfterAcks) child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (signal !== "SIGKILL") {
        reject(new Error(`child ended with code ${code}, signal ${signal}: ${stderr}`));
        return;
      }
      const acks = lines.filter((l) => l.startsWith("ack ")).map((l) => l.slice(4));
      resolve({ acks, lines, signal });
    });
  });
}

/** What a reopened state file holds: its index and each volume's ModifyIndex. */
function reopen(dir: string): { index: number; volumes: Map<string, number> } {
  const s = new SqliteStateStore(dir);
  try {
    return { index: s.index(), volumes: new Map(s.listVolumes().map((v) => [v.ID, v.ModifyIndex])) };
  } finally {
    s.close();
  }
}

test("group commit crash: killed inside a batch, the file keeps the acknowledged batch and nothing of the open one", async () => {
  const dir = tempDir("berth-group-crash-");
  const { acks, lines } = await runChild(dir, "mid-batch");
  assert.deepEqual(
    acks,
    Array.from({ length: 10 }, (_, i) => `a${i}`),
    "the first batch acknowledged, nothing of the second",
  );
  assert.ok(lines.includes("batches 1"), `the first ten shared one commit: ${lines.join(" | ")}`);
  const { index, volumes } = reopen(dir);
  assert.deepEqual(
    [...volumes.keys()].sort(),
    Array.from({ length: 10 }, (_, i) => `a${i}`).sort(),
    "none of the batch the process died in (b0..b5 were written inside it)",
  );
  assert.equal(index, 10);
});

test("group commit crash: killed under load, every acknowledged write is there, and only whole batches", async () => {
  const dir = tempDir("berth-group-crash-");
  const { acks } = await runChild(dir, "load", 400);
  assert.ok(acks.length >= 400);
  const { index, volumes } = reopen(dir);
  for (const id of acks) assert.ok(volumes.has(id), `acknowledged ${id} is missing after the crash`);
  // One volume per txn, so the committed txns are exactly indexes 1..index: a batch cut in two
  // would leave records above the stored index, or holes below it.
  assert.deepEqual(
    [...volumes.values()].sort((x, y) => x - y),
    Array.from({ length: index }, (_, k) => k + 1),
    "every index up to the stored one, once, and none above it",
  );
});
