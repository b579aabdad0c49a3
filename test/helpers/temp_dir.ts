/** Temp dirs for tests that never mount: each is removed when the test process exits. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const madeDirs: string[] = [];
// These tests never mount (their CSI clients are fakes), so removing the dirs at exit is safe.
process.once("exit", () => {
  for (const d of madeDirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A temp dir removed when the test process exits. */
export function tempDir(prefix = "berth-client-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  madeDirs.push(dir);
  return dir;
}
