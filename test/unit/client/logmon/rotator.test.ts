/**
 * The rotation writer (client/logmon/rotator.ts) and the multi-file reader (multi_file_log.ts) on
 * a temp logs dir: writes split exactly at max_file_size, at most max_files kept (oldest deleted),
 * a new writer continues the newest file; reads from the start or the end span files, a cursor
 * (index) goes on in the next file only once the last is whole, and a file rotated away is skipped.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { RotatingWriter } from "../../../../src/client/logmon/rotator.js";
import { readLogWindow, type LogDir } from "../../../../src/client/logmon/multi_file_log.js";

let root: string;
let n = 0;

before(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-rotator-")));
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** A fresh logs dir `<root>/<case>/web/logs`, as the rotator and reader address it. */
function logDir(): LogDir & { dir: string } {
  const anchor = path.join(root, `case${n++}`);
  fs.mkdirSync(path.join(anchor, "web", "logs"), { recursive: true });
  return { anchor, rel: ["web", "logs"], base: "web.stdout", dir: path.join(anchor, "web", "logs") };
}

function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir).sort()) out[f] = fs.readFileSync(path.join(dir, f), "utf8");
  return out;
}

describe("RotatingWriter", () => {
  it("splits writes at max_file_size and keeps the newest max_files files", async () => {
    const d = logDir();
    const w = await RotatingWriter.open({ ...d, maxFiles: 2, maxFileBytes: 4 });
    await w.write(Buffer.from("abc"));
    await w.write(Buffer.from("defghij"));
    // With max_files 2, file 0 went when file 2 was started.
    assert.deepEqual(files(d.dir), { "web.stdout.1": "efgh", "web.stdout.2": "ij" });
    await w.write(Buffer.from("klmnopqrstu"));
    assert.deepEqual(files(d.dir), { "web.stdout.4": "qrst", "web.stdout.5": "u" });
    assert.equal(w.currentIndex, 5);
    await w.close();
  });

  it("continues the newest file after a restart, rotating first when it is full", async () => {
    const d = logDir();
    let w = await RotatingWriter.open({ ...d, maxFiles: 3, maxFileBytes: 4 });
    await w.write(Buffer.from("abcdef"));
    await w.close();
    w = await RotatingWriter.open({ ...d, maxFiles: 3, maxFileBytes: 4 });
    assert.equal(w.currentIndex, 1);
    await w.write(Buffer.from("gh"));
    await w.close();
    assert.deepEqual(files(d.dir), { "web.stdout.0": "abcd", "web.stdout.1": "efgh" });
    w = await RotatingWriter.open({ ...d, maxFiles: 3, maxFileBytes: 4 });
    await w.write(Buffer.from("i"));
    await w.close();
    assert.deepEqual(files(d.dir), { "web.stdout.0": "abcd", "web.stdout.1": "efgh", "web.stdout.2": "i" });
    // A smaller max_files on a later start deletes down to it at once.
    w = await RotatingWriter.open({ ...d, maxFiles: 1, maxFileBytes: 4 });
    await w.close();
    assert.deepEqual(files(d.dir), { "web.stdout.2": "i" });
  });

  it("refuses a file the task replaced with a link", async () => {
    const d = logDir();
    const target = path.join(root, `outside${n++}`);
    fs.writeFileSync(target, "host file\n");
    fs.symlinkSync(target, path.join(d.dir, "web.stdout.0"));
    await assert.rejects(
      RotatingWriter.open({ ...d, maxFiles: 2, maxFileBytes: 4 }),
      /does not follow links/,
    );
    assert.equal(fs.readFileSync(target, "utf8"), "host file\n");
  });
});

