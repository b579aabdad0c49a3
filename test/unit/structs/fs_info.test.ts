/**
 * The pure parts of `alloc fs` answers: Go's os.FileMode.String() from a Unix st_mode (file_mode.ts)
 * and the content-type guess of Nomad's stat (content_sniff.ts).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { goFileMode } from "../../../src/structs/file_mode.js";
import { sniffContentType } from "../../../src/structs/content_sniff.js";

test("goFileMode prints Go's letters and permission bits", () => {
  assert.equal(goFileMode(0o100644), "-rw-r--r--");
  assert.equal(goFileMode(0o040755), "drwxr-xr-x");
  assert.equal(goFileMode(0o041777), "dtrwxrwxrwx");
  assert.equal(goFileMode(0o120777), "Lrwxrwxrwx");
  assert.equal(goFileMode(0o010644), "prw-r--r--");
  assert.equal(goFileMode(0o140755), "Srwxr-xr-x");
  assert.equal(goFileMode(0o060660), "Drw-rw----");
  assert.equal(goFileMode(0o020666), "Dcrw-rw-rw-");
  assert.equal(goFileMode(0o104755), "urwxr-xr-x");
  assert.equal(goFileMode(0o102755), "grwxr-xr-x");
  assert.equal(goFileMode(0o100000), "----------");
});

test("sniffContentType: .json by name, signatures, text vs binary, directories", () => {
  const b = (s: string | number[]) => (typeof s === "string" ? Buffer.from(s) : Buffer.from(s));
  assert.equal(sniffContentType("x.json", false, b("not json")), "application/json");
  assert.equal(sniffContentType("d", true, null), "application/octet-stream");
  assert.equal(sniffContentType("empty", false, b("")), "application/octet-stream");
  assert.equal(sniffContentType("a.txt", false, b("hello\n")), "text/plain; charset=utf-8");
  assert.equal(sniffContentType("a", false, b("  <!DOCTYPE html><html>")), "text/html; charset=utf-8");
  assert.equal(sniffContentType("a", false, b("<?xml version=")), "text/xml; charset=utf-8");
  assert.equal(sniffContentType("a", false, b("%PDF-1.4")), "application/pdf");
  assert.equal(
    sniffContentType("a", false, b([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0])),
    "image/png",
  );
  assert.equal(sniffContentType("a", false, b([0x1f, 0x8b, 0x08, 0])), "application/x-gzip");
  assert.equal(
    sniffContentType("a", false, b([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0])),
    "application/octet-stream",
  );
});
