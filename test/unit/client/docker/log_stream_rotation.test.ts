/**
 * A docker task's output copied from the Engine's stream (drivers/docker/log_stream.ts pumpLogs)
 * into the task's log files rotates as its `logs` stanza says, as the process drivers' logmon
 * does; a re-attached stream's resume point is the newest rotated file's last write.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { lastLogWriteNs, pumpLogs } from "../../../../src/client/drivers/docker/log_stream.js";

let root: string;
before(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-dockerlogs-")));
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

function frame(stream: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(`2026-11-28T17:58:20.000000001Z ${text}`);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

describe("docker log rotation", () => {
  it("rotates each stream into <task>.<type>.<n>, keeping maxFiles", async () => {
    const logs = path.join(root, "alloc1", "web", "logs");
    fs.mkdirSync(logs, { recursive: true });
    const files = {
      stdoutPath: path.join(logs, "web.stdout.0"),
      stderrPath: path.join(logs, "web.stderr.0"),
      maxFiles: 2,
      maxFileBytes: 4,
    };
    const frames = [frame(1, "abcdef"), frame(2, "err"), frame(1, "ghijkl")];
    await pumpLogs(Readable.from(frames), files, 0n);
    const read = (f: string) => fs.readFileSync(path.join(logs, f), "utf8");
    assert.deepEqual(fs.readdirSync(logs).sort(), ["web.stderr.0", "web.stdout.1", "web.stdout.2"]);
    assert.deepEqual(
      [read("web.stdout.1"), read("web.stdout.2"), read("web.stderr.0")],
      ["efgh", "ijkl", "err"],
    );
    const resume = await lastLogWriteNs(files.stdoutPath, files.stderrPath);
    const newest = fs.statSync(path.join(logs, "web.stdout.2"), { bigint: true }).mtimeNs;
    assert.ok(resume > newest, "the resume point is after the newest file's last write");
  });
});