describe("readLogWindow", () => {
  /** web.stdout.3 = "0123", .4 = "4567", .5 = "89" (0..2 rotated away). */
  function threeFiles(): LogDir & { dir: string } {
    const d = logDir();
    fs.writeFileSync(path.join(d.dir, "web.stdout.3"), "0123");
    fs.writeFileSync(path.join(d.dir, "web.stdout.4"), "4567");
    fs.writeFileSync(path.join(d.dir, "web.stdout.5"), "89");
    fs.writeFileSync(path.join(d.dir, "web.stderr.9"), "not this stream");
    fs.writeFileSync(path.join(d.dir, "web.stdout.07"), "not a file of ours");
    return d;
  }

  /** Everything from `first` on, following the cursor as the HTTP route does. */
  async function readAll(d: LogDir, first: Parameters<typeof readLogWindow>[1]): Promise<string> {
    let w = await readLogWindow(d, first);
    let out = w.data.toString();
    for (;;) {
      let next = { index: w.index, offset: w.offset + w.data.length };
      if (next.offset >= w.size && w.next) next = { index: w.index + 1, offset: 0 };
      if (next.offset >= w.size && next.index === w.index) return out;
      w = await readLogWindow(d, { origin: "start", limit: 3, ...next });
      out += w.data.toString();
    }
  }

  it("counts an offset from the start across the kept files", async () => {
    const d = threeFiles();
    const w = await readLogWindow(d, { origin: "start", offset: 5, limit: 100 });
    assert.deepEqual([w.index, w.offset, w.data.toString(), w.size, w.next], [4, 1, "567", 4, true]);
    assert.equal(await readAll(d, { origin: "start", offset: 0, limit: 3 }), "0123456789");
    assert.equal(await readAll(d, { origin: "start", offset: 2, limit: 3 }), "23456789");
    // Past the end: the end of the newest file.
    const past = await readLogWindow(d, { origin: "start", offset: 99, limit: 100 });
    assert.deepEqual([past.index, past.offset, past.data.length, past.next], [5, 2, 0, false]);
  });

  it("counts an offset from the end back across files (alloc logs -tail)", async () => {
    const d = threeFiles();
    assert.equal(await readAll(d, { origin: "end", offset: 3, limit: 100 }), "789");
    assert.equal(await readAll(d, { origin: "end", offset: 7, limit: 2 }), "3456789");
    assert.equal(await readAll(d, { origin: "end", offset: 1000, limit: 100 }), "0123456789");
    const w = await readLogWindow(d, { origin: "end", offset: 2, limit: 100 });
    assert.deepEqual([w.index, w.offset, w.data.toString()], [5, 0, "89"]);
  });

  it("reads a cursor's file; one rotated away reads as the next kept file from 0", async () => {
    const d = threeFiles();
    const w = await readLogWindow(d, { origin: "end", offset: 0, index: 4, limit: 100 });
    assert.deepEqual([w.index, w.offset, w.data.toString(), w.next], [4, 0, "4567", true]);
    const gone = await readLogWindow(d, { origin: "start", offset: 3, index: 1, limit: 100 });
    assert.deepEqual([gone.index, gone.offset, gone.data.toString()], [3, 0, "0123"]);
    // The newest file says there is nothing after it: a follower waits there.
    const last = await readLogWindow(d, { origin: "start", offset: 2, index: 5, limit: 100 });
    assert.deepEqual([last.index, last.data.length, last.size, last.next], [5, 0, 2, false]);
  });

  it("follows a live writer across rotations without losing or repeating a byte", async () => {
    const d = logDir();
    const w = await RotatingWriter.open({ ...d, maxFiles: 3, maxFileBytes: 5 });
    let got = "";
    let cur: { index: number; offset: number } | undefined;
    let sent = "";
    for (let i = 0; i < 40; i++) {
      const text = `<${i}>`;
      sent += text;
      await w.write(Buffer.from(text));
      // A reader that keeps up (reads after every write) sees everything, in order.
      for (;;) {
        const r = await readLogWindow(d, {
          origin: "start",
          offset: cur?.offset ?? 0,
          index: cur?.index,
          limit: 4,
        });
        got += r.data.toString();
        cur = { index: r.index, offset: r.offset + r.data.length };
        if (cur.offset >= r.size && r.next) cur = { index: r.index + 1, offset: 0 };
        else if (cur.offset >= r.size) break;
      }
    }
    await w.close();
    assert.equal(got, sent);
    assert.ok(Object.keys(files(d.dir)).length <= 3);
  });

  it("is an empty read of file 0 before anything was written", async () => {
    const d = logDir();
    const w = await readLogWindow(d, { origin: "end", offset: 10, limit: 100 });
    assert.deepEqual([w.index, w.offset, w.size, w.data.length, w.next], [0, 0, 0, 0, false]);
  });
});
